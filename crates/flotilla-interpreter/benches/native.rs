//! Native layer and facade benchmarks: the operations of the seed customization
//! (`manifests/examples/deployment-customization.yaml`) on a Deployment that reaches every native rule (an init
//! container, a container with requests and limits, a sidecar with limits only, a node selector, a toleration,
//! `envFrom` and a secret volume), answered by the native layer directly and through the `ResourceInterpreter`
//! facade (dispatch, explanation, metrics).
//!
//! Run: `cargo bench -p flotilla-interpreter --bench native`. Figures go to docs/BENCHMARKS.md.
#![allow(missing_docs, clippy::unwrap_used, clippy::panic)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use flotilla_interpreter::{Request, ResourceInterpreter, native};
use serde_json::{Value, json};

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "shop", "generation": 4,
            "labels": {"app": "web"},
            "annotations": {"resourcetemplate.karmada.io/generation": "4"}
        },
        "spec": {
            "replicas": 3,
            "paused": false,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "serviceAccountName": "web",
                    "nodeSelector": {"disktype": "ssd"},
                    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
                    "initContainers": [{"name": "migrate", "image": "migrate", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}}],
                    "containers": [
                        {"name": "web", "image": "nginx", "envFrom": [{"configMapRef": {"name": "web-config"}}],
                         "resources": {"requests": {"cpu": "100m", "memory": "512Mi"}, "limits": {"cpu": "200m"}}},
                        {"name": "sidecar", "image": "envoy", "resources": {"limits": {"cpu": "1.2", "memory": "512Mi"}}}
                    ],
                    "volumes": [{"name": "certs", "secret": {"secretName": "web-tls"}}]
                }
            }
        },
        "status": {"observedGeneration": 4, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}
    })
}

fn items() -> Vec<AggregatedStatusItem> {
    ["member1", "member2", "member3"]
        .into_iter()
        .map(|cluster| AggregatedStatusItem {
            cluster_name: cluster.to_owned(),
            status: Some(json!({"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
                                "generation": 2, "observedGeneration": 2, "resourceTemplateGeneration": 4})),
            applied: true,
            ..AggregatedStatusItem::default()
        })
        .collect()
}

/// The requests of the seed customization's operations, by benchmark name.
fn requests() -> Vec<(&'static str, Request)> {
    let object = deployment();
    let mut observed = deployment();
    observed["spec"]["paused"] = json!(true);
    vec![
        (
            "GetReplicas",
            Request::InterpretReplica {
                object: object.clone(),
            },
        ),
        (
            "ReviseReplica",
            Request::ReviseReplica {
                object: object.clone(),
                replicas: 5,
            },
        ),
        (
            "Retain",
            Request::Retain {
                desired: object.clone(),
                observed,
            },
        ),
        (
            "AggregateStatus/3",
            Request::AggregateStatus {
                object: object.clone(),
                items: items(),
            },
        ),
        (
            "ReflectStatus",
            Request::InterpretStatus {
                object: object.clone(),
            },
        ),
        (
            "InterpretHealth",
            Request::InterpretHealth {
                object: object.clone(),
            },
        ),
        ("GetDependencies", Request::InterpretDependency { object }),
    ]
}

fn native_layer(c: &mut Criterion) {
    let mut group = c.benchmark_group("native");
    for (name, request) in requests() {
        group.bench_function(name, |b| {
            b.iter_batched(
                || request.clone(),
                |r| black_box(native::interpret(r).unwrap()),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

fn facade(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let interpreter = ResourceInterpreter::builder().native().build().unwrap();
    let mut group = c.benchmark_group("facade");
    for (name, request) in requests() {
        group.bench_function(name, |b| {
            b.iter_batched(
                || request.clone(),
                |r| {
                    let (result, explanation) = runtime.block_on(interpreter.interpret(r));
                    black_box((result.unwrap(), explanation))
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

fn quantity(c: &mut Criterion) {
    use flotilla_apimachinery::quantity::Quantity;
    c.bench_function("quantity/parse+add+print", |b| {
        b.iter(|| {
            let sum = Quantity::parse(black_box("100m")).unwrap()
                + Quantity::parse(black_box("1.2")).unwrap();
            black_box(sum.to_string())
        });
    });
}

criterion_group!(benches, native_layer, facade, quantity);
criterion_main!(benches);
