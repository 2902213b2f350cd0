//! One interpreter webhook round trip on loopback: the interpreter's webhook layer calling the example Workload
//! webhook over TLS (connection reused, as in steady state).

#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "a benchmark that cannot run should stop"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use flotilla_interpreter::webhook::WebhookLayer;
use flotilla_interpreter::{Layer, Request};
use flotilla_webhook::example::{ExampleConfig, serve};
use serde_json::json;

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let webhook = runtime.block_on(serve(ExampleConfig::default())).unwrap();
    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![webhook.webhook_configuration()]);
    let workload = json!({
        "apiVersion": "workload.example.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "paused": false,
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}
            }
        },
        "status": {"readyReplicas": 3}
    });

    c.bench_function("webhook InterpretHealth round trip", |b| {
        b.iter(|| {
            let request = Request::InterpretHealth {
                object: workload.clone(),
            };
            runtime.block_on(layer.interpret(request)).unwrap()
        })
    });
    c.bench_function("webhook ReviseReplica round trip", |b| {
        b.iter(|| {
            let request = Request::ReviseReplica {
                object: workload.clone(),
                replicas: 2,
            };
            runtime.block_on(layer.interpret(request)).unwrap()
        })
    });
    runtime.block_on(webhook.shutdown());
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
