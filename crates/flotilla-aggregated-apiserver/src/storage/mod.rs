//! The pass-through of `cluster.karmada.io/v1alpha1` Cluster requests to the CRD's `storage` version on the
//! control plane: every verb (get, list, watch, create, update, patch of every type, delete,
//! deletecollection, the status subresource), impersonating the caller so that the control plane's RBAC and
//! admission decide exactly as they decide for the CRD itself.
//!
//! Guarantees: the query string passes unchanged; bodies are rewritten `v1alpha1` → `storage` on the way in
//! (YAML bodies become JSON) and back on the way out (see [`rewrite`]); watch responses stream, one event at
//! a time; responses are JSON (the caller's `Accept` is narrowed to its JSON entries); the control plane's
//! status codes and Status errors pass through.

mod lines;
pub(crate) mod rewrite;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use kube::Client;
use serde_json::Value;

use self::rewrite::{Direction, rewrite};
use crate::error::RequestError;
use crate::user::UserInfo;
use crate::{names, request_info};

/// The largest request body read: kube-apiserver's limit for an object's body (3 MiB).
pub(crate) const MAX_BODY: usize = 3 * 1024 * 1024;

/// Response headers not passed on: hop-by-hop ones and the length, which a rewrite changes.
const DROPPED_RESPONSE_HEADERS: [header::HeaderName; 5] = [
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::CONTENT_LENGTH,
    header::UPGRADE,
    header::TRAILER,
];

/// Answers a request for `rest` (the path below `/apis/cluster.karmada.io/v1alpha1/`, e.g. `clusters/m1/status`)
/// from the control plane's storage version, as `user`.
pub(crate) async fn pass_through(
    client: &Client,
    user: &UserInfo,
    rest: &str,
    request: Request<Body>,
) -> Result<Response, RequestError> {
    let (parts, body) = request.into_parts();
    let mut target = format!("/apis/{}/{}/{rest}", names::GROUP, names::STORAGE_VERSION);
    if let Some(query) = parts.uri.query() {
        target.push('?');
        target.push_str(query);
    }
    let mut headers = user.impersonation_headers();
    if let Some(accept) = json_accept(parts.headers.get(header::ACCEPT))? {
        headers.insert(header::ACCEPT, accept);
    }
    let body = read_limited(body).await?;
    let (content_type, body) = to_storage(parts.headers.get(header::CONTENT_TYPE), body);
    if let Some(content_type) = content_type {
        headers.insert(header::CONTENT_TYPE, content_type);
    }
    let mut outgoing = Request::builder()
        .method(parts.method.clone())
        .uri(&target)
        .body(kube::client::Body::from(body))
        .map_err(RequestError::Response)?;
    *outgoing.headers_mut() = headers;
    let answer = client
        .send(outgoing)
        .await
        .map_err(|source| RequestError::ControlPlane {
            action: format!("pass {} {target} on to the control plane", parts.method),
            source,
        })?;
    // A watch is known by its request too: not every server marks its answer `;stream=watch`.
    let watch = request_info::parse(
        &parts.method,
        &format!("/apis/{}/{rest}", names::API_VERSION),
        parts.uri.query().unwrap_or_default(),
    )
    .verb
        == "watch";
    to_served(&parts.method, watch, answer).await
}

/// The caller's `Accept` narrowed to what is answered (JSON): `None` when the caller sent none.
///
/// # Errors
/// [`RequestError::NotAcceptable`] when the caller accepts nothing JSON.
fn json_accept(accept: Option<&HeaderValue>) -> Result<Option<HeaderValue>, RequestError> {
    let Some(accept) = accept.and_then(|value| value.to_str().ok()) else {
        return Ok(None);
    };
    let kept: Vec<&str> = accept
        .split(',')
        .map(str::trim)
        .filter(|range| {
            let media = range.split(';').next().unwrap_or_default().trim();
            ["application/json", "application/*", "*/*"]
                .iter()
                .any(|json| media.eq_ignore_ascii_case(json))
        })
        .collect();
    if kept.is_empty() {
        return Err(RequestError::NotAcceptable);
    }
    HeaderValue::from_str(&kept.join(","))
        .map(Some)
        .map_err(|_| RequestError::NotAcceptable)
}

/// Reads a request body of at most [`MAX_BODY`] bytes.
pub(crate) async fn read_limited(body: Body) -> Result<Bytes, RequestError> {
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => {
            Err(RequestError::TooLarge { limit: MAX_BODY })
        }
        Err(error) => Err(RequestError::ReadBody(error)),
    }
}

/// The body for the control plane and its content type: JSON and YAML bodies rewritten (YAML sent as JSON,
/// which every YAML content type also accepts); anything else, and anything that does not parse, unchanged,
/// for the control plane to judge with its own error.
fn to_storage(content_type: Option<&HeaderValue>, body: Bytes) -> (Option<HeaderValue>, Bytes) {
    let content_type = content_type.cloned();
    if body.is_empty() {
        return (content_type, body);
    }
    let media = content_type
        .as_ref()
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|media| media.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let parsed: Option<Value> = match media.as_str() {
        "application/json"
        | "application/merge-patch+json"
        | "application/strategic-merge-patch+json"
        | "application/json-patch+json" => serde_json::from_slice(&body).ok(),
        "application/apply-patch+yaml" | "application/yaml" => {
            flotilla_yaml::from_slice(&body).ok()
        }
        _ => None,
    };
    let Some(mut value) = parsed else {
        return (content_type, body);
    };
    rewrite(&mut value, Direction::ToStorage);
    let content_type = if media == "application/yaml" {
        Some(HeaderValue::from_static("application/json"))
    } else if media == "application/strategic-merge-patch+json" && !has_directive(&value) {
        // Karmada serves Clusters as a built-in type, which takes strategic merge patches (`kubectl patch`'s
        // default); a CRD refuses them with 415. The Cluster's fields carry no patch strategy, so a strategic
        // merge patch without `$` directives means what the same JSON merge patch means.
        Some(HeaderValue::from_static("application/merge-patch+json"))
    } else {
        content_type
    };
    match serde_json::to_vec(&value) {
        Ok(json) => (content_type, json.into()),
        Err(_) => (content_type, body),
    }
}

/// Whether a strategic merge patch holds a directive (`$patch`, `$retainKeys`, `$setElementOrder/...`, ...), which
/// a JSON merge patch cannot say.
fn has_directive(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key.starts_with('$') || has_directive(value)),
        Value::Array(items) => items.iter().any(has_directive),
        _ => false,
    }
}

/// The control plane's answer for the caller: status and headers kept, JSON rewritten to `v1alpha1`, watch
/// streams rewritten as they flow.
async fn to_served(
    method: &Method,
    watch: bool,
    answer: http::Response<kube::client::Body>,
) -> Result<Response, RequestError> {
    let (parts, body) = answer.into_parts();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let streams = (watch && parts.status.is_success()) || content_type.contains("stream=watch");
    let mut headers = forwarded(parts.headers);
    let body = if *method == Method::HEAD {
        Body::empty()
    } else if streams {
        if !content_type.contains("stream=watch") {
            // kube-apiserver marks JSON watch streams so; say it even when the control plane did not.
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json;stream=watch"),
            );
        }
        Body::from_stream(lines::rewrite_lines(
            body.into_data_stream(),
            Direction::ToServed,
        ))
    } else if content_type.contains("json") {
        let bytes = body
            .collect()
            .await
            .map_err(|source| RequestError::ControlPlane {
                action: "read the control plane's answer".to_owned(),
                source,
            })?
            .to_bytes();
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(mut value) => {
                rewrite(&mut value, Direction::ToServed);
                Body::from(value.to_string())
            }
            Err(_) => Body::from(bytes),
        }
    } else {
        Body::from_stream(body.into_data_stream())
    };
    let mut response = Response::new(body);
    *response.status_mut() = parts.status;
    *response.headers_mut() = headers;
    Ok(response)
}

/// `headers` without the hop-by-hop ones and the length.
fn forwarded(mut headers: HeaderMap) -> HeaderMap {
    for name in &DROPPED_RESPONSE_HEADERS {
        headers.remove(name);
    }
    headers
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn accept(value: &'static str) -> Result<Option<String>, RequestError> {
        json_accept(Some(&HeaderValue::from_static(value)))
            .map(|kept| kept.and_then(|v| v.to_str().ok().map(str::to_owned)))
    }

    #[test]
    fn accept_keeps_the_json_entries_only() {
        assert_eq!(
            accept("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
                .ok()
                .flatten()
                .as_deref(),
            Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
        );
        assert_eq!(accept("*/*").ok().flatten().as_deref(), Some("*/*"));
        assert!(matches!(
            accept("application/vnd.kubernetes.protobuf"),
            Err(RequestError::NotAcceptable)
        ));
        assert!(matches!(json_accept(None), Ok(None)));
    }

    fn prepared(content_type: &'static str, body: &str) -> (String, Value) {
        let (content_type, body) = to_storage(
            Some(&HeaderValue::from_static(content_type)),
            Bytes::from(body.to_owned()),
        );
        (
            content_type
                .and_then(|v| v.to_str().ok().map(str::to_owned))
                .unwrap_or_default(),
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        )
    }

    #[test]
    fn json_bodies_are_rewritten_for_every_patch_type() {
        let object = r#"{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster","metadata":{"name":"m1"}}"#;
        for (content_type, sent) in [
            ("application/json", "application/json"),
            (
                "application/merge-patch+json",
                "application/merge-patch+json",
            ),
            // Strategic merge patches become merge patches: the CRD would refuse them.
            (
                "application/strategic-merge-patch+json",
                "application/merge-patch+json",
            ),
        ] {
            let (kept, body) = prepared(content_type, object);
            assert_eq!(kept, sent);
            assert_eq!(
                body["apiVersion"], "cluster.karmada.io/storage",
                "{content_type}"
            );
        }
        let (_, patch) = prepared(
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/apiVersion","value":"cluster.karmada.io/v1alpha1"}]"#,
        );
        assert_eq!(patch[0]["value"], "cluster.karmada.io/storage");
    }

    #[test]
    fn strategic_merge_patches_with_directives_stay_strategic() {
        let (kept, _) = prepared(
            "application/strategic-merge-patch+json",
            r#"{"spec":{"taints":[{"$patch":"replace"}]}}"#,
        );
        assert_eq!(kept, "application/strategic-merge-patch+json");
    }

    #[test]
    fn yaml_bodies_become_json() {
        let yaml = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Push\n";
        let (content_type, body) = prepared("application/apply-patch+yaml", yaml);
        assert_eq!(content_type, "application/apply-patch+yaml");
        assert_eq!(
            body,
            json!({"apiVersion": "cluster.karmada.io/storage", "kind": "Cluster",
                   "metadata": {"name": "m1"}, "spec": {"syncMode": "Push"}})
        );
        let (content_type, body) = prepared("application/yaml", yaml);
        assert_eq!(content_type, "application/json");
        assert_eq!(body["apiVersion"], "cluster.karmada.io/storage");
    }

    #[test]
    fn unparsable_and_unknown_bodies_pass_unchanged() {
        for (content_type, text) in [
            ("application/json", "{not json"),
            ("application/vnd.kubernetes.protobuf", "k8s\0..."),
        ] {
            let (kept, body) = to_storage(
                Some(&HeaderValue::from_static(content_type)),
                Bytes::from(text.to_owned()),
            );
            assert_eq!(
                kept.as_ref().and_then(|v| v.to_str().ok()),
                Some(content_type)
            );
            assert_eq!(body, text.as_bytes());
        }
    }
}
