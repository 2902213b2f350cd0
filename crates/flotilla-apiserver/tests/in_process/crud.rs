//! CRUD, list, watch, status and scale, restart, and namespace deletion with kube-rs.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use crate::common::{eventually, mk_cm, start};

#[tokio::test]
async fn crud_list_watch_and_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "a", "labels": {"app": "x"}}, "data": {"k": "v"}}),
    )
    .expect("cm");
    let created = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    assert!(created.metadata.uid.is_some());
    let err = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect_err("duplicate");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409),
        "{err:?}"
    );
    let patched = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k2": "v2"}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(
        patched
            .data
            .as_ref()
            .and_then(|d| d.get("k2"))
            .map(String::as_str),
        Some("v2")
    );
    let list = cms
        .list(&ListParams::default().labels("app=x"))
        .await
        .expect("list");
    assert_eq!(list.items.len(), 1);
    let rv: u64 = list
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("rv");

    // A watcher sees the update and the deletion (of `a` alone: `default` also holds `kube-root-ca.crt`).
    let stream = watcher(
        cms.clone(),
        watcher::Config::default().fields("metadata.name=a"),
    )
    .applied_objects();
    let mut stream = Box::pin(stream);
    let first = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("watch event")
        .expect("ok");
    assert_eq!(first.and_then(|c| c.metadata.name).as_deref(), Some("a"));
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k3": "v3"}})),
    )
    .await
    .expect("patch");
    let second = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("watch event")
        .expect("ok");
    assert!(
        second
            .and_then(|c| c.data)
            .is_some_and(|d| d.contains_key("k3"))
    );
    cms.delete("a", &DeleteParams::default())
        .await
        .expect("delete");

    // Deployments: generation, status split, scale.
    let deploys: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}, "status": {"replicas": 5}})).expect("deploy");
    let d = deploys
        .create(&PostParams::default(), &d)
        .await
        .expect("create deploy");
    assert_eq!(d.metadata.generation, Some(1));
    // The client's status is dropped; what remains is the empty status kube-apiserver writes.
    assert_eq!(d.status, Some(Default::default()));
    let d = deploys
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 1}})),
        )
        .await
        .expect("status");
    assert_eq!(d.metadata.generation, Some(1));
    assert_eq!(d.status.and_then(|s| s.replicas), Some(1));
    let scale = deploys.get_scale("web").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(1));
    deploys
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("scale patch");
    let d = deploys.get("web").await.expect("get");
    assert_eq!(d.spec.and_then(|s| s.replicas), Some(3));
    assert_eq!(d.metadata.generation, Some(2));

    // Restart on the same data dir keeps objects and moves the RV forward.
    server.shutdown().await;
    let (server, client) = start(dir.path()).await;
    let deploys: Api<Deployment> = Api::namespaced(client.clone(), "default");
    assert!(deploys.get("web").await.is_ok());
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let list = cms.list(&ListParams::default()).await.expect("list");
    let rv2: u64 = list
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("rv");
    assert!(rv2 > rv);
    server.shutdown().await;
}

#[tokio::test]
async fn namespace_deletion_removes_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, client) = start(dir.path()).await;
    let nss: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "doomed"}})).expect("ns");
    nss.create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    cms.create(&PostParams::default(), &mk_cm("x", json!({})))
        .await
        .expect("create cm");
    cms.create(
        &PostParams::default(),
        &mk_cm("held", json!({"finalizers": ["example.io/hold"]})),
    )
    .await
    .expect("create held cm");
    let marked = nss
        .delete("doomed", &DeleteParams::default())
        .await
        .expect("delete ns")
        .left()
        .expect("the namespace stays while it has content");
    assert_eq!(
        marked.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    let err = cms
        .create(&PostParams::default(), &mk_cm("y", json!({})))
        .await
        .expect_err("no new content in a terminating namespace");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403 && s.message.contains("because it is being terminated")),
        "{err:?}"
    );
    eventually("content without finalizers deleted", || {
        let cms = cms.clone();
        async move { cms.get_opt("x").await.ok().flatten().is_none() }
    })
    .await;
    // The finalizer keeps the namespace terminating until its holder lets go.
    let held = cms.get("held").await.expect("held stays");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(nss.get_opt("doomed").await.expect("get ns").is_some());
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release the finalizer");
    eventually("namespace gone", || {
        let nss = nss.clone();
        async move { nss.get_opt("doomed").await.ok().flatten().is_none() }
    })
    .await;
    let mut events = Box::pin(watcher(nss.clone(), watcher::Config::default()).applied_objects());
    assert!(
        tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .is_ok()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn health_endpoints_list_their_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, client) = start(dir.path()).await;
    let get = |path: &str| {
        let client = client.clone();
        let req = http::Request::get(path).body(Vec::new()).expect("request");
        async move { client.request_text(req).await }
    };
    let ready = get("/readyz?verbose").await.expect("readyz");
    assert!(ready.contains("[+]etcd ok"), "{ready}");
    assert!(ready.contains("[+]shutdown ok"), "{ready}");
    assert!(ready.ends_with("readyz check passed\n"), "{ready}");
    let live = get("/livez?verbose&exclude=log").await.expect("livez");
    assert!(!live.contains("shutdown"), "{live}");
    assert!(live.contains("[+]log excluded: ok"), "{live}");
    assert_eq!(get("/healthz").await.expect("healthz"), "ok");
    assert_eq!(get("/readyz/etcd").await.expect("one check"), "ok");
    assert!(get("/readyz/no-such-check").await.is_err());
    server.shutdown().await;
}
