//! `flotilla simulate` alone against a `flotilla apiserver` with no simulator of its own: a Deployment created
//! there gets the status its controllers would report.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::process::Command;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use serde_json::json;

use common::{Proc, client, eventually, start_apiserver, start_ready};

/// Starts `flotilla simulate` against the cluster of `kubeconfig` and waits for its `ready:` line.
fn simulate(kubeconfig: &std::path::Path) -> Proc {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .arg("simulate")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--delay-ms", "10"])
        .stderr(std::process::Stdio::null());
    start_ready(command, "ready:", flotilla_testing::PATIENCE).0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_sets_deployment_status_on_any_api_server() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let _server = start_apiserver(dir.path(), 0, &["--context", "member"]);
    let _simulator = simulate(&kubeconfig);
    let deployments: Api<Deployment> =
        Api::namespaced(client(&kubeconfig, "member").await, "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    eventually("the simulated status of Deployment web", || async {
        let status = deployments.get("web").await.ok()?.status?;
        (status.available_replicas == Some(2) && status.ready_replicas == Some(2)).then_some(())
    })
    .await;
}

#[test]
fn simulate_fails_at_once_on_an_unreachable_server() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:{port}\", insecure-skip-tls-verify: true}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["simulate", "--kubeconfig", kubeconfig.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: the cluster's API server did not answer"),
        "{stderr}"
    );
}
