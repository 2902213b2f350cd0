//! Clusters through `cluster.karmada.io/v1alpha1` land in the CRD and come back as `v1alpha1`: create (JSON
//! and YAML), get, list, Table, watch, every patch type, status, delete and deletecollection.

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSpec, ClusterSyncMode};
use futures::{StreamExt, TryStreamExt};
use http::Request;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
    PostParams, WatchEvent, WatchParams,
};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::support::{Env, Events, as_user, eventually, full};

const CLUSTERS: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";
const ADMIN: [&str; 2] = ["system:masters", "system:authenticated"];

/// A Push Cluster `name` with an API endpoint of its name.
pub(crate) fn cluster(name: &str) -> Cluster {
    Cluster::new(
        name,
        ClusterSpec {
            sync_mode: ClusterSyncMode::Push,
            api_endpoint: format!("https://{name}.example.com:6443"),
            ..ClusterSpec::default()
        },
    )
}

/// The control plane's Clusters at `version`, read directly from the CRD.
pub(crate) fn on_control_plane(client: &Client, version: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cluster.karmada.io", version, "Cluster"),
        "clusters",
    );
    Api::all_with(client.clone(), &resource)
}

/// Every `apiVersion` of a Cluster in `value`: its own and its managed fields'.
fn api_versions(object: &Value) -> Vec<String> {
    let mut found = vec![object["apiVersion"].as_str().unwrap_or_default().to_owned()];
    for entry in object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
    {
        found.push(entry["apiVersion"].as_str().unwrap_or_default().to_owned());
    }
    found
}

fn all_v1alpha1(object: &Value) -> bool {
    api_versions(object)
        .iter()
        .all(|v| v == "cluster.karmada.io/v1alpha1")
}

#[tokio::test]
async fn crud_through_v1alpha1_lands_in_the_crd() {
    let env = Env::start().await;
    let kube = env.kube_as("admin", &ADMIN).await;
    let clusters: Api<Cluster> = Api::all(kube.clone());
    let caller = env.front_proxy();
    let url = |rest: &str| format!("{}{CLUSTERS}{rest}", env.url);

    // Create with kube-rs: the object is in the CRD, stored through the storage version.
    let created = clusters
        .create(&PostParams::default(), &cluster("m1"))
        .await
        .expect("created");
    assert_eq!(created.spec.api_endpoint, "https://m1.example.com:6443");
    let stored = on_control_plane(&env.control.client, "storage")
        .get("m1")
        .await
        .expect("stored");
    assert_eq!(
        stored.data["spec"]["apiEndpoint"],
        "https://m1.example.com:6443"
    );
    let direct = on_control_plane(&env.control.client, "v1alpha1")
        .get("m1")
        .await
        .expect("in the CRD");
    assert_eq!(direct.metadata.uid, created.metadata.uid);

    // Get: the object and its managed fields name v1alpha1.
    let got = caller
        .call(as_user("GET", &url("/m1"), "admin", &ADMIN, full("")))
        .await;
    assert_eq!(got.status, 200, "{}", got.text());
    let object = got.json();
    assert!(all_v1alpha1(&object), "{:?}", api_versions(&object));
    assert!(
        !api_versions(&object)[1..].is_empty(),
        "managed fields are served"
    );

    // Create from YAML.
    let yaml = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m2\n  labels:\n    tier: gold\nspec:\n  syncMode: Pull\n";
    let mut create = as_user("POST", &url(""), "admin", &ADMIN, full(yaml));
    create
        .headers_mut()
        .insert("content-type", "application/yaml".parse().expect("header"));
    let made = caller.call(create).await;
    assert_eq!(made.status, 201, "{}", made.text());
    assert!(all_v1alpha1(&made.json()));
    assert_eq!(made.json()["spec"]["syncMode"], "Pull");

    // List: the list and its items.
    let listed = caller
        .call(as_user("GET", &url("?limit=10"), "admin", &ADMIN, full("")))
        .await;
    let list = listed.json();
    assert_eq!(
        (list["apiVersion"].as_str(), list["kind"].as_str()),
        (Some("cluster.karmada.io/v1alpha1"), Some("ClusterList"))
    );
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(all_v1alpha1));
    let selected = clusters
        .list(&ListParams::default().labels("tier=gold"))
        .await
        .expect("listed");
    assert_eq!(selected.items.len(), 1, "the query string is passed on");

    // Table, as kubectl asks.
    let mut table = as_user("GET", &url(""), "admin", &ADMIN, full(""));
    table.headers_mut().insert(
        "accept",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            .parse()
            .expect("header"),
    );
    let table = caller.call(table).await.json();
    assert_eq!(table["kind"], "Table", "{table}");
    let rows = table["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    for row in rows {
        for entry in row["object"]["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
        {
            assert_eq!(entry["apiVersion"], "cluster.karmada.io/v1alpha1");
        }
    }

    // Patches of every type the CRD takes, and the one it refuses.
    let merge = clusters
        .patch(
            "m1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "eu"}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(merge.spec.region, "eu");
    let json_patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/apiVersion", "value": "cluster.karmada.io/v1alpha1"},
        {"op": "add", "path": "/spec/zones", "value": ["z1"]},
    ]))
    .expect("a JSON patch");
    let patched = clusters
        .patch(
            "m1",
            &PatchParams::default(),
            &Patch::<()>::Json(json_patch),
        )
        .await
        .expect("JSON patch");
    assert_eq!(patched.spec.zones, ["z1"]);
    let apply_yaml = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m1\nspec:\n  syncMode: Push\n  provider: acme\n";
    let mut apply = as_user(
        "PATCH",
        &url("/m1?fieldManager=tester&force=true"),
        "admin",
        &ADMIN,
        full(apply_yaml),
    );
    apply.headers_mut().insert(
        "content-type",
        "application/apply-patch+yaml".parse().expect("header"),
    );
    let applied = caller.call(apply).await;
    assert_eq!(applied.status, 200, "{}", applied.text());
    assert_eq!(applied.json()["spec"]["provider"], "acme");
    let managers = applied.json()["metadata"]["managedFields"].clone();
    assert!(
        managers
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["manager"] == "tester"
                && m["operation"] == "Apply"
                && m["apiVersion"] == "cluster.karmada.io/v1alpha1"),
        "{managers}"
    );
    let mut strategic = as_user(
        "PATCH",
        &url("/m1"),
        "admin",
        &ADMIN,
        full(r#"{"spec":{"region":"us"}}"#),
    );
    strategic.headers_mut().insert(
        "content-type",
        "application/strategic-merge-patch+json"
            .parse()
            .expect("header"),
    );
    // Karmada serves Clusters as a built-in type, which takes `kubectl patch`'s default strategic merge patch.
    let patched = caller.call(strategic).await;
    assert_eq!(patched.status, 200, "{}", patched.text());
    let patched: serde_json::Value = serde_json::from_str(&patched.text()).expect("json");
    assert_eq!(patched["spec"]["region"], "us");
    assert_eq!(patched["apiVersion"], "cluster.karmada.io/v1alpha1");

    // Status: written through the subresource only.
    let status = clusters
        .patch_status(
            "m1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"kubernetesVersion": "v1.37.2"}})),
        )
        .await
        .expect("status patch");
    assert_eq!(
        status.status.map(|s| s.kubernetes_version),
        Some("v1.37.2".to_owned())
    );
    let status = caller
        .call(as_user(
            "GET",
            &url("/m1/status"),
            "admin",
            &ADMIN,
            full(""),
        ))
        .await;
    assert_eq!(status.json()["status"]["kubernetesVersion"], "v1.37.2");
    assert!(all_v1alpha1(&status.json()));

    // Delete one, then the rest by label.
    clusters
        .delete("m1", &DeleteParams::default())
        .await
        .expect("deleted");
    let gone = on_control_plane(&env.control.client, "storage")
        .get_opt("m1")
        .await
        .expect("read");
    assert!(gone.is_none());
    let missing = caller
        .call(as_user("GET", &url("/m1"), "admin", &ADMIN, full("")))
        .await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["reason"], "NotFound");
    clusters
        .create(&PostParams::default(), &cluster("m3"))
        .await
        .expect("created");
    clusters
        .patch(
            "m3",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "gold"}}})),
        )
        .await
        .expect("labelled");
    clusters
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("tier=gold"),
        )
        .await
        .expect("deletecollection");
    eventually("the gold clusters to be gone", || async {
        let left = on_control_plane(&env.control.client, "storage")
            .list(&ListParams::default())
            .await
            .ok()?;
        left.items.is_empty().then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn watches_stream_v1alpha1_events() {
    let env = Env::start().await;
    let kube = env.kube_as("admin", &ADMIN).await;
    let clusters: Api<Cluster> = Api::all(kube.clone());
    clusters
        .create(&PostParams::default(), &cluster("w1"))
        .await
        .expect("created");

    // A raw watch: each line arrives as it happens, with v1alpha1 objects.
    let request: Request<_> = as_user(
        "GET",
        &format!("{}{CLUSTERS}?watch=true&resourceVersion=0", env.url),
        "admin",
        &ADMIN,
        full(""),
    );
    let response = env.front_proxy().send(request).await.expect("a watch");
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("stream=watch"))
    );
    let mut events = Events::of(response);
    let added = events.next().await;
    assert_eq!(added["type"], "ADDED");
    assert!(all_v1alpha1(&added["object"]), "{added}");
    clusters
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "eu"}})),
        )
        .await
        .expect("patched");
    let modified = events.next().await;
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(modified["object"]["spec"]["region"], "eu");
    assert!(all_v1alpha1(&modified["object"]), "{modified}");

    // kube-rs's watch through the aggregated server sees the deletion.
    let latest = clusters.get("w1").await.expect("read");
    let version = latest
        .metadata
        .resource_version
        .clone()
        .expect("a resourceVersion");
    let mut stream = clusters
        .watch(&WatchParams::default(), &version)
        .await
        .expect("a watch")
        .boxed();
    clusters
        .delete("w1", &DeleteParams::default())
        .await
        .expect("deleted");
    let deleted = loop {
        match stream
            .try_next()
            .await
            .expect("an event")
            .expect("the watch stays open")
        {
            WatchEvent::Deleted(cluster) => break cluster,
            WatchEvent::Bookmark(_) | WatchEvent::Added(_) | WatchEvent::Modified(_) => {}
            WatchEvent::Error(error) => panic!("watch error {error:?}"),
        }
    };
    assert_eq!(deleted.metadata.name.as_deref(), Some("w1"));
    env.stop().await;
}
