//! Request body decoding by Content-Type.

use serde_json::Value;

use super::Req;
use flotilla_registry::status::{ApiError, ApiResult};

/// The media type of the request without parameters, lower-cased.
pub(crate) fn media_type(req: &Req) -> String {
    req.content_type
        .as_deref()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Decodes a create/update body (JSON, YAML or, for built-in kinds, protobuf) into a JSON object.
pub(crate) fn decode_object(req: &Req, custom: bool) -> ApiResult<Value> {
    if req.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let value: Value = match media_type(req).as_str() {
        "application/json" | "" => serde_json::from_slice(&req.body).map_err(|e| {
            ApiError::bad_request(format!("the request body is not valid JSON: {e}"))
        })?,
        "application/yaml" | "application/x-yaml" => {
            flotilla_yaml::from_slice(&req.body).map_err(|e| {
                ApiError::bad_request(format!("the request body is not valid YAML: {}", e.chain()))
            })?
        }
        "application/vnd.kubernetes.protobuf" if !custom => decode_protobuf(req)?,
        _ => {
            return Err(ApiError::unsupported_media(if custom {
                &["application/json", "application/yaml"]
            } else {
                &[
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf",
                ]
            }));
        }
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    Ok(value)
}

/// Transcodes a protobuf body (client-go 0.32+ typed clients) into the JSON a JSON client would send.
fn decode_protobuf(req: &Req) -> ApiResult<Value> {
    crate::protobuf::decode(&req.body).map_err(|e| ApiError::from(e.to_status()))
}

/// Decodes an optional DeleteOptions body (JSON or protobuf); an empty body is `None`.
pub(crate) fn decode_delete_options(req: &Req) -> ApiResult<Option<Value>> {
    if req.body.is_empty() || req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match media_type(req).as_str() {
        "application/vnd.kubernetes.protobuf" => decode_protobuf(req).map(Some),
        "application/yaml" => flotilla_yaml::from_slice(&req.body).map(Some).map_err(|e| {
            ApiError::bad_request(format!(
                "the DeleteOptions body is not valid YAML: {}",
                e.chain()
            ))
        }),
        _ => serde_json::from_slice(&req.body).map(Some).map_err(|e| {
            ApiError::bad_request(format!("the DeleteOptions body is not valid JSON: {e}"))
        }),
    }
}
