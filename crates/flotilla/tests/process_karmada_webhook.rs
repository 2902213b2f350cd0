//! Runs the real `flotilla controller-manager --webhook-*` against an in-process control plane and calls the
//! webhook as an API server does: over HTTPS, trusting only the CA the manager registered in the
//! ValidatingWebhookConfiguration, at the URLs it registered.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::process::Stdio;

use flotilla_api::config::v1alpha1::ResourceInterpreterCustomization;
use flotilla_apiserver::{Server, ServerConfig};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use common::{Proc, controller_manager, eventually, free_port};
use flotilla_testing::https_client_trusting as client_trusting;

fn review(operation: &str, resource: &str, object: Option<Value>, old: Option<Value>) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": format!("uid-{operation}"), "kind": {"group": "", "version": "v1", "kind": "Thing"},
            "resource": {"group": "", "version": "v1", "resource": resource},
            "name": "x", "operation": operation, "userInfo": {"username": "test"},
            "object": object, "oldObject": old
        }
    })
}

async fn call(client: &reqwest::Client, url: &str, review: &Value) -> Value {
    let response = client.post(url).json(review).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["kind"], "AdmissionReview");
    body["response"].clone()
}

fn ric(name: &str, customizations: Value) -> Value {
    json!({
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": name},
        "spec": {"target": {"apiVersion": "example.io/v1", "kind": "Widget"}, "customizations": customizations}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_manager_serves_and_registers_karmadas_validations() {
    let dir = tempfile::tempdir().unwrap();
    let control = Server::start(ServerConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        dir.path().join("control"),
    ))
    .await
    .unwrap();
    let karmada_config = dir.path().join("karmada.config");
    std::fs::write(&karmada_config, control.kubeconfig("karmada-apiserver")).unwrap();
    let client = common::client(&karmada_config, "karmada-apiserver").await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in flotilla_api::crds::all() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    let rics: Api<ResourceInterpreterCustomization> = Api::all(client.clone());
    eventually("customizations to be served", || async {
        rics.list(&Default::default()).await.ok()
    })
    .await;

    let (metrics, webhook) = (free_port(), free_port());
    let webhook_addr = format!("127.0.0.1:{webhook}");
    let _manager = Proc(
        controller_manager(&karmada_config, metrics)
            .args(["--webhook-addr", &webhook_addr, "--webhook-self-signed"])
            .args(["--webhook-url", &format!("https://{webhook_addr}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let configurations: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let configuration = eventually("validating-config to be registered", || async {
        configurations
            .get_opt("validating-config")
            .await
            .ok()
            .flatten()
    })
    .await;
    let webhooks = configuration.webhooks.unwrap();
    let url = |name: &str| {
        let webhook = webhooks.iter().find(|w| w.name == name).unwrap();
        (
            webhook.client_config.url.clone().unwrap(),
            webhook.client_config.ca_bundle.clone().unwrap().0,
        )
    };
    let (protection_url, ca) = url("resourcedeletionprotection.karmada.io");
    let (customization_url, _) = url("resourceinterpretercustomization.karmada.io");
    assert_eq!(
        protection_url,
        format!("https://{webhook_addr}/validate-resourcedeletionprotection")
    );
    let https = client_trusting(&ca);

    let protected = json!({"metadata": {"name": "x", "labels": {"resourcetemplate.karmada.io/deletion-protected": "Always"}}});
    let response = call(
        &https,
        &protection_url,
        &review("DELETE", "deployments", None, Some(protected)),
    )
    .await;
    assert_eq!(response["uid"], "uid-DELETE");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    assert_eq!(
        response["status"]["message"],
        "This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected"
    );
    let plain = json!({"metadata": {"name": "x"}});
    let response = call(
        &https,
        &protection_url,
        &review("DELETE", "deployments", None, Some(plain)),
    )
    .await;
    assert_eq!(response["allowed"], true);

    // The customizations that exist are read from the control plane for every review.
    let retain = json!({"retention": {"luaScript": "function Retain(desired, observed) return desired end"}});
    rics.create(
        &PostParams::default(),
        &serde_json::from_value(ric("first", retain.clone())).unwrap(),
    )
    .await
    .unwrap();
    let second = ric("second", retain);
    let response = call(
        &https,
        &customization_url,
        &review(
            "CREATE",
            "resourceinterpretercustomizations",
            Some(second),
            None,
        ),
    )
    .await;
    assert_eq!(response["allowed"], false);
    assert_eq!(
        response["status"]["message"],
        "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(first)"
    );
    let broken = ric(
        "broken",
        json!({"statusReflection": {"luaScript": "function ReflectStatus(o) return ( end"}}),
    );
    let response = call(
        &https,
        &customization_url,
        &review(
            "CREATE",
            "resourceinterpretercustomizations",
            Some(broken),
            None,
        ),
    )
    .await;
    assert_eq!(response["allowed"], false);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("InterpreterOperation(InterpretStatus) Lua script error: "),
        "{message}"
    );
    let first = ric(
        "first",
        json!({"retention": {"luaScript": "function Retain(d, o) return o end"}}),
    );
    let response = call(
        &https,
        &customization_url,
        &review(
            "UPDATE",
            "resourceinterpretercustomizations",
            Some(first),
            None,
        ),
    )
    .await;
    assert_eq!(response["allowed"], true, "{response}");
}
