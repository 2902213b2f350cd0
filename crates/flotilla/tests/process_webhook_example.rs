//! `flotilla webhook-example` as a process: serves with the given certificate, prints its URL, writes the
//! configuration that registers it, and answers the interpreter's webhook layer.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "a failed unwrap in a test is a failed test"
)]

use std::process::Stdio;
use std::time::Duration;

use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use flotilla_interpreter::webhook::WebhookLayer;
use flotilla_interpreter::{Layer, Request, Response};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test]
async fn serves_the_example_with_the_given_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let generated = flotilla_webhook::generate_self_signed(&["127.0.0.1"]).unwrap();
    let (cert, key, out) = (
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
        dir.path().join("config.yaml"),
    );
    std::fs::write(&cert, &generated.identity.cert_pem).unwrap();
    std::fs::write(&key, &generated.identity.key_pem).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("webhook-example")
        .args(["--listen", "127.0.0.1:0"])
        .arg("--cert")
        .arg(&cert)
        .arg("--key")
        .arg(&key)
        .arg("--configuration-out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = ready
        .strip_prefix("ready: url=")
        .unwrap_or_else(|| panic!("unexpected first line {ready:?}"));
    assert!(
        url.starts_with("https://127.0.0.1:") && url.ends_with("/interpreter-workload"),
        "{url}"
    );

    let mut configuration: ResourceInterpreterWebhookConfiguration =
        flotilla_yaml::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let client = &mut configuration.webhooks[0].client_config;
    assert_eq!(client.url.as_deref(), Some(url));
    // The certificate came from the user, so the configuration cannot know its CA.
    assert!(client.ca_bundle.is_none());
    client.ca_bundle = Some(k8s_openapi::ByteString(generated.ca_pem.clone()));

    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![configuration]);
    let workload = json!({
        "apiVersion": "workload.example.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {"replicas": 2},
        "status": {"readyReplicas": 2}
    });
    let answer = layer
        .interpret(Request::InterpretHealth { object: workload })
        .await
        .unwrap();
    assert_eq!(answer, Response::Healthy(true));
    child.kill().await.unwrap();
}

#[tokio::test]
async fn unreadable_certificate_is_a_one_line_error() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args([
            "webhook-example",
            "--listen",
            "127.0.0.1:0",
            "--cert",
            "/nonexistent/tls.crt",
            "--key",
            "/nonexistent/k",
        ])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "error: failed to load the serving certificate: failed to read /nonexistent/tls.crt"
        ),
        "{stderr}"
    );
}
