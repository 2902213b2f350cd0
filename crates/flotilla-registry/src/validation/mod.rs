//! Field-level validation errors worded like the real API server, and the object validations that produce them.
//!
//! [`FieldError`] mirrors upstream's `field.Error`: a JSON field path (`metadata.labels`), an [`ErrorType`]
//! (whose reason, such as `FieldValueInvalid`, becomes a Status cause), the offending value and a detail.
//! [`invalid_status`] turns a list of them into the `422 Invalid` Status body kube-apiserver answers with, with the message
//! `<Kind[.group]> "<name>" is invalid: <errors>` and one cause per error.

mod event;
mod meta;

pub use flotilla_apimachinery::field::FieldError;
/// Name and label format checks, shared with the aggregated API server so that both word them as upstream does.
pub use flotilla_apimachinery::validation as format;

pub(crate) use event::validate_event;

pub(crate) use meta::{NameRule, validate_object_meta, validate_object_meta_update};

use flotilla_apimachinery::field::invalid_message;
use kube::core::Status;
use kube::core::response::{StatusCause, StatusDetails};

/// The `422 Invalid` Status for `errors` on object `name` of `kind` in API `group` (empty for the core group).
///
/// Guarantees: message `<Kind[.group]> "<name>" is invalid: <aggregate>`, reason `Invalid`, code 422,
/// `details.kind` is the Kind (not the plural, unlike NotFound) and one cause per error, in order. The Status
/// carries no `kind`/`apiVersion`; the HTTP layer adds them when it serialises.
pub fn invalid_status(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> Status {
    Status::failure(&invalid_message(kind, group, name, errors), "Invalid")
        .with_code(422)
        .with_details(StatusDetails {
            name: name.to_string(),
            group: group.to_string(),
            kind: kind.to_string(),
            uid: String::new(),
            causes: errors.iter().map(cause).collect(),
            retry_after_seconds: 0,
        })
}

/// The Status cause for one error.
pub(crate) fn cause(error: &FieldError) -> StatusCause {
    StatusCause {
        reason: error.reason().to_string(),
        message: error.body(),
        field: error.field.clone(),
    }
}

#[cfg(test)]
mod tests;

/// Upstream's `ValidateFieldManager`: at most 128 characters, all printable.
pub(crate) fn validate_field_manager(manager: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if manager.chars().count() > 128 {
        errors.push(FieldError::too_long("fieldManager", 128));
    }
    if manager.chars().any(char::is_control) {
        errors.push(FieldError::invalid(
            "fieldManager",
            manager,
            "must only contain printable characters",
        ));
    }
    errors
}
