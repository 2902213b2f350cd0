//! Discovery of `cluster.karmada.io/v1alpha1` as Karmada's aggregated API server answers it: `clusters` (a
//! generic store: the eight storage verbs, singular `cluster`, no short names or categories, its storage
//! version hash), `clusters/proxy` (kind `ClusterProxyOptions`, the verbs of its connect methods) and
//! `clusters/status`; `/apis` and `/apis/cluster.karmada.io`; and aggregated discovery (`apidiscovery.k8s.io/v2`)
//! for `/apis` when the `Accept` header asks for it, as kube-aggregator does first.

use axum::response::{IntoResponse, Response};
use base64::Engine;
use http::{HeaderMap, StatusCode, header};
use serde_json::{Value, json};

use crate::error::json_response;
use crate::names;

/// The content type of aggregated discovery, which is also what a client puts in `Accept` to ask for it.
const AGGREGATED_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// `clusters`' verbs: those of a generic registry store.
const CLUSTER_VERBS: [&str; 8] = flotilla_apimachinery::verbs::STORE;
/// `clusters/proxy`'s verbs: its connect methods GET POST PUT PATCH DELETE (HEAD and OPTIONS map to none).
const PROXY_VERBS: [&str; 5] = ["create", "delete", "get", "patch", "update"];
/// `clusters/status`' verbs.
const STATUS_VERBS: [&str; 3] = flotilla_apimachinery::verbs::SUBRESOURCE;

/// kube's storage version hash of the Cluster kind as Karmada stores it (`cluster.karmada.io/v1alpha1`).
fn storage_version_hash() -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{}/{}/Cluster", names::GROUP, names::VERSION).as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

/// The SHA-512 of `bytes` in upper-case hex: kube's ETag of discovery documents and hash of OpenAPI ones.
pub(crate) fn sha512_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA512, bytes)
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect()
}

/// `/apis/cluster.karmada.io/v1alpha1`.
pub(crate) fn resource_list() -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": names::API_VERSION,
        "resources": [
            {
                "name": "clusters",
                "singularName": "cluster",
                "namespaced": false,
                "kind": "Cluster",
                "verbs": CLUSTER_VERBS,
                "storageVersionHash": storage_version_hash(),
            },
            {
                "name": "clusters/proxy",
                "singularName": "",
                "namespaced": false,
                "kind": "ClusterProxyOptions",
                "verbs": PROXY_VERBS,
            },
            {
                "name": "clusters/status",
                "singularName": "",
                "namespaced": false,
                "kind": "Cluster",
                "verbs": STATUS_VERBS,
            },
        ],
    })
}

fn group_version() -> Value {
    json!({"groupVersion": names::API_VERSION, "version": names::VERSION})
}

/// `/apis/cluster.karmada.io`.
pub(crate) fn group() -> Value {
    json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": names::GROUP,
        "versions": [group_version()],
        "preferredVersion": group_version(),
    })
}

/// `/apis`, legacy form.
pub(crate) fn group_list() -> Value {
    let mut group = group();
    if let Some(object) = group.as_object_mut() {
        object.remove("kind");
        object.remove("apiVersion");
    }
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [group]})
}

/// `/apis`, aggregated form.
pub(crate) fn aggregated_group_list() -> Value {
    let response_kind = |kind: &str| json!({"group": "", "version": "", "kind": kind});
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [{
            "metadata": {"name": names::GROUP},
            "versions": [{
                "version": names::VERSION,
                "resources": [{
                    "resource": "clusters",
                    "responseKind": response_kind("Cluster"),
                    "scope": "Cluster",
                    "singularResource": "cluster",
                    "verbs": CLUSTER_VERBS,
                    "subresources": [
                        {"subresource": "proxy", "responseKind": response_kind("ClusterProxyOptions"), "verbs": PROXY_VERBS},
                        {"subresource": "status", "responseKind": response_kind("Cluster"), "verbs": STATUS_VERBS},
                    ],
                }],
                "freshness": "Current",
            }],
        }],
    })
}

/// Whether `headers` ask for aggregated discovery: an `Accept` entry naming `apidiscovery.k8s.io` `v2`.
fn wants_aggregated(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|range| {
            let params: Vec<String> = range
                .split(';')
                .map(|p| p.trim().replace(' ', "").to_ascii_lowercase())
                .collect();
            params
                .first()
                .is_some_and(|media| media == "application/json")
                && params.iter().any(|p| p == "g=apidiscovery.k8s.io")
                && params.iter().any(|p| p == "v=v2")
                && params.iter().any(|p| p == "as=apigroupdiscoverylist")
        })
}

/// `/apis`: aggregated when asked for, with an ETag and `304` for a matching `If-None-Match`, as kube's
/// aggregated discovery handler answers; the legacy list otherwise.
pub(crate) fn apis(headers: &HeaderMap) -> Response {
    if !wants_aggregated(headers) {
        return json_response(StatusCode::OK, &group_list());
    }
    let body = aggregated_group_list().to_string();
    let etag = format!("\"{}\"", sha512_hex(body.as_bytes()));
    let cached = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|value| value.as_bytes() == etag.as_bytes());
    let common = [
        (header::ETAG, etag),
        (header::VARY, "Accept".to_owned()),
        (header::CACHE_CONTROL, "public".to_owned()),
    ];
    if cached {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    (
        StatusCode::OK,
        common,
        [(header::CONTENT_TYPE, AGGREGATED_V2)],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn resources_are_karmadas() {
        let list = resource_list();
        let resources = list["resources"].as_array().expect("resources");
        let names: Vec<&str> = resources
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(names, ["clusters", "clusters/proxy", "clusters/status"]);
        assert_eq!(resources[0]["verbs"], json!(CLUSTER_VERBS));
        assert_eq!(resources[1]["kind"], "ClusterProxyOptions");
        assert_eq!(
            resources[1]["verbs"],
            json!(["create", "delete", "get", "patch", "update"])
        );
        assert!(
            resources[0].get("shortNames").is_none() && resources[0].get("categories").is_none()
        );
    }

    #[test]
    fn the_storage_version_hash_is_kubes() {
        // kube's StorageVersionHash("cluster.karmada.io", "v1alpha1", "Cluster"): base64 of the first 8
        // bytes of the SHA-256 of "cluster.karmada.io/v1alpha1/Cluster".
        let hash = storage_version_hash();
        assert_eq!(hash.len(), 12);
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&hash)
            .expect("base64");
        let digest = ring::digest::digest(
            &ring::digest::SHA256,
            b"cluster.karmada.io/v1alpha1/Cluster",
        );
        assert_eq!(raw, &digest.as_ref()[..8]);
    }

    fn accept(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn aggregated_discovery_only_when_asked() {
        assert!(wants_aggregated(&accept(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        )));
        assert!(wants_aggregated(&accept(
            "application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList"
        )));
        assert!(!wants_aggregated(&accept("application/json")));
        assert!(!wants_aggregated(&accept(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        )));
        assert!(!wants_aggregated(&HeaderMap::new()));
    }

    #[test]
    fn aggregated_discovery_revalidates_by_etag() {
        let headers = accept(AGGREGATED_V2);
        let first = apis(&headers);
        assert_eq!(first.status(), StatusCode::OK);
        assert_eq!(
            first
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
            Some(AGGREGATED_V2)
        );
        let etag = first.headers().get(header::ETAG).cloned().expect("an etag");
        let mut again = headers.clone();
        again.insert(header::IF_NONE_MATCH, etag);
        assert_eq!(apis(&again).status(), StatusCode::NOT_MODIFIED);
        assert_eq!(apis(&HeaderMap::new()).status(), StatusCode::OK);
    }

    #[test]
    fn legacy_group_list_names_the_preferred_version() {
        let list = group_list();
        assert_eq!(list["groups"][0]["name"], "cluster.karmada.io");
        assert_eq!(list["groups"][0]["preferredVersion"]["version"], "v1alpha1");
        assert!(list["groups"][0].get("kind").is_none());
    }
}
