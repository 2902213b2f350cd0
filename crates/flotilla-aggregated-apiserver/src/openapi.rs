//! OpenAPI for `cluster.karmada.io/v1alpha1`, derived from what the control plane publishes for the CRD's
//! `storage` version (same schema) with the version renamed: `/openapi/v3/apis/cluster.karmada.io/v1alpha1`,
//! the `/openapi/v3` index kube-aggregator reads first, and `/openapi/v2` (the storage version's paths and the
//! definitions they reach).

use std::collections::BTreeSet;

use http::{Request, header};
use kube::Client;
use serde_json::{Map, Value, json};

use crate::discovery::sha512_hex;
use crate::error::RequestError;
use crate::names;

/// The renames, applied to every key and string of a document.
const RENAMES: [(&str, &str); 3] = [
    // Schema names: `io.karmada.cluster.storage.Cluster`.
    (
        "io.karmada.cluster.storage.",
        "io.karmada.cluster.v1alpha1.",
    ),
    // Paths and `apiVersion`s: `/apis/cluster.karmada.io/storage/clusters`.
    ("cluster.karmada.io/storage", "cluster.karmada.io/v1alpha1"),
    // Tags: `clusterKarmadaIo_storage`.
    ("clusterKarmadaIo_storage", "clusterKarmadaIo_v1alpha1"),
];
/// The version as operation ids spell it (`listClusterKarmadaIoStorageCluster`), and its replacement.
const OPERATION_VERSION: (&str, &str) = ("Storage", "V1alpha1");

/// The v3 document's path in the `/openapi/v3` index.
fn v3_key() -> String {
    format!("apis/{}/{}", names::GROUP, names::VERSION)
}

/// `/openapi/v3/apis/cluster.karmada.io/v1alpha1`.
pub(crate) async fn v3(client: &Client) -> Result<Value, RequestError> {
    let path = format!(
        "/openapi/v3/apis/{}/{}",
        names::GROUP,
        names::STORAGE_VERSION
    );
    let mut document = fetch(client, &path).await?;
    rename(&mut document);
    Ok(document)
}

/// `/openapi/v3`: the one group version, with its document's hash in the URL as kube-openapi writes it.
pub(crate) async fn v3_index(client: &Client) -> Result<Value, RequestError> {
    let document = v3(client).await?;
    let hash = sha512_hex(document.to_string().as_bytes());
    let key = v3_key();
    Ok(
        json!({"paths": {key.clone(): {"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}}}),
    )
}

/// `/openapi/v2`.
pub(crate) async fn v2(client: &Client) -> Result<Value, RequestError> {
    let whole = fetch(client, "/openapi/v2").await?;
    let mut document = only_storage_version(&whole);
    rename(&mut document);
    Ok(document)
}

async fn fetch(client: &Client, path: &str) -> Result<Value, RequestError> {
    let failed = |source| RequestError::ControlPlane {
        action: format!("read {path} from the control plane"),
        source,
    };
    let request = Request::get(path)
        .header(header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(RequestError::Response)?;
    let text = client.request_text(request).await.map_err(failed)?;
    serde_json::from_str(&text).map_err(|error| failed(kube::Error::SerdeError(error)))
}

/// A v2 document holding only the storage version's paths and the definitions they reach.
fn only_storage_version(whole: &Value) -> Value {
    let prefix = format!("/apis/{}/{}", names::GROUP, names::STORAGE_VERSION);
    let paths: Map<String, Value> = whole
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(path, _)| path.starts_with(&prefix))
        .map(|(path, item)| (path.clone(), item.clone()))
        .collect();
    let definitions = whole
        .get("definitions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut wanted: Vec<String> = definitions
        .keys()
        .filter(|name| name.starts_with("io.karmada.cluster.storage."))
        .cloned()
        .collect();
    refs(&Value::Object(paths.clone()), &mut wanted);
    let mut kept = BTreeSet::new();
    while let Some(name) = wanted.pop() {
        if kept.insert(name.clone())
            && let Some(definition) = definitions.get(&name)
        {
            refs(definition, &mut wanted);
        }
    }
    let mut document = Map::new();
    for key in ["swagger", "info", "securityDefinitions", "security"] {
        if let Some(value) = whole.get(key) {
            document.insert(key.to_owned(), value.clone());
        }
    }
    document.insert("paths".to_owned(), Value::Object(paths));
    document.insert(
        "definitions".to_owned(),
        Value::Object(
            kept.into_iter()
                .filter_map(|name| Some((name.clone(), definitions.get(&name)?.clone())))
                .collect(),
        ),
    );
    Value::Object(document)
}

/// Collects the definition names `#/definitions/<name>` referenced in `value`.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "$ref"
                    && let Some(name) = inner
                        .as_str()
                        .and_then(|r| r.strip_prefix("#/definitions/"))
                {
                    out.push(name.to_owned());
                } else {
                    refs(inner, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
        _ => {}
    }
}

/// Renames the storage version to `v1alpha1` throughout a document: keys and strings by [`RENAMES`], and
/// `x-kubernetes-group-version-kind` entries.
fn rename(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Some(renamed) = renamed(text) {
                *text = renamed;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rename),
        Value::Object(map) => {
            if map.get("group").and_then(Value::as_str) == Some(names::GROUP)
                && map.get("version").and_then(Value::as_str) == Some(names::STORAGE_VERSION)
            {
                map.insert("version".to_owned(), Value::from(names::VERSION));
            }
            let entries = std::mem::take(map);
            for (key, mut inner) in entries {
                if key == "operationId"
                    && let Value::String(id) = &mut inner
                {
                    // The only operations in the document are the group's: the first "Storage" is the version.
                    *id = id.replacen(OPERATION_VERSION.0, OPERATION_VERSION.1, 1);
                }
                rename(&mut inner);
                map.insert(renamed(&key).unwrap_or(key), inner);
            }
        }
        _ => {}
    }
}

fn renamed(text: &str) -> Option<String> {
    RENAMES
        .iter()
        .any(|(from, _)| text.contains(from))
        .then(|| {
            RENAMES
                .iter()
                .fold(text.to_owned(), |acc, (from, to)| acc.replace(from, to))
        })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn every_name_of_the_storage_version_is_renamed() {
        let mut document = json!({
            "paths": {
                "/apis/cluster.karmada.io/storage/clusters/{name}": {
                    "get": {
                        "operationId": "readClusterKarmadaIoStorageCluster",
                        "tags": ["clusterKarmadaIo_storage"],
                        "responses": {"200": {"$ref": "#/components/schemas/io.karmada.cluster.storage.Cluster"}},
                        "x-kubernetes-group-version-kind": {"group": "cluster.karmada.io", "version": "storage", "kind": "Cluster"},
                    },
                },
            },
            "components": {"schemas": {
                "io.karmada.cluster.storage.Cluster": {"description": "Cluster", "x-kubernetes-group-version-kind": [
                    {"group": "cluster.karmada.io", "version": "storage", "kind": "Cluster"}]},
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"description": "storage of metadata"},
            }},
        });
        rename(&mut document);
        assert_eq!(
            document,
            json!({
                "paths": {
                    "/apis/cluster.karmada.io/v1alpha1/clusters/{name}": {
                        "get": {
                            "operationId": "readClusterKarmadaIoV1alpha1Cluster",
                            "tags": ["clusterKarmadaIo_v1alpha1"],
                            "responses": {"200": {"$ref": "#/components/schemas/io.karmada.cluster.v1alpha1.Cluster"}},
                            "x-kubernetes-group-version-kind": {"group": "cluster.karmada.io", "version": "v1alpha1", "kind": "Cluster"},
                        },
                    },
                },
                "components": {"schemas": {
                    "io.karmada.cluster.v1alpha1.Cluster": {"description": "Cluster", "x-kubernetes-group-version-kind": [
                        {"group": "cluster.karmada.io", "version": "v1alpha1", "kind": "Cluster"}]},
                    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"description": "storage of metadata"},
                }},
            })
        );
    }

    #[test]
    fn v2_keeps_the_storage_paths_and_what_they_reach() {
        let whole = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1.37.2"},
            "paths": {
                "/apis/cluster.karmada.io/storage/clusters": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/io.karmada.cluster.storage.ClusterList"}}}}},
                "/apis/cluster.karmada.io/v1alpha1/clusters": {"get": {}},
                "/api/v1/pods": {"get": {}},
            },
            "definitions": {
                "io.karmada.cluster.storage.ClusterList": {"properties": {"items": {"items": {"$ref": "#/definitions/io.karmada.cluster.storage.Cluster"}}, "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}}},
                "io.karmada.cluster.storage.Cluster": {"properties": {"metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}},
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"properties": {"managedFields": {"items": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"}}}},
                "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry": {},
                "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta": {},
                "io.k8s.api.core.v1.Pod": {},
                "io.karmada.cluster.v1alpha1.Cluster": {},
            },
        });
        let mut document = only_storage_version(&whole);
        rename(&mut document);
        let paths: Vec<&String> = document["paths"]
            .as_object()
            .expect("paths")
            .keys()
            .collect();
        assert_eq!(paths, ["/apis/cluster.karmada.io/v1alpha1/clusters"]);
        let definitions: BTreeSet<&str> = document["definitions"]
            .as_object()
            .expect("definitions")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            definitions,
            BTreeSet::from([
                "io.karmada.cluster.v1alpha1.ClusterList",
                "io.karmada.cluster.v1alpha1.Cluster",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
            ])
        );
        assert_eq!(document["swagger"], "2.0");
    }
}
