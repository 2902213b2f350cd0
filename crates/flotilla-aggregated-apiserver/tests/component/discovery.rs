//! Discovery and OpenAPI as kube-aggregator fetches them, the OpenAPI documents derived from the embedded
//! control plane's documents for the CRD's `storage` version.

use http::Request;
use serde_json::Value;

use crate::support::{Env, full};

fn request(url: &str, accept: Option<&str>) -> Request<crate::support::Body> {
    let mut builder = Request::get(url)
        .header("x-remote-user", "system:kube-aggregator")
        .header("x-remote-group", "system:masters");
    if let Some(accept) = accept {
        builder = builder.header("accept", accept);
    }
    builder.body(full("")).expect("a request")
}

#[tokio::test]
async fn discovery_and_openapi_name_v1alpha1_only() {
    let env = Env::start().await;
    let aggregator = env.front_proxy();

    let legacy = aggregator
        .call(request(&format!("{}/apis", env.url), None))
        .await;
    assert_eq!(legacy.status, 200);
    assert_eq!(legacy.json()["kind"], "APIGroupList");
    assert_eq!(
        legacy.json()["groups"][0]["preferredVersion"]["groupVersion"],
        "cluster.karmada.io/v1alpha1"
    );

    let v2_accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let aggregated = aggregator
        .call(request(&format!("{}/apis", env.url), Some(v2_accept)))
        .await;
    assert_eq!(aggregated.status, 200);
    assert_eq!(
        aggregated
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    let resources = &aggregated.json()["items"][0]["versions"][0]["resources"];
    assert_eq!(resources[0]["resource"], "clusters");
    let subresources: Vec<&str> = resources[0]["subresources"]
        .as_array()
        .expect("subresources")
        .iter()
        .filter_map(|s| s["subresource"].as_str())
        .collect();
    assert_eq!(subresources, ["proxy", "status"]);

    let list = aggregator
        .call(request(
            &format!("{}/apis/cluster.karmada.io/v1alpha1", env.url),
            None,
        ))
        .await;
    let names: Vec<String> = list.json()["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, ["clusters", "clusters/proxy", "clusters/status"]);

    let index = aggregator
        .call(request(&format!("{}/openapi/v3", env.url), None))
        .await;
    assert_eq!(index.status, 200, "{}", index.text());
    let relative = index.json()["paths"]["apis/cluster.karmada.io/v1alpha1"]["serverRelativeURL"]
        .as_str()
        .expect("a URL")
        .to_owned();
    assert!(
        relative.starts_with("/openapi/v3/apis/cluster.karmada.io/v1alpha1?hash="),
        "{relative}"
    );
    let v3 = aggregator
        .call(request(&format!("{}{relative}", env.url), None))
        .await;
    assert_eq!(v3.status, 200, "{}", v3.text());
    let text = v3.text();
    assert!(
        !text.contains("cluster.karmada.io/storage"),
        "the storage version leaks: {text:.400}"
    );
    let document = v3.json();
    let paths = document["paths"].as_object().expect("paths");
    assert!(!paths.is_empty(), "{text:.400}");
    assert!(
        paths
            .keys()
            .all(|path| path.starts_with("/apis/cluster.karmada.io/v1alpha1/")),
        "{paths:?}"
    );
    let mut kinds = Vec::new();
    let mut operations = Vec::new();
    walk(&document, &mut kinds, &mut operations);
    assert!(!kinds.is_empty());
    assert!(
        kinds.iter().all(|gvk| gvk["version"] == "v1alpha1"),
        "{kinds:?}"
    );
    assert!(
        operations.iter().all(|id| !id.contains("Storage")),
        "{operations:?}"
    );
    for name in document["components"]["schemas"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        assert!(!name.starts_with("io.karmada.cluster.storage."), "{name}");
    }

    let v2 = aggregator
        .call(request(&format!("{}/openapi/v2", env.url), None))
        .await;
    assert_eq!(v2.status, 200, "{}", v2.text());
    let document = v2.json();
    let paths = document["paths"].as_object().expect("paths");
    assert!(!paths.is_empty());
    assert!(
        paths
            .keys()
            .all(|path| path.starts_with("/apis/cluster.karmada.io/v1alpha1")),
        "{paths:?}"
    );
    assert!(!v2.text().contains("cluster.karmada.io/storage"));
    env.stop().await;
}

/// Collects every `x-kubernetes-group-version-kind` entry and `operationId` of a document.
fn walk(value: &Value, kinds: &mut Vec<Value>, operations: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("x-kubernetes-group-version-kind", Value::Array(entries)) => {
                        kinds.extend(entries.iter().cloned())
                    }
                    ("x-kubernetes-group-version-kind", entry) => kinds.push(entry.clone()),
                    ("operationId", Value::String(id)) => operations.push(id.clone()),
                    _ => walk(inner, kinds, operations),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, kinds, operations)),
        _ => {}
    }
}
