//! `flotilla simulate` alone against a `flotilla apiserver` with no simulator of its own: a Deployment created
//! there gets the status its controllers would report.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::process::{Child, Command, Stdio};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use serde_json::json;

use common::{client, eventually};

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `flotilla` with `args` and waits for its `ready:` line.
fn start(args: &[&str]) -> Proc {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
    assert!(line.starts_with("ready:"), "{line}");
    Proc(child)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_sets_deployment_status_on_any_api_server() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let kubeconfig_arg = kubeconfig.to_str().unwrap();
    let data = dir.path().join("data");
    let _server = start(&[
        "apiserver",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        data.to_str().unwrap(),
        "--kubeconfig-out",
        kubeconfig_arg,
        "--context",
        "member",
    ]);
    let _simulator = start(&[
        "simulate",
        "--kubeconfig",
        kubeconfig_arg,
        "--delay-ms",
        "10",
    ]);
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
