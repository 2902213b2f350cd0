//! The seam between the registry and the protocol modules of `crate::patch`: patch-type negotiation, the one
//! call that turns (live object, patch body) into the new object, and the `managedFields` bookkeeping every
//! write does.

use serde_json::Value;

use crate::kind_info::KindInfo;
use crate::meta::{self, Endpoint};
use crate::patch::apply::{self as ssa, WriteOptions};
use crate::patch::{self, PatchError, PatchType};
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};

fn patch_error(e: PatchError) -> ApiError {
    ApiError::from(e.to_status())
}

/// The patch type of a request's Content-Type; 415 listing the kind's accepted types otherwise (so strategic
/// merge patch on a custom resource is refused as the real server refuses it).
pub fn negotiate(content_type: &str, kind: &KindInfo<'_>) -> ApiResult<PatchType> {
    match PatchType::from_content_type(content_type) {
        Some(t) if PatchType::supported(kind).contains(&t) => Ok(t),
        _ => Err(patch_error(PatchError::UnsupportedMediaType {
            accepted: PatchType::supported(kind)
                .iter()
                .map(|t| t.content_type())
                .collect(),
        })),
    }
}

/// Checks the PATCH query options (`fieldManager` required for apply, `force` only for apply, `dryRun`,
/// `fieldValidation`), worded as upstream.
pub fn validate_options(
    ptype: PatchType,
    manager: Option<&str>,
    force: Option<bool>,
    dry_run: &[String],
    field_validation: Option<&str>,
) -> ApiResult<()> {
    patch::validate_options(ptype, manager, force, dry_run, field_validation).map_err(patch_error)
}

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
fn reset_fields(info: &ResourceInfo, ep: Endpoint) -> &'static [&'static str] {
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

/// One PATCH request as the patch engines need it.
#[derive(Debug, Clone, Copy)]
pub struct PatchInput<'a> {
    /// Patch type from the Content-Type.
    pub ptype: PatchType,
    /// Raw patch body.
    pub body: &'a [u8],
    /// `force=true` (apply only).
    pub force: bool,
    /// Endpoint the patch came through.
    pub ep: Endpoint,
}

/// Applies a patch of any type by `manager` to `live` (`None` only for an apply that creates the object) and
/// returns the patched object, before the update pipeline runs.
///
/// # Errors
/// The Status the real server answers for the patch failure (400, 409 apply conflict, 413, 415, 422).
pub fn apply_to(
    info: &ResourceInfo,
    kind: &KindInfo<'_>,
    live: Option<&Value>,
    input: &PatchInput<'_>,
    manager: &str,
) -> ApiResult<Value> {
    match (input.ptype, live) {
        (PatchType::Apply, live) => {
            let config = ssa::parse_config(input.body).map_err(patch_error)?;
            let now = meta::now();
            let opts = WriteOptions {
                manager,
                subresource: input.ep.subresource(),
                now: &now,
                reset_fields: reset_fields(info, input.ep),
            };
            ssa::apply(live, &config, kind, &opts, input.force).map_err(patch_error)
        }
        (ptype, Some(live)) => {
            patch::apply_patch(ptype, live, input.body, kind).map_err(patch_error)
        }
        (_, None) => Err(ApiError::internal("a non-apply patch needs a live object")),
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
