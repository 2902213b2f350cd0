//! Garbage collection: background, foreground and orphan propagation over ownerReferences.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use serde_json::json;

use crate::common::{eventually, mk_cm, start};

/// Creates an owner and one dependent pointing at it; the dependent optionally blocks owner deletion and holds
/// its own finalizer.
async fn owner_and_dependent(cms: &Api<ConfigMap>, prefix: &str, block: bool, hold: bool) {
    let owner = cms
        .create(
            &PostParams::default(),
            &mk_cm(&format!("{prefix}-owner"), json!({})),
        )
        .await
        .unwrap();
    let mut meta = json!({"ownerReferences": [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": format!("{prefix}-owner"),
        "uid": owner.metadata.uid, "blockOwnerDeletion": block,
    }]});
    if hold {
        meta["finalizers"] = json!(["example.io/hold"]);
    }
    cms.create(
        &PostParams::default(),
        &mk_cm(&format!("{prefix}-dep"), meta),
    )
    .await
    .unwrap();
}

async fn gone(cms: &Api<ConfigMap>, name: &str) {
    eventually(&format!("{name} deleted"), || {
        let cms = cms.clone();
        let name = name.to_string();
        async move { cms.get_opt(&name).await.unwrap().is_none() }
    })
    .await;
}

#[tokio::test]
async fn background_deletion_collects_dependents() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    owner_and_dependent(&cms, "bg", false, false).await;
    let res = cms
        .delete("bg-owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(
        res.is_right(),
        "owner without finalizers is removed at once"
    );
    gone(&cms, "bg-dep").await;
    server.shutdown().await;
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    owner_and_dependent(&cms, "fg", true, true).await;
    let marked = cms
        .delete("fg-owner", &DeleteParams::foreground())
        .await
        .unwrap()
        .left()
        .expect("owner stays while dependents exist");
    assert_eq!(
        marked.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_string()])
    );
    // The collector deletes the dependent, which its own finalizer keeps; the owner must wait for it.
    eventually("dependent marked for deletion", || {
        let cms = cms.clone();
        async move {
            cms.get("fg-dep")
                .await
                .unwrap()
                .metadata
                .deletion_timestamp
                .is_some()
        }
    })
    .await;
    assert!(cms.get_opt("fg-owner").await.unwrap().is_some());
    cms.patch(
        "fg-dep",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    gone(&cms, "fg-dep").await;
    gone(&cms, "fg-owner").await;
    server.shutdown().await;
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_without_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    owner_and_dependent(&cms, "or", true, false).await;
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..DeleteParams::default()
    };
    cms.delete("or-owner", &dp).await.unwrap();
    gone(&cms, "or-owner").await;
    let dep = cms.get("or-dep").await.unwrap();
    assert!(dep.metadata.owner_references.is_none(), "{dep:?}");
    assert!(dep.metadata.deletion_timestamp.is_none());
    server.shutdown().await;
}
