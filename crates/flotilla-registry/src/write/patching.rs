//! The seam between the registry and the protocol modules of `crate::patch`: patch-type negotiation and the one
//! call that turns (live object, patch body) into the new object. The `managedFields` bookkeeping of every other
//! write is `super::ownership`.

use serde_json::Value;

use super::ownership;
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
                reset_fields: ownership::reset_fields(info, input.ep),
            };
            ssa::apply(live, &config, kind, &opts, input.force).map_err(patch_error)
        }
        (ptype, Some(live)) => {
            patch::apply_patch(ptype, live, input.body, kind).map_err(patch_error)
        }
        (_, None) => Err(ApiError::internal("a non-apply patch needs a live object")),
    }
}
