//! `flotilla interpret --kubeconfig` against a running `flotilla apiserver`: the interpreter's reflectors list
//! the control plane's webhook configurations before anything is interpreted, and the webhook registered
//! there answers (here: fails, naming itself) ahead of the native layer, while other operations still fall
//! through to native; a customization registered there answers ahead of everything.
#![allow(clippy::panic)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};

use common::{eventually, free_port, start_apiserver};

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");

async fn client(kubeconfig: &Path) -> kube::Client {
    flotilla_testing::client_from_file(kubeconfig, None).await
}

/// Registers a webhook for Deployment health at a port nothing listens on.
async fn register_unreachable_webhook(client: kube::Client, port: u16) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in flotilla_api::crds::all() {
        crds.create(&PostParams::default(), &crd)
            .await
            .unwrap_or_else(|e| panic!("create CRD: {e}"));
    }
    let gvk = GroupVersionKind::gvk(
        "config.karmada.io",
        "v1alpha1",
        "ResourceInterpreterWebhookConfiguration",
    );
    let resource =
        ApiResource::from_gvk_with_plural(&gvk, "resourceinterpreterwebhookconfigurations");
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let object: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterWebhookConfiguration",
        "metadata": {"name": "health"},
        "webhooks": [{
            "name": "deployments.example.com",
            "rules": [{"operations": ["InterpretHealth"], "apiGroups": ["apps"], "apiVersions": ["v1"], "kinds": ["Deployment"]}],
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/health")},
            "interpreterContextVersions": ["v1alpha1"],
            "timeoutSeconds": 2
        }]
    }))
    .unwrap_or_else(|e| panic!("configuration: {e}"));
    create_eventually(&api, &object).await;
}

/// Registers a customization answering InterpretReplica for Deployments with a fixed count.
async fn register_customization(client: kube::Client) {
    let gvk = GroupVersionKind::gvk(
        "config.karmada.io",
        "v1alpha1",
        "ResourceInterpreterCustomization",
    );
    let resource = ApiResource::from_gvk_with_plural(&gvk, "resourceinterpretercustomizations");
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let object: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "fixed-replicas"},
        "spec": {
            "target": {"apiVersion": "apps/v1", "kind": "Deployment"},
            "customizations": {"replicaResource": {"luaScript": "function GetReplicas(obj) return 42, nil end"}}
        }
    }))
    .unwrap_or_else(|e| panic!("customization: {e}"));
    create_eventually(&api, &object).await;
}

/// Creates `object`, retrying while its freshly created CRD is not served yet.
async fn create_eventually(api: &Api<DynamicObject>, object: &DynamicObject) {
    let what = format!("create {:?}", object.metadata.name);
    eventually(&what, || async {
        api.create(&PostParams::default(), object).await.ok()
    })
    .await;
}

fn interpret(kubeconfig: &Path, operation: &str, object: &Path) -> Output {
    Command::new(BIN)
        .arg("interpret")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--operation", operation, "--explain", "--observed-file"])
        .arg(object)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("flotilla interpret runs: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn control_plane_webhooks_answer_before_native() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _server = start_apiserver(dir.path(), 0, &[]);
    let kubeconfig = dir.path().join("kubeconfig");
    register_unreachable_webhook(client(&kubeconfig).await, free_port()).await;
    let deployment = dir.path().join("deployment.yaml");
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: c, image: x}]\n";
    std::fs::write(&deployment, yaml).unwrap_or_else(|e| panic!("{e}"));

    let out = interpret(&kubeconfig, "interpretHealth", &deployment);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the unreachable webhook must fail the call: {stdout}"
    );
    assert!(
        !stdout.contains("#   native:")
            && stdout.contains("#   webhook: failed (health/deployments.example.com)"),
        "{stdout}"
    );
    assert!(
        stderr.starts_with("error: failed to execute InterpretHealth: ")
            && stderr.contains("health/deployments.example.com"),
        "{stderr}"
    );

    let out = interpret(&kubeconfig, "interpretReplica", &deployment);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("#   webhook: skipped: no webhook rule matches InterpretReplica"),
        "{stdout}"
    );
    assert!(
        stdout.contains("#   native: answered") && stdout.contains("# [1/2] replica:\n2\n"),
        "{stdout}"
    );
    assert!(stdout.contains("#   customization: skipped"), "{stdout}");

    // A customization registered in the control plane answers ahead of every other layer.
    register_customization(client(&kubeconfig).await).await;
    let out = interpret(&kubeconfig, "interpretReplica", &deployment);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("#   customization: answered (fixed-replicas)"),
        "{stdout}"
    );
    assert!(stdout.contains("# [1/2] replica:\n42\n"), "{stdout}");
}
