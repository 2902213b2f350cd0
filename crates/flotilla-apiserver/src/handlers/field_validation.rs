//! The request side of `fieldValidation`: the directive of a request and the `Warning` headers of
//! its answer. What the directive does to a written object is `flotilla_registry::write::field_validation`.

use axum::response::Response;
use http::{HeaderValue, header};

use super::Req;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::write::field_validation::{Findings, Mode};

/// The directive of a request; `options_kind` names its options in the 422 for an unknown value.
///
/// # Errors
/// 422 on `<options_kind>` for a value other than `Ignore`, `Warn` or `Strict`.
pub(crate) fn mode(req: &Req, options_kind: &str) -> ApiResult<Mode> {
    match req.query.get("fieldValidation").unwrap_or("") {
        "" | "Warn" => Ok(Mode::Warn),
        "Ignore" => Ok(Mode::Ignore),
        "Strict" => Ok(Mode::Strict),
        other => Err(ApiError::invalid_field(
            options_kind,
            "meta.k8s.io",
            "",
            "FieldValueNotSupported",
            "fieldValidation",
            &format!(
                "Unsupported value: \"{other}\": supported values: \"Ignore\", \"Strict\", \"Warn\""
            ),
        )),
    }
}

/// Adds one `Warning: 299 - "<text>"` header per finding to a response.
pub(crate) fn annotate(findings: &Findings, mut response: Response) -> Response {
    for w in findings.warnings() {
        let text = format!("299 - \"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(v) = HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, v);
        }
    }
    response
}
