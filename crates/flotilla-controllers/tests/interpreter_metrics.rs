//! The controller manager serves the interpreter's metrics at `/metrics`, beside the controllers' own.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use std::sync::Arc;

use flotilla_controllers::Interpreter;
use flotilla_controllers::manager::{self, ManagerOptions};
use flotilla_interpreter::{Request, Response};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `GET /metrics` over a plain TCP connection (HTTP/1.0, so the server closes after the body).
async fn scrape(addr: std::net::SocketAddr) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn interpreter_calls_appear_at_the_managers_metrics() {
    let mut dirs = Vec::new();
    let control = support::start_server(&mut dirs).await;
    let client = support::client_for(&control, "karmada").await;
    support::install_crds(&client).await;
    let interpreter = Arc::new(
        flotilla_interpreter::ResourceInterpreter::builder()
            .native()
            .build()
            .unwrap(),
    );
    let manager = manager::start(
        client,
        interpreter.clone(),
        ManagerOptions {
            controllers: support::fast_options(),
            admin_addr: Some("127.0.0.1:0".parse().unwrap()),
            ..ManagerOptions::default()
        },
    )
    .await
    .unwrap();
    let addr = manager.admin_addr().unwrap();

    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}
    });
    let answer = Interpreter::interpret(
        interpreter.as_ref(),
        Request::InterpretReplica { object: deployment },
    )
    .await
    .unwrap();
    assert!(matches!(answer, Response::Replicas { replicas: 2, .. }));

    let body = scrape(addr).await;
    let calls = body
        .lines()
        .find(|line| {
            line.starts_with("flotilla_interpreter_calls_total{")
                && line.contains("layer=\"native\"")
                && line.contains("operation=\"InterpretReplica\"")
                && line.contains("kind=\"apps/Deployment\"")
        })
        .unwrap_or_else(|| panic!("no interpreter call series in:\n{body}"));
    let count: u64 = calls.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(count >= 1, "{calls}");
    assert!(body.contains("flotilla_interpreter_call_duration_seconds_bucket{"));
    assert!(!body.contains("flotilla_flotilla_"));

    manager.shutdown().await.unwrap();
    control.shutdown().await;
}
