//! Dynamic admission of one write: the request as admission webhooks see it, and the two points of the
//! preparation where kube-apiserver calls them. Mutating webhooks run after the built-in mutating admission and
//! before validation, and the object they return is decoded and defaulted again; validating webhooks run after
//! validation, right before the commit. Both run inside the preparation, with no store lock held, so a write
//! prepared again after a conflict is admitted again.
//!
//! `mutating` and `validating` are the two points; this module holds what both send.
//!
//! Writes of the server's own controllers (no [`Requester`]) are not sent to webhooks.

mod mutating;
mod validating;

use serde_json::Value;

use super::Requester;
use crate::admission::webhooks::{Operation, Request};
use crate::context::Ctx;
use crate::meta::Endpoint;
use crate::resource::ResourceInfo;

/// One write's attributes, for its admission webhooks.
#[derive(Clone, Copy)]
pub(crate) struct Admission<'a> {
    /// The server.
    pub ctx: &'a Ctx,
    /// The resource written.
    pub info: &'a ResourceInfo,
    /// Its namespace (`""` when cluster-scoped).
    pub ns: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// The endpoint (main or a subresource).
    pub ep: Endpoint,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Who asks.
    pub requester: &'a Requester,
}

impl<'a> Admission<'a> {
    /// The admission of a write by `requester`, or `None` for the server's own writes.
    pub(crate) fn of(
        ctx: &'a Ctx,
        info: &'a ResourceInfo,
        ns: &'a str,
        name: &'a str,
        ep: Endpoint,
        dry_run: bool,
        requester: Option<&'a Requester>,
    ) -> Option<Self> {
        requester.map(|requester| Self {
            ctx,
            info,
            ns,
            name,
            ep,
            dry_run,
            requester,
        })
    }

    fn request<'r>(&'r self, operation: Operation, old: Option<&'r Value>) -> Request<'r> {
        Request {
            operation,
            group: &self.info.group,
            version: &self.info.version,
            kind: &self.info.kind,
            kind_group_version: None,
            resource: &self.info.plural,
            subresource: self.ep.subresource().unwrap_or(""),
            namespace: self.ns,
            name: self.name,
            old_object: old,
            dry_run: self.dry_run,
            options: self.requester.options.clone(),
            user: &self.requester.user,
        }
    }
}
