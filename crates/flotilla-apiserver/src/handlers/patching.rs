//! The seam between the PATCH handler and the patch engines of `crate::patch` (owned by the protocol
//! module): patch-type negotiation and one call that turns (live object, patch body) into the new object.

use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// The four patch types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386.
    Merge,
    /// RFC 6902.
    Json,
    /// Strategic merge patch (built-in kinds only).
    Strategic,
    /// Server-side apply.
    Apply,
}

impl PatchType {
    /// The patch type of a Content-Type; 415 for anything else and for SMP on custom resources.
    pub fn from_content_type(ct: &str, custom: bool) -> ApiResult<Self> {
        let accepted: &[&str] = if custom {
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml",
            ]
        } else {
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
            ]
        };
        match ct {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" if !custom => Ok(Self::Strategic),
            "application/apply-patch+yaml" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_media(accepted)),
        }
    }
}

fn parse_body(body: &[u8], yaml_ok: bool) -> ApiResult<Value> {
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(e) if yaml_ok => serde_yaml::from_slice(body).map_err(|y| {
            ApiError::bad_request(format!("the patch is neither JSON ({e}) nor YAML ({y})"))
        }),
        Err(e) => Err(ApiError::bad_request(format!(
            "the patch is not valid JSON: {e}"
        ))),
    }
}

/// Applies a patch to `live` and returns the patched object (before the update pipeline runs).
pub fn apply_to(
    info: &ResourceInfo,
    live: &Value,
    ptype: PatchType,
    body: &[u8],
    manager: &str,
    force: bool,
) -> ApiResult<Value> {
    let _ = (info, manager, force);
    let patch = parse_body(body, ptype == PatchType::Apply)?;
    let mut doc = live.clone();
    match ptype {
        PatchType::Merge | PatchType::Strategic | PatchType::Apply => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            json_patch::merge(&mut doc, &patch);
        }
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| ApiError::bad_request(format!("the JSON patch is malformed: {e}")))?;
            json_patch::patch(&mut doc, &ops)
                .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?;
        }
    }
    Ok(doc)
}
