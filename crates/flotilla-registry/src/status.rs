//! API failures as metav1 `Status` objects: [`ApiError`] carries the code, reason, message and details every
//! failed write or read is answered with, in kube-apiserver's words; the server turns it into the response body
//! in one place.
use serde_json::{Map, Value, json};

/// One cause inside `details.causes` of a Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// Machine-readable reason, e.g. `FieldValueInvalid`.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// Field path, e.g. `metadata.name`.
    pub field: String,
}

/// A failed API request, rendered as a `Status` object with the HTTP code it names.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{reason} ({code}): {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Status `reason`, e.g. `NotFound`.
    pub reason: &'static str,
    /// Status `message`.
    pub message: String,
    /// Status `details`, if any.
    pub details: Option<Map<String, Value>>,
}

/// Result of an API operation.
pub type ApiResult<T> = Result<T, ApiError>;

/// `resource[.group]` as the real server spells it in messages.
pub(crate) fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

/// A Status's details naming an object: its name, group and kind (a resource), each only when set.
pub(crate) fn details(name: &str, group: &str, kind: &str) -> Map<String, Value> {
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    if !kind.is_empty() {
        d.insert("kind".into(), json!(kind));
    }
    d
}

impl ApiError {
    /// A bare error with code, reason and message.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// Adds `details` to the error.
    pub fn with_details(mut self, details: Map<String, Value>) -> Self {
        self.details = Some(details);
        self
    }

    /// 404 for a missing object of `resource` in `group`.
    pub fn not_found(resource: &str, group: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(resource, group)),
        )
        .with_details(details(name, group, resource))
    }

    /// 404 for an unknown path, resource or group-version.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(Map::new())
    }

    /// 409 AlreadyExists.
    pub fn already_exists(resource: &str, group: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(resource, group)),
        )
        .with_details(details(name, group, resource))
    }

    /// 409 Conflict for a failed optimistic-concurrency precondition.
    pub fn conflict(resource: &str, group: &str, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                qualified(resource, group)
            ),
        )
        .with_details(details(name, group, resource))
    }

    /// 409 Conflict with a free-form message.
    pub fn conflict_msg(resource: &str, group: &str, name: &str, msg: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {msg}",
                qualified(resource, group)
            ),
        )
        .with_details(details(name, group, resource))
    }

    /// 422 Invalid with one cause per field error; `kind` is the object kind.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> Self {
        let parts: Vec<String> = causes
            .iter()
            .map(|c| {
                if c.field.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}: {}", c.field, c.message)
                }
            })
            .collect();
        let mut d = details(name, group, kind);
        d.insert(
            "causes".into(),
            Value::Array(
                causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect(),
            ),
        );
        Self::new(
            422,
            "Invalid",
            format!(
                "{} \"{name}\" is invalid: {}",
                qualified(kind, group),
                parts.join(", ")
            ),
        )
        .with_details(d)
    }

    /// 422 Invalid for a single field.
    pub fn invalid_field(
        kind: &str,
        group: &str,
        name: &str,
        reason: &str,
        field: &str,
        message: &str,
    ) -> Self {
        Self::invalid(
            kind,
            group,
            name,
            vec![Cause {
                reason: reason.into(),
                message: message.into(),
                field: field.into(),
            }],
        )
    }

    /// 422 Invalid for bad request options (`ListOptions`, `PatchOptions`, `DeleteOptions`).
    pub fn invalid_options(options_kind: &str, field: &str, message: &str) -> Self {
        Self::invalid_field(
            options_kind,
            "meta.k8s.io",
            "",
            "FieldValueInvalid",
            field,
            message,
        )
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 403 Forbidden.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(verb: &str, resource: &str, group: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!(
                "{verb} is not supported on resources of kind \"{}\"",
                qualified(resource, group)
            ),
        )
    }

    /// 406 NotAcceptable.
    pub fn not_acceptable() -> Self {
        Self::new(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json",
        )
    }

    /// 415 UnsupportedMediaType listing what is accepted.
    pub fn unsupported_media(accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(413, "RequestEntityTooLarge", message)
    }

    /// 410 Expired for a too-old resourceVersion.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 504 Timeout for a resourceVersion newer than the server's.
    pub fn too_large_rv(requested: u64, current: u64) -> Self {
        let mut d = Map::new();
        d.insert(
            "causes".into(),
            json!([{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]),
        );
        d.insert("retryAfterSeconds".into(), json!(1));
        Self::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        )
        .with_details(d)
    }

    /// 500 InternalError.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// The Status object for this error.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        });
        // Go leaves out an empty reason (`omitempty`), as in a webhook's denial that names none.
        if !self.reason.is_empty()
            && let Some(obj) = s.as_object_mut()
        {
            obj.insert("reason".into(), json!(self.reason));
        }
        if let (Some(d), Some(obj)) = (&self.details, s.as_object_mut()) {
            obj.insert("details".into(), Value::Object(d.clone()));
        }
        s
    }
}

/// Status reasons the server emits, as `'static` strings (protocol modules hand back owned ones).
const REASONS: &[&str] = &[
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Expired",
    "Invalid",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "TooManyRequests",
    "InternalError",
    "Timeout",
    "ServerTimeout",
    "ServiceUnavailable",
];

impl From<kube::core::Status> for ApiError {
    /// Carries a Status built by a protocol module (patch, protobuf, validation) to the HTTP edge unchanged;
    /// a reason outside the known set is kept empty, as upstream's catch-all Status has it.
    fn from(s: kube::core::Status) -> Self {
        let reason = REASONS
            .iter()
            .find(|r| **r == s.reason)
            .copied()
            .unwrap_or("");
        let details = s.details.and_then(|d| match serde_json::to_value(d) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        });
        Self {
            code: if s.code == 0 { 500 } else { s.code },
            reason,
            message: s.message,
            details,
        }
    }
}

impl From<flotilla_store::Error> for ApiError {
    /// What a write the store refused is answered with: `503` while the store cannot persist, `500` when a
    /// change was not persisted. (A conflict is retried by the write path and answered only when the caller's
    /// own precondition fails, as `409`.)
    fn from(e: flotilla_store::Error) -> Self {
        match e {
            flotilla_store::Error::Unavailable => {
                Self::new(503, "ServiceUnavailable", e.to_string())
            }
            flotilla_store::Error::Conflict
            | flotilla_store::Error::Persist(_)
            | flotilla_store::Error::ShutDown
            | flotilla_store::Error::Refused(_) => Self::internal(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_plural_and_group() {
        let s = ApiError::not_found("deployments", "apps", "web").to_status();
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(s["details"]["kind"], "deployments");
        assert_eq!(s["code"], 404);
        assert_eq!(s["reason"], "NotFound");
    }

    #[test]
    fn invalid_lists_causes() {
        let e = ApiError::invalid_field(
            "ConfigMap",
            "",
            "x",
            "FieldValueInvalid",
            "metadata.name",
            "bad",
        );
        let s = e.to_status();
        assert_eq!(
            s["message"],
            "ConfigMap \"x\" is invalid: metadata.name: bad"
        );
        assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
        assert_eq!(s["code"], 422);
    }
}
