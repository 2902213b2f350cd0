//! The `serviceaccounts/<name>/token` subresource: a TokenRequest (what `kubectl create token` posts) answered
//! with a bound token for the ServiceAccount (`crate::server::bound`), `201 Created`, nothing stored.

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::{Req, body};
use crate::context::Ctx;
use crate::wire::json_response;
use flotilla_registry::auth::bound::{Claims, ISSUER};
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::validation::{FieldError, invalid_status};

/// Lifetime of a token whose request names none (upstream's default).
const DEFAULT_SECONDS: i64 = 3600;
/// The shortest lifetime upstream accepts.
const MIN_SECONDS: i64 = 600;
/// The longest lifetime upstream accepts (2^32 seconds).
const MAX_SECONDS: i64 = 1 << 32;

fn invalid(name: &str, value: i64, detail: &str) -> ApiError {
    ApiError::from(invalid_status(
        "TokenRequest",
        "authentication.k8s.io",
        name,
        &[FieldError::invalid("spec.expirationSeconds", value, detail)],
    ))
}

/// POST of a TokenRequest for the ServiceAccount on the path.
///
/// # Errors
/// `404` for a missing ServiceAccount; `400` for a body of another kind; `422` for a lifetime under ten minutes
/// or over 2^32 seconds; the body's decoding errors.
pub(crate) fn create(ctx: &Ctx, info: &ResourceInfo, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let ns = req.ns().to_string();
    let account = ctx
        .registry
        .store
        .get(&info.key(), &ns, &name)
        .ok_or_else(|| ApiError::not_found(&info.plural, &info.group, &name))?;
    let mut obj = body::decode_object(req, false)?;
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    if !matches!(av, "" | "authentication.k8s.io/v1") || !matches!(kind, "" | "TokenRequest") {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version (authentication.k8s.io/v1) or the kind ({kind}) does not match TokenRequest"
        )));
    }
    let seconds = obj
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_SECONDS);
    if seconds < MIN_SECONDS {
        return Err(invalid(
            &name,
            seconds,
            "may not specify a duration less than 10 minutes",
        ));
    }
    if seconds > MAX_SECONDS {
        return Err(invalid(
            &name,
            seconds,
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let mut audiences: Vec<String> = obj
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    if audiences.is_empty() {
        audiences.push(ISSUER.to_string());
    }
    let claims = Claims {
        namespace: ns.clone(),
        name: name.clone(),
        uid: account
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    };
    let now = jiff::Timestamp::now();
    let expires = now.as_second().saturating_add(seconds);
    let token = ctx
        .registry
        .tokens
        .issue_bound(&claims, &audiences, now.as_second(), expires);
    let expiration = jiff::Timestamp::from_second(expires)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
        m.insert("kind".into(), json!("TokenRequest"));
        m.insert(
            "metadata".into(),
            json!({"name": name, "namespace": ns, "creationTimestamp": null}),
        );
        let spec = m.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert("audiences".into(), json!(audiences));
            spec.insert("expirationSeconds".into(), json!(seconds));
            spec.entry("boundObjectRef").or_insert(Value::Null);
        }
        m.insert(
            "status".into(),
            json!({"token": token, "expirationTimestamp": expiration}),
        );
    }
    Ok(json_response(StatusCode::CREATED, &obj))
}
