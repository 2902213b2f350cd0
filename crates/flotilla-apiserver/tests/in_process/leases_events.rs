//! Leases with optimistic concurrency and MicroTime kept as sent; kube-runtime's event recorder,
//! which creates `events.k8s.io/v1` Events and then merge-patches their series; both Event APIs
//! reading, watching and patching the same objects.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use kube::Resource;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::{Value, json};

use crate::common::{eventually, mk_cm, start};

/// kube-runtime's Recorder as a controller named `flotilla-test` (instance `test-1`) uses it.
fn test_recorder(client: &kube::Client) -> Recorder {
    Recorder::new(
        client.clone(),
        Reporter {
            controller: "flotilla-test".into(),
            instance: Some("test-1".into()),
        },
    )
}

#[tokio::test]
async fn leases_keep_micro_time_and_refuse_stale_updates() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "leader"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                 "renewTime": "2026-11-22T10:00:10.123456Z", "leaseTransitions": 0}}))
    .unwrap();
    let created = leases.create(&PostParams::default(), &lease).await.unwrap();
    // The raw JSON keeps the six fractional digits exactly as sent.
    let raw = client
        .request_text(
            http::Request::get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/leader")
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(
        raw.contains("\"renewTime\":\"2026-11-22T10:00:10.123456Z\""),
        "{raw}"
    );
    let mut renewed = created.clone();
    renewed.spec.as_mut().unwrap().holder_identity = Some("b".into());
    leases
        .replace("leader", &PostParams::default(), &renewed)
        .await
        .unwrap();
    // A second candidate still holding the old resourceVersion loses the race.
    let mut stale = created;
    stale.spec.as_mut().unwrap().holder_identity = Some("c".into());
    let err = leases
        .replace("leader", &PostParams::default(), &stale)
        .await
        .expect_err("stale resourceVersion");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409 && s.reason == "Conflict"),
        "{err:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn kube_runtime_recorder_creates_and_updates_series() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm = cms
        .create(&PostParams::default(), &mk_cm("observed", json!({})))
        .await
        .unwrap();
    let reference: ObjectReference = cm.object_ref(&());
    let recorder = test_recorder(&client);
    let event = Event {
        type_: EventType::Normal,
        reason: "Observed".into(),
        note: Some("seen".into()),
        action: "Observe".into(),
        secondary: None,
    };
    recorder
        .publish(&event, &reference)
        .await
        .expect("first publish creates");
    recorder
        .publish(&event, &reference)
        .await
        .expect("second publish patches the series");
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client, "default");
    let list = events.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1, "{:?}", list.items);
    let series = list.items[0]
        .series
        .as_ref()
        .expect("series after the repeat");
    assert_eq!(series.count, 2);
    assert_eq!(
        list.items[0].reporting_controller.as_deref(),
        Some("flotilla-test")
    );
    server.shutdown().await;
}

async fn raw(client: &kube::Client, path: &str) -> Value {
    let text = client
        .request_text(http::Request::get(path).body(Vec::new()).unwrap())
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn both_event_apis_share_objects_watches_and_field_selectors() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm = cms
        .create(&PostParams::default(), &mk_cm("watched", json!({})))
        .await
        .unwrap();
    let uid = cm.metadata.uid.clone().unwrap();
    let core: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), "default");
    let initial = core.list(&ListParams::default()).await.unwrap();
    let mut watch = core
        .watch(
            &WatchParams::default().timeout(10),
            initial.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    // Written through events.k8s.io by kube-runtime's Recorder ...
    let recorder = test_recorder(&client);
    let event = Event {
        type_: EventType::Warning,
        reason: "Broken".into(),
        note: Some("it broke".into()),
        action: "Check".into(),
        secondary: None,
    };
    recorder.publish(&event, &cm.object_ref(&())).await.unwrap();
    // ... it is watched, listed and selected through the core API as kubectl describe selects it.
    let added = loop {
        match watch.try_next().await.unwrap().expect("a core watch event") {
            WatchEvent::Added(ev) => break ev,
            WatchEvent::Bookmark(_) => continue,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(added.message.as_deref(), Some("it broke"));
    assert_eq!(added.involved_object.uid.as_deref(), Some(uid.as_str()));
    let selector = format!(
        "involvedObject.name=watched,involvedObject.namespace=default,involvedObject.kind=ConfigMap,involvedObject.uid={uid}"
    );
    let listed = core
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1, "{:?}", listed.items);
    let as_core = &listed.items[0];
    assert_eq!(as_core.reason.as_deref(), Some("Broken"));
    assert_eq!(as_core.type_.as_deref(), Some("Warning"));
    assert_eq!(
        as_core.reporting_component.as_deref(),
        Some("flotilla-test")
    );
    assert_eq!(as_core.reporting_instance.as_deref(), Some("test-1"));
    assert_eq!(as_core.action.as_deref(), Some("Check"));
    let none = core
        .list(&ListParams::default().fields("involvedObject.name=other"))
        .await
        .unwrap();
    assert!(none.items.is_empty());
    let newer: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), "default");
    let as_new = newer
        .get(as_core.metadata.name.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(as_new.metadata.uid, as_core.metadata.uid);
    assert_eq!(
        as_new.metadata.resource_version,
        as_core.metadata.resource_version
    );
    assert_eq!(as_new.note.as_deref(), Some("it broke"));

    // Written through the core API, read, selected and patched through events.k8s.io.
    let legacy: k8s_openapi::api::core::v1::Event = serde_json::from_value(json!({
        "metadata": {"name": "legacy.1"},
        "involvedObject": {"kind": "ConfigMap", "name": "watched", "namespace": "default", "uid": uid},
        "reason": "Old", "message": "from core", "type": "Normal", "count": 3,
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-11-22T10:00:00Z", "lastTimestamp": "2026-11-22T10:05:00Z"}))
    .unwrap();
    let created = core.create(&PostParams::default(), &legacy).await.unwrap();
    let view = raw(
        &client,
        "/apis/events.k8s.io/v1/namespaces/default/events/legacy.1",
    )
    .await;
    assert_eq!(view["apiVersion"], "events.k8s.io/v1");
    assert_eq!(view["note"], "from core");
    assert_eq!(view["regarding"]["name"], "watched");
    assert_eq!(view["deprecatedCount"], 3);
    assert_eq!(view["deprecatedSource"]["host"], "node-1");
    assert_eq!(view["deprecatedFirstTimestamp"], "2026-11-22T10:00:00Z");
    assert_eq!(view["deprecatedLastTimestamp"], "2026-11-22T10:05:00Z");
    assert!(view["eventTime"].is_null(), "{view}");
    assert!(view.get("message").is_none() && view.get("involvedObject").is_none());
    assert_eq!(
        view["metadata"]["uid"].as_str(),
        created.metadata.uid.as_deref()
    );
    let selected = raw(
        &client,
        "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dwatched%2Creason%3DOld",
    )
    .await;
    let names: Vec<&str> = selected["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["legacy.1"]);
    // Through events.k8s.io only the series may change (upstream's strict update validation) ...
    let refused = newer
        .patch(
            "legacy.1",
            &PatchParams::default(),
            &Patch::Merge(json!({"note": "rewritten"})),
        )
        .await
        .expect_err("note is immutable through events.k8s.io");
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 422 && s.message.contains("message: Invalid value: \"rewritten\": field is immutable")),
        "{refused:?}"
    );
    newer
        .patch(
            "legacy.1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"series": {"count": 2, "lastObservedTime": "2026-11-22T10:06:00.000000Z"}}),
            ),
        )
        .await
        .unwrap();
    let after = core.get("legacy.1").await.unwrap();
    assert_eq!(after.series.as_ref().and_then(|s| s.count), Some(2));
    assert_eq!(after.count, Some(3));
    // ... while the core API keeps its lenient updates, and the other view sees them.
    core.patch(
        "legacy.1",
        &PatchParams::default(),
        &Patch::Merge(json!({"message": "patched"})),
    )
    .await
    .unwrap();
    assert_eq!(
        newer.get("legacy.1").await.unwrap().note.as_deref(),
        Some("patched")
    );
    // A create through events.k8s.io needs what that API requires.
    let incomplete: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
        "metadata": {"name": "incomplete"}, "eventTime": "2026-11-22T10:00:00.000000Z",
        "reason": "R", "type": "Normal", "deprecatedCount": 2}))
    .unwrap();
    let err = newer
        .create(&PostParams::default(), &incomplete)
        .await
        .expect_err("reportingController, reportingInstance and action are required");
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 422);
    let mut causes: Vec<String> = status
        .details
        .map(|d| d.causes.into_iter().map(|c| c.field).collect())
        .unwrap_or_default();
    // An empty reportingController is also not a qualified name: upstream reports it three times too.
    causes.sort();
    causes.dedup();
    assert_eq!(
        causes,
        [
            "action",
            "count",
            "reportingController",
            "reportingInstance"
        ]
    );
    // Deleting through one API removes the object from both.
    newer.delete("legacy.1", &Default::default()).await.unwrap();
    assert!(core.get_opt("legacy.1").await.unwrap().is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn events_kept_apart_by_an_older_data_dir_are_dropped_at_start() {
    use flotilla_store::ResKey;
    use flotilla_store::{Change, Expect};
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = start(dir.path()).await;
    // Before both Event APIs shared storage, events.k8s.io Events were stored under their own group.
    let old = ResKey::new("events.k8s.io", "events");
    let obj = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "stale", "namespace": "default", "uid": "u-stale"}, "reason": "Old"});
    server
        .store()
        .commit(&old, "default", "stale", Expect::Absent, Change::Put(obj))
        .await
        .unwrap();
    server.shutdown().await;
    let (server, _) = start(dir.path()).await;
    let store = server.store().clone();
    eventually("the unreachable Event dropped", || {
        let store = store.clone();
        let old = old.clone();
        async move { store.list(&old, None).1.is_empty() }
    })
    .await;
    server.shutdown().await;
}
