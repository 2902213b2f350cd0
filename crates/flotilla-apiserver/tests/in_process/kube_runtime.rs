//! The kube-rs and kube-runtime paths most likely to part from a real server: the finalizer helper's JSON-patch `test` against
//! a missing `finalizers`, server-side apply, streaming-list watchers (full and metadata-only), and a watcher's
//! relist after a 410.

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PartialObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::watcher::{self, Event};
use serde_json::json;

use crate::common::{eventually, mk_cm, start, start_on};

const FINALIZER: &str = "example.io/cleanup";

/// The next watcher item within 10 s.
async fn next<S, T>(s: &mut S) -> T
where
    S: Stream<Item = T> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(10), s.next())
        .await
        .expect("watcher produced an item in time")
        .expect("watcher stream continues")
}

#[tokio::test]
async fn finalizer_helper_adds_and_removes_its_finalizer() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    // Created without finalizers: the stored object must omit the key so that the helper's
    // `test /metadata/finalizers == null` passes.
    let created = cms
        .create(&PostParams::default(), &mk_cm("guarded", json!({})))
        .await
        .unwrap();
    assert!(created.metadata.finalizers.is_none());
    let reconcile = |ev: Finalizer<ConfigMap>| async move {
        Ok::<_, std::convert::Infallible>(match ev {
            Finalizer::Apply(_) | Finalizer::Cleanup(_) => Action::await_change(),
        })
    };
    finalizer(&cms, FINALIZER, Arc::new(created), reconcile)
        .await
        .expect("first reconcile adds the finalizer");
    let with = cms.get("guarded").await.unwrap();
    assert_eq!(with.metadata.finalizers, Some(vec![FINALIZER.to_string()]));
    finalizer(&cms, FINALIZER, Arc::new(with), reconcile)
        .await
        .expect("apply branch");

    cms.delete("guarded", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = cms.get("guarded").await.unwrap();
    assert!(deleting.metadata.deletion_timestamp.is_some());
    finalizer(&cms, FINALIZER, Arc::new(deleting), reconcile)
        .await
        .expect("cleanup removes the finalizer");
    assert!(cms.get_opt("guarded").await.unwrap().is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn server_side_apply_upserts_removes_and_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let apply = |data: serde_json::Value| {
        Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "applied"}, "data": data}))
    };
    let ctrl = PatchParams::apply("ctrl");
    let cm = cms
        .patch("applied", &ctrl, &apply(json!({"a": "1", "b": "2"})))
        .await
        .expect("apply creates the object");
    assert_eq!(cm.data.as_ref().map(|d| d.len()), Some(2));
    let managers: Vec<_> = cm
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| (m.manager.clone(), m.operation.clone()))
        .collect();
    assert_eq!(
        managers,
        vec![(Some("ctrl".to_string()), Some("Apply".to_string()))]
    );

    // Dropping `b` from the applied configuration removes it.
    let cm = cms
        .patch("applied", &ctrl, &apply(json!({"a": "1"})))
        .await
        .unwrap();
    let keys: Vec<_> = cm.data.unwrap_or_default().into_keys().collect();
    assert_eq!(keys, vec!["a".to_string()]);

    // Another manager changing `a` conflicts unless it forces.
    let err = cms
        .patch(
            "applied",
            &PatchParams::apply("other"),
            &apply(json!({"a": "9"})),
        )
        .await
        .expect_err("conflict");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409 && s.message.contains("conflict with \"ctrl\"")),
        "{err:?}"
    );
    let cm = cms
        .patch(
            "applied",
            &PatchParams::apply("other").force(),
            &apply(json!({"a": "9"})),
        )
        .await
        .unwrap();
    assert_eq!(
        cm.data.unwrap_or_default().get("a").map(String::as_str),
        Some("9")
    );

    // The forced apply took over the only field "ctrl" owned, so "ctrl" no longer appears; ownership reads
    // back the same through GET and LIST (the store keeps it compact in memory).
    let managers = |cm: &ConfigMap| -> Vec<String> {
        cm.metadata
            .managed_fields
            .iter()
            .flatten()
            .filter_map(|m| m.manager.clone())
            .collect()
    };
    assert_eq!(managers(&cms.get("applied").await.unwrap()), ["other"]);
    let listed = cms.list(&Default::default()).await.unwrap();
    assert_eq!(managers(&listed.items[0]), ["other"]);

    // Re-applying an unchanged configuration is a no-op: same resourceVersion.
    let again = cms
        .patch(
            "applied",
            &PatchParams::apply("other").force(),
            &apply(json!({"a": "9"})),
        )
        .await
        .unwrap();
    assert_eq!(
        again.metadata.resource_version,
        cm.metadata.resource_version
    );
    server.shutdown().await;
}

#[tokio::test]
async fn streaming_list_watcher_syncs_then_follows() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    for n in ["s1", "s2"] {
        cms.create(&PostParams::default(), &mk_cm(n, json!({})))
            .await
            .unwrap();
    }
    let mut events =
        watcher::watcher(cms.clone(), watcher::Config::default().streaming_lists()).boxed();
    assert!(matches!(next(&mut events).await, Ok(Event::Init)));
    let mut initial = Vec::new();
    loop {
        match next(&mut events).await.expect("no watcher error") {
            Event::InitApply(cm) => initial.push(cm.metadata.name.unwrap_or_default()),
            Event::InitDone => break,
            other => panic!("unexpected event during the initial list: {other:?}"),
        }
    }
    initial.sort();
    // Every namespace holds the CA ConfigMap, as on a real cluster.
    assert_eq!(initial, vec!["kube-root-ca.crt", "s1", "s2"]);
    cms.create(&PostParams::default(), &mk_cm("s3", json!({})))
        .await
        .unwrap();
    match next(&mut events).await.expect("no watcher error") {
        Event::Apply(cm) => assert_eq!(cm.metadata.name.as_deref(), Some("s3")),
        other => panic!("expected s3, got {other:?}"),
    }
    server.shutdown().await;
}

/// kube-runtime's metadata watcher (`PartialObjectMetadataList` lists, `PartialObjectMetadata` events and
/// bookmarks): with a streaming list its initial-events-end bookmark must decode as metadata too.
#[tokio::test]
async fn metadata_watcher_syncs_by_streaming_list_then_follows() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // kube 5 makes metadata-only requests for an `Api` of `PartialObjectMeta`.
    let metas: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(client, "default");
    cms.create(
        &PostParams::default(),
        &mk_cm("m1", json!({"labels": {"t": "m"}})),
    )
    .await
    .unwrap();
    for config in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let mut events = watcher::watcher(metas.clone(), config.labels("t=m")).boxed();
        let mut initial = Vec::new();
        loop {
            match next(&mut events).await.expect("no watcher error") {
                Event::Init => {}
                Event::InitApply(m) => initial.push(m.metadata.name.unwrap_or_default()),
                Event::InitDone => break,
                other => panic!("unexpected event during the initial list: {other:?}"),
            }
        }
        assert_eq!(initial, ["m1"]);
        let name = format!(
            "m{}",
            cms.list(&Default::default()).await.unwrap().items.len()
        );
        cms.create(
            &PostParams::default(),
            &mk_cm(&name, json!({"labels": {"t": "m"}})),
        )
        .await
        .unwrap();
        match next(&mut events).await.expect("no watcher error") {
            Event::Apply(m) => {
                assert_eq!(m.metadata.name.as_deref(), Some(name.as_str()));
                assert_eq!(
                    m.types.map(|t| t.kind).as_deref(),
                    Some("PartialObjectMetadata")
                );
            }
            other => panic!("expected {name}, got {other:?}"),
        }
        cms.delete(&name, &DeleteParams::default()).await.unwrap();
    }
    server.shutdown().await;
}

/// A watcher holding a resourceVersion from before a restart (the restarted server's history starts at its
/// own counter) gets an ERROR 410 event in a 200 stream and relists, seeing the writes it missed.
#[tokio::test]
async fn watcher_relists_after_410_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (a, client) = start(dir.path()).await;
    let addr = a.local_addr();
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    cms.create(&PostParams::default(), &mk_cm("before", json!({})))
        .await
        .unwrap();
    let mut events = watcher::watcher(cms.clone(), watcher::Config::default()).boxed();
    loop {
        if let Ok(Event::InitDone) = next(&mut events).await {
            break;
        }
    }
    // While the watcher is not polled: restart, write, restart again. Its resume point is now older than
    // anything the last server retains.
    a.shutdown().await;
    let (b, b_client) = start_on(dir.path(), addr).await;
    let b_cms: Api<ConfigMap> = Api::namespaced(b_client, "default");
    b_cms
        .create(&PostParams::default(), &mk_cm("missed", json!({})))
        .await
        .unwrap();
    b.shutdown().await;
    let (c, _) = start_on(dir.path(), addr).await;

    let mut saw_410 = false;
    let mut relisted = Vec::new();
    loop {
        match next(&mut events).await {
            Err(watcher::Error::WatchError(s)) if s.code == 410 => saw_410 = true,
            Err(_) => {}
            Ok(Event::InitApply(cm)) if saw_410 => {
                relisted.push(cm.metadata.name.unwrap_or_default())
            }
            Ok(Event::InitDone) if saw_410 => break,
            Ok(_) => {}
        }
    }
    relisted.sort();
    assert_eq!(relisted, vec!["before", "kube-root-ca.crt", "missed"]);
    c.shutdown().await;
}

#[tokio::test]
async fn deleting_with_remaining_finalizer_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    cms.create(
        &PostParams::default(),
        &mk_cm("held", json!({"finalizers": [FINALIZER]})),
    )
    .await
    .unwrap();
    let marked = cms.delete("held", &DeleteParams::default()).await.unwrap();
    assert!(
        marked.is_left(),
        "deletion with a finalizer returns the object"
    );
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Json::<()>(
            serde_json::from_value(json!([
                {"op": "test", "path": "/metadata/finalizers/0", "value": FINALIZER},
                {"op": "remove", "path": "/metadata/finalizers/0"}
            ]))
            .unwrap(),
        ),
    )
    .await
    .unwrap();
    eventually("held is removed", || {
        let cms = cms.clone();
        async move { cms.get_opt("held").await.unwrap().is_none() }
    })
    .await;
    server.shutdown().await;
}
