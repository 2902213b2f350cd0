//! The pass-through of `cluster.karmada.io/v1alpha1` Cluster requests to the CRD's `storage` version on the
//! control plane: every verb (get, list, watch, create, update, patch of every type, delete,
//! deletecollection, the status subresource), impersonating the caller so that the control plane's RBAC and
//! admission decide exactly as they decide for the CRD itself.
//!
//! Guarantees: the query string passes unchanged; bodies are rewritten `v1alpha1` → `storage` on the way in
//! (YAML bodies become JSON) and back on the way out (see [`rewrite`]); watch responses stream, one event at
//! a time; responses are JSON (the caller's `Accept` is negotiated in [`accept`]); the control plane's status
//! codes and Status errors pass through.
//!
//! Where Karmada's server answers differently from the CRD, this module answers as Karmada's does:
//! - **Tables** are Karmada's (see [`table`]): for a Table the control plane is asked for JSON, and the
//!   Clusters it answers (one, a list, or each watch event's) become the Table.
//! - **New Clusters** are checked by Karmada's validation first (`crate::validation`): a create that breaks it
//!   is refused with Karmada's `422 Invalid` before anything reaches the control plane.
//! - **The `storage` version's deprecation warning** (the CRD's, meant for people who reach that version
//!   directly) is taken out of every answer's `Warning` headers: the caller used `v1alpha1`.

pub(crate) mod accept;
mod lines;
pub(crate) mod rewrite;
mod table;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use kube::Client;
use serde_json::Value;

use self::accept::{TableRequest, Wanted};
use self::rewrite::{Direction, rewrite};
use self::table::{WatchTables, to_table};
use crate::error::RequestError;
use crate::user::UserInfo;
use crate::{names, validation};
use flotilla_apimachinery::request_info::{self, RequestInfo};

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
    let query = parts.uri.query().unwrap_or_default();
    let info = request_info::parse(
        parts.method.as_str(),
        &format!("/apis/{}/{rest}", names::API_VERSION),
        query,
    );
    let wanted = accept::negotiate(parts.headers.get(header::ACCEPT), query)?;
    let mut target = format!("/apis/{}/{}/{rest}", names::GROUP, names::STORAGE_VERSION);
    if !query.is_empty() {
        target.push('?');
        target.push_str(query);
    }
    let mut headers = user.impersonation_headers();
    match &wanted {
        Wanted::Json(Some(accept)) => {
            headers.insert(header::ACCEPT, accept.clone());
        }
        Wanted::Json(None) => {}
        Wanted::Table(_) => {
            headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        }
    }
    let body = read_limited(body).await?;
    let sent = to_storage(parts.headers.get(header::CONTENT_TYPE), body);
    if let Some(object) = &sent.object {
        refuse_invalid_create(client, &info, sent.content_type.as_ref(), object).await?;
    }
    if let Some(content_type) = sent.content_type {
        headers.insert(header::CONTENT_TYPE, content_type);
    }
    let mut outgoing = Request::builder()
        .method(parts.method.clone())
        .uri(&target)
        .body(kube::client::Body::from(sent.body))
        .map_err(RequestError::Response)?;
    *outgoing.headers_mut() = headers;
    let answer = client
        .send(outgoing)
        .await
        .map_err(|source| RequestError::ControlPlane {
            action: format!("pass {} {target} on to the control plane", parts.method),
            source,
        })?;
    let table = match wanted {
        Wanted::Table(table) => Some(table),
        Wanted::Json(_) => None,
    };
    // A watch is known by its request too: not every server marks its answer `;stream=watch`.
    to_served(&parts.method, info.verb == "watch", table, answer).await
}

/// Refuses a new Cluster that Karmada's validation refuses: a create, or an apply that creates (which only the
/// Cluster's absence tells, asked as this server so that the caller's rights do not decide what is checked).
///
/// # Errors
/// [`RequestError::Invalid`] with Karmada's errors; [`RequestError::ControlPlane`] when the control plane
/// cannot say whether an applied Cluster exists.
async fn refuse_invalid_create(
    client: &Client,
    info: &RequestInfo,
    content_type: Option<&HeaderValue>,
    object: &Value,
) -> Result<(), RequestError> {
    let apply = content_type
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/apply-patch"));
    let errors = match info.verb.as_str() {
        "create" if info.subresource.is_empty() && info.name.is_empty() => {
            validation::validate_new_cluster(object, None)
        }
        "patch" if apply && info.subresource.is_empty() && !exists(client, &info.name).await? => {
            validation::validate_new_cluster(object, Some(&info.name))
        }
        _ => return Ok(()),
    };
    if errors.is_empty() {
        return Ok(());
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .unwrap_or(&info.name)
        .to_owned();
    Err(RequestError::Invalid { name, errors })
}

/// Whether Cluster `name` exists on the control plane.
async fn exists(client: &Client, name: &str) -> Result<bool, RequestError> {
    let path = format!(
        "/apis/{}/{}/{}/{}",
        names::GROUP,
        names::STORAGE_VERSION,
        names::RESOURCE,
        percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC)
    );
    let request = Request::get(&path)
        .body(kube::client::Body::empty())
        .map_err(RequestError::Response)?;
    let answer = client
        .send(request)
        .await
        .map_err(|source| RequestError::ControlPlane {
            action: format!("read Cluster {name} from the control plane"),
            source,
        })?;
    Ok(answer.status() != StatusCode::NOT_FOUND)
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

/// A request body as it goes to the control plane.
struct Prepared {
    /// Its content type.
    content_type: Option<HeaderValue>,
    /// The bytes sent.
    body: Bytes,
    /// The object the caller sent (a create's, an apply's), when the body is a JSON or YAML object.
    object: Option<Value>,
}

/// The body for the control plane and its content type: JSON and YAML bodies rewritten (YAML sent as JSON,
/// which every YAML content type also accepts); anything else, and anything that does not parse, unchanged,
/// for the control plane to judge with its own error.
fn to_storage(content_type: Option<&HeaderValue>, body: Bytes) -> Prepared {
    let content_type = content_type.cloned();
    let unchanged = |content_type, body| Prepared {
        content_type,
        body,
        object: None,
    };
    if body.is_empty() {
        return unchanged(content_type, body);
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
        return unchanged(content_type, body);
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
    let body = serde_json::to_vec(&value).map_or(body, Bytes::from);
    Prepared {
        content_type,
        body,
        object: value.is_object().then_some(value),
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

/// The control plane's answer for the caller: status and headers kept (but the `storage` version's deprecation
/// warning), JSON rewritten to `v1alpha1` and, when `table` asks, made a Table; watch streams changed as they
/// flow.
async fn to_served(
    method: &Method,
    watch: bool,
    table: Option<TableRequest>,
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
        let mut tables = table.map(WatchTables::new);
        Body::from_stream(lines::change_lines(body.into_data_stream(), move |event| {
            rewrite(event, Direction::ToServed);
            if let Some(tables) = tables.as_mut() {
                tables.convert(event, now());
            }
        }))
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
                if let Some(table) =
                    table.and_then(|request| to_table(&value, &request, true, now()))
                {
                    value = table;
                }
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

/// Seconds since the epoch, for the ages in Tables.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

/// `headers` without the hop-by-hop ones, the length, and the warning the `storage` version gives.
fn forwarded(mut headers: HeaderMap) -> HeaderMap {
    for name in &DROPPED_RESPONSE_HEADERS {
        headers.remove(name);
    }
    let warnings: Vec<HeaderValue> = headers.get_all(header::WARNING).iter().cloned().collect();
    headers.remove(header::WARNING);
    for warning in warnings {
        // kube-apiserver sends each warning as a header of its own, `299 - "<text>"`.
        let storage_version = warning
            .to_str()
            .is_ok_and(|text| text.contains(flotilla_api::cluster::STORAGE_DEPRECATION_WARNING));
        if !storage_version {
            headers.append(header::WARNING, warning);
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn prepared(content_type: &'static str, body: &str) -> (String, Value) {
        let Prepared {
            content_type, body, ..
        } = to_storage(
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
            let Prepared {
                content_type: kept,
                body,
                object,
            } = to_storage(
                Some(&HeaderValue::from_static(content_type)),
                Bytes::from(text.to_owned()),
            );
            assert!(object.is_none());
            assert_eq!(
                kept.as_ref().and_then(|v| v.to_str().ok()),
                Some(content_type)
            );
            assert_eq!(body, text.as_bytes());
        }
    }

    #[test]
    fn the_storage_versions_warning_is_not_passed_on() {
        let mut headers = HeaderMap::new();
        let storage = format!(
            "299 - \"{}\"",
            flotilla_api::cluster::STORAGE_DEPRECATION_WARNING
        );
        headers.append(
            header::WARNING,
            HeaderValue::from_str(&storage).expect("a header"),
        );
        headers.append(
            header::WARNING,
            HeaderValue::from_static("299 - \"metadata.finalizers: \\\"x\\\": prefer a domain-qualified finalizer name\""),
        );
        headers.append(header::CONTENT_LENGTH, HeaderValue::from_static("12"));
        headers.append(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let kept = forwarded(headers);
        let warnings: Vec<&str> = kept
            .get_all(header::WARNING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect();
        assert_eq!(
            warnings,
            ["299 - \"metadata.finalizers: \\\"x\\\": prefer a domain-qualified finalizer name\""]
        );
        assert!(kept.get(header::CONTENT_LENGTH).is_none());
        assert_eq!(
            kept.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
    }

    #[test]
    fn bodies_that_are_objects_are_kept_for_validation() {
        let yaml =
            "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: a.b\n";
        let prepared = to_storage(
            Some(&HeaderValue::from_static("application/apply-patch+yaml")),
            Bytes::from(yaml),
        );
        assert_eq!(
            prepared.object.map(|o| o["metadata"]["name"].clone()),
            Some(json!("a.b"))
        );
        let patch = to_storage(
            Some(&HeaderValue::from_static("application/json-patch+json")),
            Bytes::from(r#"[{"op":"remove","path":"/spec/zones"}]"#),
        );
        assert!(patch.object.is_none());
    }
}
