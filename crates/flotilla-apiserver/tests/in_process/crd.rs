//! CustomResourceDefinitions served dynamically: established only once served, refused creates
//! while terminating, cleanup of custom resources on deletion.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::conditions;
use kube::runtime::wait::await_condition;
use serde_json::json;
use std::time::Duration;

use crate::common::{eventually, start};

fn crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": "gadgets.example.io"},
        "spec": {"group": "example.io", "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap()
}

fn gadget(name: &str, finalizers: &[&str]) -> DynamicObject {
    serde_json::from_value(json!({"apiVersion": "example.io/v1", "kind": "Gadget",
        "metadata": {"name": name, "finalizers": finalizers}, "spec": {"size": 1}}))
    .unwrap()
}

#[tokio::test]
async fn terminating_crd_refuses_creates_until_its_resources_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &crd()).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(
            crds.clone(),
            "gadgets.example.io",
            conditions::is_crd_established(),
        ),
    )
    .await
    .expect("established in time")
    .unwrap();
    let ar = ApiResource {
        group: "example.io".into(),
        version: "v1".into(),
        api_version: "example.io/v1".into(),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
    };
    // Both discovery flavours see the new group at once (kube-rs's aggregated one is silently empty
    // without aggregated discovery).
    for discovery in [
        kube::Discovery::new(client.clone()).run().await.unwrap(),
        kube::Discovery::new(client.clone())
            .run_aggregated()
            .await
            .unwrap(),
    ] {
        assert!(discovery.has_group("example.io"));
        assert!(discovery.has_group("apps"));
    }
    let gadgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    gadgets
        .create(
            &PostParams::default(),
            &gadget("kept", &["example.io/hold"]),
        )
        .await
        .expect("created right after Established");

    crds.delete("gadgets.example.io", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the held gadget is marked for deletion", || {
        let gadgets = gadgets.clone();
        async move {
            gadgets
                .get("kept")
                .await
                .is_ok_and(|g| g.metadata.deletion_timestamp.is_some())
        }
    })
    .await;
    let err = gadgets
        .create(&PostParams::default(), &gadget("late", &[]))
        .await
        .expect_err("create refused while terminating");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403
            && s.message.contains("create not allowed while custom resource definition is terminating")),
        "{err:?}"
    );
    let upsert = gadgets
        .patch(
            "late",
            &PatchParams::apply("test"),
            &Patch::Apply(json!({"apiVersion": "example.io/v1", "kind": "Gadget", "metadata": {"name": "late"}})),
        )
        .await
        .expect_err("apply upsert refused too");
    assert!(
        matches!(upsert, kube::Error::Api(ref s) if s.code == 403),
        "{upsert:?}"
    );

    gadgets
        .patch(
            "kept",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    eventually("the CRD is gone", || {
        let crds = crds.clone();
        async move { crds.get_opt("gadgets.example.io").await.unwrap().is_none() }
    })
    .await;
    assert!(
        gadgets.list(&Default::default()).await.is_err(),
        "no longer served"
    );
    server.shutdown().await;
}
