//! The four PATCH types kube-apiserver accepts, as pure functions over JSON.
//!
//! * [`merge`]: JSON merge patch (RFC 7386).
//! * [`json`]: JSON patch (RFC 6902), with the `test`-against-`null` behaviour kube-runtime relies on.
//! * strategic merge patch for built-in kinds (with the merge keys of their Go types), through [`apply_patch`].
//! * [`apply`]: server-side apply, and the `managedFields` bookkeeping of every other write.
//!
//! The HTTP layer maps the request's `Content-Type` with [`PatchType::from_content_type`], calls
//! [`apply_patch`] on the stored object, then runs its normal
//! update pipeline on the result. Every failure is a [`PatchError`] whose [`PatchError::to_status`] is the Status
//! the real server answers with.

pub mod apply;
pub mod json;
pub mod merge;
mod strategic;

/// The type graph node strategic merge patch starts from at an object's root (named by `crate::kinds`).
use crate::kind_info::KindInfo;
use crate::validation::{FieldError, format::go_quote, invalid_status, validate_field_manager};
use kube::core::Status;
use kube::core::response::{StatusCause, StatusDetails};
use serde_json::Value;

/// Content type of a JSON patch.
pub const JSON_PATCH: &str = "application/json-patch+json";
/// Content type of a JSON merge patch.
pub const MERGE_PATCH: &str = "application/merge-patch+json";
/// Content type of a strategic merge patch.
pub const STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
/// Content type of a server-side apply patch.
pub const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// The patch flavours the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch.
    Json,
    /// RFC 7386 JSON merge patch.
    Merge,
    /// Kubernetes strategic merge patch (built-in kinds only).
    Strategic,
    /// Server-side apply.
    Apply,
}

impl PatchType {
    /// The patch type a request `Content-Type` names (parameters such as `charset` ignored), if any.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        Some(match essence.as_str() {
            JSON_PATCH => Self::Json,
            MERGE_PATCH => Self::Merge,
            STRATEGIC_MERGE_PATCH => Self::Strategic,
            APPLY_PATCH => Self::Apply,
            _ => return None,
        })
    }

    /// The content type of this patch flavour.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Json => JSON_PATCH,
            Self::Merge => MERGE_PATCH,
            Self::Strategic => STRATEGIC_MERGE_PATCH,
            Self::Apply => APPLY_PATCH,
        }
    }

    /// The patch types the real server accepts for a kind, in its order: custom resources have no strategic
    /// merge patch.
    pub fn supported(kind: &KindInfo<'_>) -> &'static [PatchType] {
        if kind.is_custom() {
            &[Self::Json, Self::Merge, Self::Apply]
        } else {
            &[Self::Json, Self::Merge, Self::Strategic, Self::Apply]
        }
    }
}

/// The most operations one JSON patch may carry.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10000;

/// A patch that could not be applied, classified the way the real server answers it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PatchError {
    /// The patch body is malformed or uses directives wrongly: `400 BadRequest`.
    #[error("{0}")]
    BadRequest(String),
    /// The patch is well-formed but does not apply (failed `test`, missing path): `422 Invalid`, no details.
    #[error("{0}")]
    Invalid(String),
    /// A JSON patch operation that does not apply: `422 Invalid` with kube-apiserver's generic message and empty
    /// details; the JSON-patch library's words (kept here, for logs and tests) do not reach the client, as
    /// upstream drops them.
    #[error("{0}")]
    Unapplied(String),
    /// More than [`MAX_JSON_PATCH_OPERATIONS`] operations: `413 RequestEntityTooLarge`.
    #[error(
        "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {0}"
    )]
    TooManyOperations(usize),
    /// The content type is not a patch type this kind accepts (strategic merge patch on a custom resource):
    /// `415 UnsupportedMediaType`.
    #[error("the body of the request was in an unknown format - accepted media types include: {}", accepted.join(", "))]
    UnsupportedMediaType {
        /// The accepted content types, in the real server's order.
        accepted: Vec<&'static str>,
    },
    /// Bad `PatchOptions` (apply without `fieldManager`, `force` on a non-apply patch, ...): `422 Invalid` on
    /// kind `PatchOptions` of group `meta.k8s.io`.
    #[error("invalid patch options")]
    InvalidOptions(Vec<FieldError>),
    /// Server-side apply conflicts with other managers: `409 Conflict` with one cause per field.
    #[error("{}", conflict_message(.0))]
    Conflict(Vec<Conflict>),
    /// A failure upstream leaves unclassified, which the real server answers with a bare `500`.
    #[error("{0}")]
    Internal(String),
}

impl PatchError {
    /// The Status the real server answers with (without `kind`/`apiVersion`, which the HTTP layer adds).
    pub fn to_status(&self) -> Status {
        let message = self.to_string();
        match self {
            Self::BadRequest(_) => Status::failure(&message, "BadRequest").with_code(400),
            Self::Invalid(_) => Status::failure(&message, "Invalid").with_code(422),
            Self::Unapplied(_) => Status::failure(
                "the server rejected our request due to an error in our request",
                "Invalid",
            )
            .with_code(422)
            .with_details(StatusDetails {
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                uid: String::new(),
                causes: Vec::new(),
                retry_after_seconds: 0,
            }),
            Self::TooManyOperations(_) => Status::failure(
                &format!("Request entity too large: {message}"),
                "RequestEntityTooLarge",
            )
            .with_code(413),
            Self::UnsupportedMediaType { .. } => {
                Status::failure(&message, "UnsupportedMediaType").with_code(415)
            }
            Self::InvalidOptions(errors) => {
                invalid_status("PatchOptions", "meta.k8s.io", "", errors)
            }
            Self::Conflict(conflicts) => Status::failure(&message, "Conflict")
                .with_code(409)
                .with_details(StatusDetails {
                    name: String::new(),
                    group: String::new(),
                    kind: String::new(),
                    uid: String::new(),
                    causes: conflicts
                        .iter()
                        .map(|c| StatusCause {
                            reason: "FieldManagerConflict".to_string(),
                            message: format!("conflict with {}", c.manager_text()),
                            field: c.field.clone(),
                        })
                        .collect(),
                    retry_after_seconds: 0,
                }),
            // Upstream's catch-all Status has an empty (unknown) reason.
            Self::Internal(_) => Status::failure(&message, "").with_code(500),
        }
    }
}

/// One server-side apply conflict: a field another manager owns with a different value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// The other manager's operation: `Apply` or `Update`.
    pub operation: String,
    /// The API version the other manager wrote with.
    pub api_version: String,
    /// When the other manager last wrote (`Update` managers only), RFC 3339.
    pub time: Option<String>,
    /// The subresource the other manager wrote through (`status`), if any.
    pub subresource: Option<String>,
    /// The contested field in upstream's path syntax, e.g. `.spec.replicas` or
    /// `.spec.containers[name="web"].image`.
    pub field: String,
}

impl Conflict {
    /// How upstream prints the other manager: `"kubectl"`, or `"kube-controller-manager" using apps/v1 at <time>`
    /// for Update managers.
    pub fn manager_text(&self) -> String {
        let mut text = go_quote(&self.manager);
        if let Some(sub) = &self.subresource {
            text = format!("{text} with subresource {}", go_quote(sub));
        }
        if self.operation == "Update" {
            text = match &self.time {
                Some(t) => format!("{text} using {} at {t}", self.api_version),
                None => format!("{text} using {}", self.api_version),
            };
        }
        text
    }
}

/// Upstream's message for a list of conflicts: one conflict inline, several grouped by manager.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            c.manager_text(),
            c.field
        );
    }
    let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
    managers.sort_unstable();
    managers.dedup();
    let mut lines = Vec::new();
    for manager in managers {
        let mut fields = conflicts.iter().filter(|c| c.manager == manager).peekable();
        if let Some(first) = fields.peek() {
            lines.push(format!("conflicts with {}:", first.manager_text()));
        }
        lines.extend(fields.map(|c| format!("- {}", c.field)));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Checks the PATCH query options as the real server does before anything else.
///
/// Errors: [`PatchError::InvalidOptions`] listing every problem: `force` on a non-apply patch, apply without
/// `fieldManager`, a manager longer than 128 characters or with unprintable ones, a `dryRun` value other than
/// `All`, an unknown `fieldValidation`.
pub fn validate_options(
    patch_type: PatchType,
    field_manager: Option<&str>,
    force: Option<bool>,
    dry_run: &[String],
    field_validation: Option<&str>,
) -> Result<(), PatchError> {
    let mut errors = Vec::new();
    let manager = field_manager.unwrap_or_default();
    if patch_type == PatchType::Apply {
        if manager.is_empty() {
            errors.push(FieldError::required(
                "fieldManager",
                "is required for apply patch",
            ));
        }
    } else if force.is_some() {
        errors.push(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    errors.extend(validate_field_manager(manager));
    if dry_run.iter().any(|d| d != "All") {
        errors.push(FieldError::not_supported(
            "dryRun",
            dry_run.to_vec(),
            &["All"],
        ));
    }
    if let Some(v) =
        field_validation.filter(|v| !v.is_empty() && !["Ignore", "Strict", "Warn"].contains(v))
    {
        errors.push(FieldError::not_supported(
            "fieldValidation",
            v,
            &["Ignore", "Strict", "Warn"],
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(PatchError::InvalidOptions(errors))
    }
}

/// Applies a JSON, merge or strategic merge patch (`body`, the raw request bytes) to `live`.
///
/// Guarantees: `live` is not modified; the result is the patched object before the update pipeline (the caller
/// still applies its status/spec split, preconditions, defaulting and validation).
///
/// Errors: [`PatchError::UnsupportedMediaType`] for strategic merge patch on a custom resource;
/// [`PatchError::BadRequest`] for a body that is not JSON of the right shape; [`PatchError::Unapplied`] when a
/// JSON patch does not apply; [`PatchError::TooManyOperations`]; [`PatchError::Internal`] for strategic merge
/// patch failures upstream leaves unclassified. Server-side apply has its own entry point (it needs the field
/// manager and ownership records) and gives [`PatchError::BadRequest`] here.
pub fn apply_patch(
    patch_type: PatchType,
    live: &Value,
    body: &[u8],
    kind: &KindInfo<'_>,
) -> Result<Value, PatchError> {
    if !PatchType::supported(kind).contains(&patch_type) {
        return Err(PatchError::UnsupportedMediaType {
            accepted: PatchType::supported(kind)
                .iter()
                .map(|t| t.content_type())
                .collect(),
        });
    }
    match patch_type {
        PatchType::Json => json::apply(live, body),
        PatchType::Merge => merge::apply(live, &parse_json(body)?),
        PatchType::Strategic => strategic::apply(live, &parse_json(body)?, kind.group, kind.kind),
        PatchType::Apply => Err(PatchError::BadRequest(
            "server-side apply needs the apply entry point".to_string(),
        )),
    }
}

/// Go's `%v` rendering of a decoded JSON value (`map[a:b]`, `[x y]`), as upstream's messages and JSONPath
/// printing show values.
pub(crate) fn go_text(value: &Value) -> String {
    strategic::go_value(value)
}

/// Decodes a patch body as JSON, failing with the 400 the real server gives for undecodable patches.
pub(crate) fn parse_json(body: &[u8]) -> Result<Value, PatchError> {
    serde_json::from_slice(body)
        .map_err(|e| PatchError::BadRequest(format!("error decoding patch: {e}")))
}

#[cfg(test)]
mod tests;
