//! What an API server's refusal says: a failed call named by its action and object, the status codes callers act
//! on, and errors as sentences a person reads (an API error by its message and reason, never as kube's debug dump
//! of the whole `Status`).

/// A call to an API server that failed: what was attempted, on which object.
#[derive(Debug, thiserror::Error)]
#[error("failed to {action} {object}")]
pub struct CallError {
    /// What was attempted: `get`, `create`, `update`...
    pub action: &'static str,
    /// `Kind namespace/name`, and where when it matters.
    pub object: String,
    /// The client error.
    #[source]
    pub source: kube::Error,
}

impl CallError {
    /// `action` on `object` failed with `source`.
    pub fn new(action: &'static str, object: impl Into<String>, source: kube::Error) -> Self {
        CallError {
            action,
            object: object.into(),
            source,
        }
    }
}

/// The error and every source, joined by `: ` (for conditions, Events and logs): sentences a person reads, so an
/// API error is shown by its message and reason ([`kube_error_text`]), never as a debug dump.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut current = Some(err);
    while let Some(next) = current {
        let (text, last) = match next.downcast_ref::<kube::Error>() {
            Some(kube @ kube::Error::Api(_)) => (kube_error_text(kube), true),
            _ => (next.to_string(), false),
        };
        // Some errors repeat their source's text in their own; print each piece once.
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        if last {
            break;
        }
        current = next.source();
    }
    out
}

/// A kube client error as a sentence. kube's own text of an API error appends the whole `Status` in debug form
/// (`Status { status: Some(Failure), ... }`); this keeps what the API server said and why.
pub fn kube_error_text(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if status.message.is_empty() => {
            format!("the API server answered {} {}", status.code, status.reason)
        }
        kube::Error::Api(status) if status.reason.is_empty() => status.message.clone(),
        kube::Error::Api(status) => format!("{} ({})", status.message, status.reason),
        other => other.to_string(),
    }
}

/// Whether a kube error is an API "404 Not Found".
pub fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

/// Whether a kube error is an API "409 Conflict".
pub fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

/// Whether a kube error is an API "409 AlreadyExists" (a create that lost a race).
pub fn is_already_exists(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409 && status.reason == "AlreadyExists")
}
