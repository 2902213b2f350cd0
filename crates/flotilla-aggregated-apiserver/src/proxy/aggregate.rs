//! `clusters/*/proxy/{path}`: one request over every cluster, as Karmada's `aggregate.go` answers it.
//!
//! - A path that names no resource (`/api`, `/version`) goes to the control plane itself. (Karmada sends it
//!   with its own credentials; here it impersonates the caller, so the control plane's RBAC applies.)
//! - A path naming one object is first read (GET) in every cluster as the caller; the request then goes to
//!   the one cluster that answered 200, or is answered 404 (none) or 409 (several, named). A subresource is
//!   read with its object but `exec` and `log`, which are read as the object itself (Karmada's
//!   `requestURLStr`): `pods/{name}/exec` goes, upgrade and all, to the one cluster holding the pod.
//! - A path naming a collection is answered only for `list`: every cluster's list, merged, the first one's
//!   metadata kept; other verbs are 405.
//!
//! Clusters that cannot be reached or whose settings are unusable are left out, as Karmada leaves them out.

use std::sync::Arc;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flotilla_api::cluster::v1alpha1::Cluster;
use futures::future::join_all;
use http::{HeaderMap, Request, StatusCode, header};
use http_body_util::BodyExt;
use kube::ResourceExt;
use serde_json::Value;

use super::forward::{Target, without_hop_by_hop};
use super::{Clients, Proxy, clean_join, path_and_query};
use crate::error::{RequestError, plain_error};
use crate::user::UserInfo;
use flotilla_apimachinery::request_info::{RequestInfo, parse};

/// A cluster that can be asked, with its clients.
struct Reachable {
    cluster: String,
    clients: Clients,
}

/// Answers `path` (below `clusters/*/proxy`) over every cluster.
pub(crate) async fn serve(
    proxy: &Proxy,
    user: &UserInfo,
    path: &str,
    request: Request<Body>,
) -> Result<Response, RequestError> {
    let query = request.uri().query().unwrap_or_default().to_owned();
    let info = parse(request.method().as_str(), path, &query);
    if !parse("GET", path, "").is_resource_request {
        let target = Target {
            clients: &proxy.control_plane,
            path_and_query: path_and_query(&clean_join(path), &query),
            identity: user.impersonation_headers(),
            cluster: "*",
        };
        return proxy.pass(target, request).await;
    }
    let reachable = reachable(proxy).await;
    if !parse("GET", path, "").name.is_empty() {
        return named(proxy, user, path, &info, reachable, request).await;
    }
    if info.verb != "list" {
        return Ok(plain_error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("Request verb {} is not support", info.verb),
        ));
    }
    list(user, path, &query, reachable).await
}

/// Every cluster whose client could be built.
async fn reachable(proxy: &Proxy) -> Vec<Reachable> {
    let clusters: Vec<Arc<Cluster>> = proxy.members.clusters();
    let built = join_all(clusters.iter().map(|cluster| async move {
        let name = cluster.name_any();
        match proxy.connections.connect(&proxy.members, cluster).await {
            Ok(clients) => Some(Reachable {
                cluster: name,
                clients,
            }),
            Err(error) => {
                tracing::debug!(cluster = %name, error = %crate::error::chain(&error), "left out of clusters/*/proxy");
                None
            }
        }
    }))
    .await;
    built.into_iter().flatten().collect()
}

/// A GET of `path_and_query` in one cluster as `user`, with no other header (Karmada's "simple request").
async fn get(
    cluster: &Reachable,
    user: &UserInfo,
    path_and_query: &str,
) -> Option<http::Response<kube::client::Body>> {
    let mut request = Request::get(path_and_query)
        .body(kube::client::Body::empty())
        .ok()?;
    *request.headers_mut() = user.member_impersonation_headers();
    match cluster.clients.requests.send(request).await {
        Ok(answer) => Some(answer),
        Err(error) => {
            tracing::debug!(cluster = %cluster.cluster, error = %crate::error::chain(&error), "clusters/*/proxy request failed");
            None
        }
    }
}

/// The one cluster holding the named object gets the request.
async fn named(
    proxy: &Proxy,
    user: &UserInfo,
    path: &str,
    info: &RequestInfo,
    reachable: Vec<Reachable>,
    request: Request<Body>,
) -> Result<Response, RequestError> {
    let probe = object_path(info);
    let answers = join_all(reachable.iter().map(|cluster| {
        let probe = probe.clone();
        async move {
            get(cluster, user, &probe)
                .await
                .is_some_and(|answer| answer.status() == StatusCode::OK)
        }
    }))
    .await;
    let holding: Vec<&Reachable> = reachable
        .iter()
        .zip(answers)
        .filter_map(|(cluster, found)| found.then_some(cluster))
        .collect();
    match holding.as_slice() {
        [] => Ok(plain_error(
            StatusCode::NOT_FOUND,
            "resource not found or don't have permission to get it",
        )),
        [only] => {
            let query = request.uri().query().unwrap_or_default().to_owned();
            let target = Target {
                clients: &only.clients,
                path_and_query: path_and_query(&clean_join(path), &query),
                identity: user.member_impersonation_headers(),
                cluster: &only.cluster,
            };
            proxy.pass(target, request).await
        }
        several => {
            let names: Vec<&str> = several.iter().map(|c| c.cluster.as_str()).collect();
            Ok(plain_error(
                StatusCode::CONFLICT,
                &format!(
                    "conflict resource, exist in more than one cluster: {}",
                    names.join(",")
                ),
            ))
        }
    }
}

/// The path of the object a request names (Karmada's `requestURLStr`): its subresource kept but for `exec`
/// and `log`, which are read through the object itself.
fn object_path(info: &RequestInfo) -> String {
    let mut parts = vec![info.api_prefix.as_str()];
    if !info.api_group.is_empty() {
        parts.push(&info.api_group);
    }
    parts.push(&info.api_version);
    if !info.namespace.is_empty() {
        parts.extend(["namespaces", info.namespace.as_str()]);
    }
    for part in [&info.resource, &info.name] {
        if !part.is_empty() {
            parts.push(part);
        }
    }
    if !info.subresource.is_empty() && info.subresource != "exec" && info.subresource != "log" {
        parts.push(&info.subresource);
    }
    format!("/{}", parts.join("/"))
}

/// Every cluster's list, merged.
async fn list(
    user: &UserInfo,
    path: &str,
    query: &str,
    reachable: Vec<Reachable>,
) -> Result<Response, RequestError> {
    let target = path_and_query(&clean_join(path), query);
    let answers = join_all(reachable.iter().map(|cluster| {
        let target = target.clone();
        async move {
            let answer = get(cluster, user, &target).await?;
            if answer.status() != StatusCode::OK {
                tracing::debug!(cluster = %cluster.cluster, status = %answer.status(), "clusters/*/proxy list not OK");
                return None;
            }
            let (parts, body) = answer.into_parts();
            let body = body.collect().await.ok()?.to_bytes();
            Some((parts.headers, body))
        }
    }))
    .await;
    let answers: Vec<(HeaderMap, Bytes)> = answers.into_iter().flatten().collect();
    let Some((first_headers, _)) = answers.first() else {
        return Ok(plain_error(StatusCode::NOT_FOUND, "not found"));
    };
    let first_headers = without_hop_by_hop(first_headers.clone());
    let Some(merged) = merge_lists(answers.iter().map(|(_, body)| body)) else {
        return Ok(plain_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no cluster answered with a list",
        ));
    };
    let body = merged.to_string();
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response();
    for (name, value) in &first_headers {
        if name != header::CONTENT_LENGTH && !response.headers().contains_key(name) {
            response.headers_mut().append(name, value.clone());
        }
    }
    Ok(response)
}

/// The lists in `bodies` as one: the first that parses is the base, the others' items are appended. Items
/// without `apiVersion` and `kind` get the list's (`PodList` items become `Pod`), as client-go's unstructured
/// decoding sets them. Bodies that are not lists are skipped; `None` when none is.
pub(crate) fn merge_lists<'a>(bodies: impl IntoIterator<Item = &'a Bytes>) -> Option<Value> {
    let mut merged: Option<Value> = None;
    for body in bodies {
        let Ok(Value::Object(mut list)) = serde_json::from_slice::<Value>(body) else {
            continue;
        };
        let Some(kind) = list.get("kind").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let api_version = list.get("apiVersion").cloned().unwrap_or(Value::Null);
        let item_kind = kind.strip_suffix("List").unwrap_or(&kind).to_owned();
        let mut items = match list.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        for item in &mut items {
            if let Some(object) = item.as_object_mut()
                && object.get("kind").is_none_or(|k| k.as_str() == Some(""))
                && object
                    .get("apiVersion")
                    .is_none_or(|v| v.as_str() == Some(""))
            {
                object.insert("kind".to_owned(), Value::from(item_kind.clone()));
                object.insert("apiVersion".to_owned(), api_version.clone());
            }
        }
        match &mut merged {
            None => {
                list.insert("items".to_owned(), Value::Array(items));
                merged = Some(Value::Object(list));
            }
            Some(base) => {
                if let Some(Value::Array(all)) = base.get_mut("items") {
                    all.extend(items);
                }
            }
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn bytes(value: Value) -> Bytes {
        Bytes::from(value.to_string())
    }

    #[test]
    fn lists_merge_in_order_keeping_the_first_ones_metadata() {
        let member1 = bytes(json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "10"},
            "items": [{"metadata": {"name": "a"}}],
        }));
        let member2 = bytes(json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "99"},
            "items": [{"metadata": {"name": "b"}}, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}],
        }));
        let not_a_list = Bytes::from_static(b"<html>");
        let merged = merge_lists([&not_a_list, &member1, &member2]).expect("merged");
        assert_eq!(
            merged,
            json!({
                "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "10"},
                "items": [
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}},
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}},
                ],
            })
        );
    }

    #[test]
    fn an_empty_list_still_has_items_and_nothing_is_none() {
        let empty =
            bytes(json!({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {}}));
        assert_eq!(merge_lists([&empty]).expect("merged")["items"], json!([]));
        assert!(merge_lists([&Bytes::from_static(b"{}")]).is_none());
        assert!(merge_lists(std::iter::empty()).is_none());
    }

    #[test]
    fn the_object_probed_is_the_one_named() {
        let probe = |path: &str| object_path(&parse("GET", path, ""));
        assert_eq!(
            probe("/api/v1/namespaces/default/pods/web"),
            "/api/v1/namespaces/default/pods/web"
        );
        assert_eq!(
            probe("/api/v1/namespaces/default/pods/web/log"),
            "/api/v1/namespaces/default/pods/web"
        );
        assert_eq!(
            probe("/api/v1/namespaces/default/pods/web/exec"),
            "/api/v1/namespaces/default/pods/web"
        );
        assert_eq!(
            probe("/apis/apps/v1/namespaces/ns/deployments/d/scale"),
            "/apis/apps/v1/namespaces/ns/deployments/d/scale"
        );
        assert_eq!(probe("/api/v1/nodes/n1"), "/api/v1/nodes/n1");
    }
}
