//! Finer semantics clients rely on: no-op updates, consistent paging snapshots, metadata-only responses,
//! the default ServiceAccount, Event expiry, dry-run updates, the `all` category in aggregated discovery.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, ServiceAccount};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;

use crate::common::{eventually, mk_cm, start, start_with};

/// The next event of a watch, failing the test after 10 s.
async fn next_event<S>(events: &mut S) -> WatchEvent<ConfigMap>
where
    S: futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .expect("the watch is open")
        .expect("a decodable event")
}

/// Creates ConfigMap `name` and opens a watch from its resourceVersion: `(object, resourceVersion, events)`.
async fn created_and_watched(
    cms: &Api<ConfigMap>,
    name: &str,
) -> (
    ConfigMap,
    String,
    BoxStream<'static, kube::Result<WatchEvent<ConfigMap>>>,
) {
    let cm = cms
        .create(&PostParams::default(), &mk_cm(name, json!({})))
        .await
        .unwrap();
    let rv = cm.metadata.resource_version.clone().unwrap();
    let events = cms
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    (cm, rv, events)
}

/// The next event, which must be the real change (MODIFIED) after the writes a watcher must not hear.
async fn first_modified<S>(events: &mut S) -> ConfigMap
where
    S: futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin,
{
    match next_event(events).await {
        WatchEvent::Modified(o) => o,
        other => panic!("expected the real change first, got {other:?}"),
    }
}

#[tokio::test]
async fn unchanged_updates_take_no_resource_version_and_wake_no_watcher() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let (cm, rv, mut events) = created_and_watched(&cms, "same").await;
    let again = cms
        .replace("same", &PostParams::default(), &cm)
        .await
        .unwrap();
    assert_eq!(
        again.metadata.resource_version.as_deref(),
        Some(rv.as_str())
    );
    // A real change afterwards is the first event the watcher sees.
    let mut changed = again.clone();
    changed.data = Some([("k".to_string(), "w".to_string())].into());
    let changed = cms
        .replace("same", &PostParams::default(), &changed)
        .await
        .unwrap();
    let first = first_modified(&mut events).await;
    assert_eq!(
        first.metadata.resource_version,
        changed.metadata.resource_version
    );
    server.shutdown().await;
}

#[tokio::test]
async fn paging_continues_from_a_consistent_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    for n in ["p1", "p2", "p3", "p4"] {
        cms.create(&PostParams::default(), &mk_cm(n, json!({})))
            .await
            .unwrap();
    }
    // The first page is `kube-root-ca.crt` (every namespace holds it) and p1.
    let first = cms.list(&ListParams::default().limit(2)).await.unwrap();
    let token = first.metadata.continue_.clone().expect("more pages");
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    // Changes after the first page must not show in the rest of this list.
    cms.delete("p3", &DeleteParams::default()).await.unwrap();
    cms.create(&PostParams::default(), &mk_cm("p5", json!({})))
        .await
        .unwrap();
    let rest = cms
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    let names: Vec<_> = rest
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(names, ["p2", "p3", "p4"]);
    assert_eq!(
        rest.metadata.resource_version,
        first.metadata.resource_version
    );
    assert!(rest.metadata.continue_.is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn metadata_only_get_list_and_watch() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    cms.create(
        &PostParams::default(),
        &mk_cm("meta", json!({"labels": {"a": "b"}})),
    )
    .await
    .unwrap();
    let one = cms.get_metadata("meta").await.unwrap();
    assert_eq!(
        one.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert_eq!(
        one.metadata
            .labels
            .unwrap_or_default()
            .get("a")
            .map(String::as_str),
        Some("b")
    );
    let list = cms.list_metadata(&ListParams::default()).await.unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|m| m.metadata.name.as_deref())
        .collect();
    assert_eq!(names, ["kube-root-ca.crt", "meta"]);
    assert_eq!(list.types.kind, "PartialObjectMetadataList");
    let rv = list.metadata.resource_version.clone().unwrap();
    let mut events = cms
        .watch_metadata(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    cms.create(&PostParams::default(), &mk_cm("meta2", json!({})))
        .await
        .unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match ev {
        WatchEvent::Added(o) => {
            assert_eq!(
                o.types.map(|t| t.kind),
                Some("PartialObjectMetadata".to_string())
            );
            assert_eq!(o.metadata.name.as_deref(), Some("meta2"));
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn new_namespaces_get_a_default_service_account() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "fresh"}})).unwrap(),
    )
    .await
    .unwrap();
    let sas: Api<ServiceAccount> = Api::namespaced(client, "fresh");
    eventually("default ServiceAccount", || {
        let sas = sas.clone();
        async move { sas.get_opt("default").await.unwrap().is_some() }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn events_expire_after_their_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start_with(dir.path(), "127.0.0.1:0".parse().unwrap(), |c| {
        c.event_ttl = Duration::from_millis(500);
    })
    .await;
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let ev: Event = serde_json::from_value(json!({"metadata": {"name": "e1"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Test", "message": "m", "type": "Normal"}))
    .unwrap();
    events.create(&PostParams::default(), &ev).await.unwrap();
    let new_api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client, "default");
    let ev2: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
        "metadata": {"name": "e2"}, "eventTime": "2026-11-22T10:00:00.000000Z",
        "reportingController": "test", "reportingInstance": "test-1", "action": "Test",
        "reason": "Test", "type": "Normal"}))
    .unwrap();
    new_api.create(&PostParams::default(), &ev2).await.unwrap();
    assert!(events.get_opt("e1").await.unwrap().is_some());
    eventually("both events expired", || {
        let (events, new_api) = (events.clone(), new_api.clone());
        async move {
            events.get_opt("e1").await.unwrap().is_none()
                && new_api.get_opt("e2").await.unwrap().is_none()
        }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn dry_run_updates_answer_the_live_version_and_persist_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let (cm, rv, mut events) = created_and_watched(&cms, "dry").await;
    let value = |v: &str| json!({"data": {"k": v}});
    let dry = cms
        .patch(
            "dry",
            &PatchParams::default().dry_run(),
            &Patch::Merge(value("dry")),
        )
        .await
        .unwrap();
    assert_eq!(dry.data.unwrap()["k"], "dry");
    assert_eq!(dry.metadata.resource_version.as_deref(), Some(rv.as_str()));
    let mut replaced = cm.clone();
    replaced.data = Some([("k".to_string(), "put".to_string())].into());
    let put = cms
        .replace(
            "dry",
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &replaced,
        )
        .await
        .unwrap();
    assert_eq!(put.data.unwrap()["k"], "put");
    assert_eq!(put.metadata.resource_version.as_deref(), Some(rv.as_str()));
    let stored = cms.get("dry").await.unwrap();
    assert_eq!(stored.data.unwrap()["k"], "v");
    assert_eq!(
        stored.metadata.resource_version.as_deref(),
        Some(rv.as_str())
    );
    // No watcher heard the dry runs: the first event is the real change.
    cms.patch("dry", &PatchParams::default(), &Patch::Merge(value("real")))
        .await
        .unwrap();
    let first = first_modified(&mut events).await;
    assert_eq!(first.data.unwrap()["k"], "real");
    server.shutdown().await;
}

#[tokio::test]
async fn aggregated_discovery_puts_kube_apiservers_kinds_in_the_all_category() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let mut in_all = Vec::new();
    for path in ["/api", "/apis"] {
        let req = http::Request::get(path)
            .header(
                "Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            )
            .body(Vec::new())
            .unwrap();
        let doc: serde_json::Value =
            serde_json::from_str(&client.request_text(req).await.unwrap()).unwrap();
        assert_eq!(doc["kind"], "APIGroupDiscoveryList", "{doc}");
        for group in doc["items"].as_array().unwrap() {
            for version in group["versions"].as_array().unwrap() {
                for r in version["resources"].as_array().unwrap() {
                    if r["categories"]
                        .as_array()
                        .is_some_and(|c| c.contains(&json!("all")))
                    {
                        in_all.push(r["resource"].as_str().unwrap().to_string());
                    }
                }
            }
        }
    }
    // Resources served at two versions (HPAs at autoscaling/v1 and v2) are listed once per version.
    in_all.sort();
    in_all.dedup();
    assert_eq!(
        in_all,
        [
            "cronjobs",
            "daemonsets",
            "deployments",
            "horizontalpodautoscalers",
            "jobs",
            "pods",
            "replicasets",
            "replicationcontrollers",
            "services",
            "statefulsets"
        ]
    );
    server.shutdown().await;
}
