//! The writer's field ownership: the `managedFields` entry every write but server-side apply records (an
//! `Update` of the fields it changed), after the kind's strategy and before admission, as kube-apiserver does.

use serde_json::Value;

use crate::meta::{self, Endpoint};
use crate::patch::apply::{self as ssa, WriteOptions};
use crate::resource::ResourceInfo;

/// Who writes: the field manager, and whether the write is a server-side apply (which records its own
/// ownership) or an ordinary update.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Writer<'a> {
    /// Field manager.
    pub manager: &'a str,
    /// Whether the new object came out of server-side apply and already carries its `managedFields`.
    pub applied: bool,
}

/// Top-level fields an endpoint ignores: `status` on the main endpoint of a kind with a status subresource,
/// everything but status on `/status`.
pub(super) fn reset_fields(info: &ResourceInfo, ep: Endpoint) -> &'static [&'static str] {
    // A CertificateSigningRequest's spec is the requester's and never changes after create: no writer owns it.
    if ep == Endpoint::Main && crate::kinds::access::certificates::serves(info) {
        return &["spec", "status"];
    }
    match ep {
        Endpoint::Status | Endpoint::Approval => &["spec"],
        Endpoint::Main | Endpoint::Finalize if info.status => &["status"],
        Endpoint::Main | Endpoint::Finalize => &[],
    }
}

/// Records the writer's field ownership in `new` (the object about to be stored): an `Update` entry for every
/// write but server-side apply, whose result already carries its `Apply` entry.
pub(crate) fn record_ownership(
    info: &ResourceInfo,
    live: Option<&Value>,
    new: &mut Value,
    writer: Writer<'_>,
    ep: Endpoint,
) {
    if writer.applied {
        return;
    }
    let now = meta::now();
    let opts = WriteOptions {
        manager: writer.manager,
        subresource: ep.subresource(),
        now: &now,
        reset_fields: reset_fields(info, ep),
    };
    ssa::record_update(live, new, &info.kind_info(), &opts);
}
