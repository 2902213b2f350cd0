//! A CRD version taken over and given back, legacy and aggregated discovery, the OpenAPI v3 index.

use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use serde_json::{Value, json};

use super::backend::{GROUP, VERSION};
use super::*;

fn crd(storage_name: &str) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": VERSION, "served": true, "storage": true, "schema": schema},
                {"name": storage_name, "served": true, "storage": false, "schema": schema}]}})
}

async fn versions_of(http: &reqwest::Client, url: &str, token: &str) -> (Vec<String>, String) {
    let doc = get_json(http, url, token, &format!("/apis/{GROUP}")).await;
    let versions = doc["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap().to_string())
        .collect();
    (
        versions,
        doc["preferredVersion"]["version"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

#[tokio::test]
async fn an_apiservice_shadows_the_crd_version_it_serves_and_leaves_the_others_served() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let (http, url, token) = raw(&server);
    apply(
        &client,
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        crd("storage"),
    )
    .await;
    namespace(&client).await;
    let local: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &widgets_resource());
    flotilla_testing::eventually("the CRD served", || async {
        local
            .create(&PostParams::default(), &widget("stored", 7))
            .await
            .ok()
    })
    .await;
    assert_eq!(
        versions_of(&http, &url, &token).await,
        (vec!["v1".into(), "storage".into()], "v1".into())
    );
    server.shutdown().await;

    // The same data dir with an APIService taking over v1.
    let (server, client, backend) = setup(dir.path(), 200).await;
    let (http, url, token) = raw(&server);
    let proxied: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &widgets_resource());
    assert!(
        proxied
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty(),
        "v1 is the backend's now"
    );
    assert!(
        !backend
            .seen_under(&format!("/apis/{GROUP}/{VERSION}/namespaces"))
            .is_empty()
    );
    let mut storage = widgets_resource();
    storage.version = "storage".into();
    storage.api_version = format!("{GROUP}/storage");
    let kept: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &storage);
    let stored = kept.get("stored").await.unwrap();
    assert_eq!(
        (
            stored.data["spec"]["size"].clone(),
            stored.types.unwrap().api_version
        ),
        (json!(7), format!("{GROUP}/storage"))
    );
    // Legacy discovery lists both, the APIService's version first (2000/200 over the CRD's 1000/100).
    assert_eq!(
        versions_of(&http, &url, &token).await,
        (vec!["v1".into(), "storage".into()], "v1".into())
    );
    let resources = get_json(&http, &url, &token, &format!("/apis/{GROUP}/{VERSION}")).await;
    assert_eq!(
        resources["resources"][0]["shortNames"],
        json!(["wd"]),
        "the backend's own answer"
    );
    // Aggregated discovery: the backend's resources for v1, the CRD's for storage.
    let group = flotilla_testing::eventually("v1 fetched from the backend", || async {
        aggregated_group(&http, &url, &token)
            .await
            .filter(|g| g["versions"][0]["freshness"] == "Current")
    })
    .await;
    let versions: Vec<&str> = group["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "storage"]);
    assert_eq!(
        group["versions"][0]["resources"][0]["shortNames"],
        json!(["wd"])
    );
    assert!(
        group["versions"][1]["resources"][0]
            .get("shortNames")
            .is_none()
    );
    // kube-rs discovery of both flavours finds the group with both versions.
    for discovery in [
        kube::Discovery::new(client.clone()).run().await.unwrap(),
        kube::Discovery::new(client.clone())
            .run_aggregated()
            .await
            .unwrap(),
    ] {
        let g = discovery
            .groups()
            .find(|g| g.name() == GROUP)
            .expect("group discovered");
        assert_eq!(g.versions().collect::<Vec<_>>(), ["v1", "storage"]);
        assert_eq!(g.preferred_version_or_latest(), "v1");
    }
    // A low version priority leaves the CRD's version preferred, as in kube-aggregator.
    apply(
        &client,
        "apiregistration.k8s.io",
        "apiservices",
        "APIService",
        apiservice(&backend, 10),
    )
    .await;
    flotilla_testing::eventually("storage preferred", || async {
        let got = versions_of(&http, &url, &token).await;
        (got == (vec!["storage".into(), "v1".into()], "storage".into())).then_some(())
    })
    .await;
    // Without the APIService the CRD serves v1 again.
    dynamic(
        &client,
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
    )
    .delete(APISERVICE, &DeleteParams::default())
    .await
    .unwrap();
    flotilla_testing::eventually("v1 served locally again", || async {
        let items = proxied.list(&Default::default()).await.ok()?.items;
        (items.len() == 1).then_some(())
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_openapi_v3_index_lists_the_backends_document_and_proxies_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _client, _backend) = setup(dir.path(), 200).await;
    let (http, url, token) = raw(&server);
    let key = format!("apis/{GROUP}/{VERSION}");
    let entry = flotilla_testing::eventually("the OpenAPI index entry", || async {
        let root: Value = http
            .get(format!("{url}/openapi/v3"))
            .header("Authorization", &token)
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        root["paths"].get(&key).cloned()
    })
    .await;
    let target = entry["serverRelativeURL"].as_str().unwrap();
    assert_eq!(target, format!("/openapi/v3/{key}?hash=F00D"));
    let doc = get_json(&http, &url, &token, target).await;
    assert_eq!(doc["info"]["title"], "fake backend");
    server.shutdown().await;
}
