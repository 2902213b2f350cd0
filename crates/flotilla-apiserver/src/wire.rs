//! What the server's answers look like on the wire, in one place: the largest request body it reads, JSON
//! bodies with the exact `application/json` content type, failures as metav1 `Status` bodies with their code
//! (the only place a non-2xx body is built from an [`ApiError`]), streaming bodies, and the `/version`
//! document.

use std::convert::Infallible;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flotilla_registry::status::ApiError;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

/// Largest accepted request body.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// A JSON response with the exact `application/json` content type.
pub(crate) fn json_response(code: StatusCode, body: &Value) -> Response {
    let bytes = flotilla_store::compact::to_vec(body);
    let mut resp = (code, bytes).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// The response for a failed request: its Status, with the code it names.
pub(crate) fn error_response(error: &ApiError) -> Response {
    let code = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, &error.to_status())
}

/// Body of a streaming response.
pub fn stream_body<S>(stream: S) -> Body
where
    S: futures::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    Body::from_stream(stream)
}

/// The `/version` document.
pub fn version_info() -> Value {
    json!({
        "major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
        "minCompatibilityMajor": "1", "minCompatibilityMinor": "35",
        "gitVersion": "v1.36.0+flotilla", "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean", "buildDate": "2026-11-22T00:00:00Z", "goVersion": "n/a",
        "compiler": "rustc", "platform": "linux/amd64",
    })
}
