//! Leases with optimistic concurrency and MicroTime kept as sent (spec §9.3); kube-runtime's event recorder,
//! which creates `events.k8s.io/v1` Events and then merge-patches their series (spec §9.4).

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use kube::Resource;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::json;

use crate::common::{mk_cm, start};

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
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "flotilla-test".into(),
            instance: Some("test-1".into()),
        },
    );
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
