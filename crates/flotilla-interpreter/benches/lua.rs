//! Criterion benchmarks of the Lua layer: each operation of the seed customization
//! (`manifests/examples/deployment-customization.yaml`) on a realistic Deployment, through the same call path the
//! layers use (a pooled, sandboxed state; compiled scripts cached by content).
//!
//! Run: `cargo bench -p flotilla-interpreter --bench lua`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use flotilla_api::config::v1alpha1::{InterpreterOperation, ResourceInterpreterCustomization};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ResourceHealth};
use flotilla_interpreter::customization::CustomizationLayer;
use flotilla_interpreter::lua::{Input, LuaVm, VmConfig};
use flotilla_interpreter::{Layer, Request};
use serde_json::{Value, json};

const SEED: &str = include_str!("../../../manifests/examples/deployment-customization.yaml");
const DEPLOYMENT: &str = include_str!("fixtures/deployment.json");

fn items(deployment: &Value) -> Vec<AggregatedStatusItem> {
    ["member1", "member2", "member3"]
        .iter()
        .map(|name| AggregatedStatusItem {
            cluster_name: (*name).to_owned(),
            status: Some(deployment["status"].clone()),
            applied: true,
            applied_message: String::new(),
            health: Some(ResourceHealth::Healthy),
        })
        .collect()
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (Linux).
fn thread_cpu() -> std::time::Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let nanos = text
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    std::time::Duration::from_nanos(nanos)
}

fn lua_operations(c: &mut Criterion) {
    let ric: ResourceInterpreterCustomization =
        flotilla_yaml::from_str(SEED).expect("seed customization parses");
    let deployment: Value = serde_json::from_str(DEPLOYMENT).expect("fixture parses");
    let vm = LuaVm::new(VmConfig::default());
    let script = |op| {
        vm.script(
            "declarative-configuration-example",
            ric.spec
                .customizations
                .script(op)
                .expect("seed has every script"),
        )
    };

    // Development aid: `LUA_PROBE=health|revise|aggregate|replicas` prints the CPU time per call (from the
    // scheduler's per-thread accounting), which stays meaningful on a loaded machine where wall time does not.
    if let Ok(which) = std::env::var("LUA_PROBE") {
        let op = match which.as_str() {
            "revise" => InterpreterOperation::ReviseReplica,
            "health" => InterpreterOperation::InterpretHealth,
            "aggregate" => InterpreterOperation::AggregateStatus,
            _ => InterpreterOperation::InterpretReplica,
        };
        let s = match std::env::var("LUA_PROBE_SCRIPT") {
            Ok(source) => vm.script("probe", &source),
            Err(_) => script(&op),
        };
        let three = items(&deployment);
        // LUA_PROBE_MANY=n: the object is a list of n Deployments, to see the cost per touched object.
        let deployment = match std::env::var("LUA_PROBE_MANY")
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) => json!({"kind": "List", "items": vec![deployment.clone(); n]}),
            None => deployment.clone(),
        };
        let mut cpu = std::time::Duration::ZERO;
        let batches = std::env::var("LUA_PROBE_BATCHES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(300);
        for _ in 0..batches {
            let inputs: Vec<Input> = (0..100)
                .map(|_| {
                    let object = deployment.clone();
                    match op {
                        InterpreterOperation::ReviseReplica => Request::ReviseReplica {
                            object,
                            replicas: 5,
                        }
                        .into(),
                        InterpreterOperation::InterpretHealth => {
                            Request::InterpretHealth { object }.into()
                        }
                        InterpreterOperation::AggregateStatus => {
                            Input::aggregate_status(object, Some(three.clone()))
                        }
                        _ => Request::InterpretReplica { object }.into(),
                    }
                })
                .collect();
            let before = thread_cpu();
            for input in inputs {
                black_box(vm.call_blocking(&s, input).ok());
            }
            cpu += thread_cpu() - before;
        }
        eprintln!("{which}: {:?} CPU per call", cpu / (batches * 100));
        let _ = json!(null);
        std::process::exit(0);
    }
    let mut group = c.benchmark_group("lua");
    let get_replicas = script(&InterpreterOperation::InterpretReplica);
    group.bench_function("GetReplicas", |b| {
        b.iter_batched(
            || deployment.clone(),
            |object| vm.call_blocking(&get_replicas, Request::InterpretReplica { object }),
            BatchSize::SmallInput,
        )
    });
    let revise = script(&InterpreterOperation::ReviseReplica);
    group.bench_function("ReviseReplica", |b| {
        b.iter_batched(
            || deployment.clone(),
            |object| {
                vm.call_blocking(
                    &revise,
                    Request::ReviseReplica {
                        object,
                        replicas: 5,
                    },
                )
            },
            BatchSize::SmallInput,
        )
    });
    let aggregate = script(&InterpreterOperation::AggregateStatus);
    let three = items(&deployment);
    group.bench_function("AggregateStatus/3-clusters", |b| {
        b.iter_batched(
            || (deployment.clone(), three.clone()),
            |(object, items)| {
                vm.call_blocking(&aggregate, Input::aggregate_status(object, Some(items)))
            },
            BatchSize::SmallInput,
        )
    });
    let health = script(&InterpreterOperation::InterpretHealth);
    group.bench_function("InterpretHealth", |b| {
        b.iter_batched(
            || deployment.clone(),
            |object| vm.call_blocking(&health, Request::InterpretHealth { object }),
            BatchSize::SmallInput,
        )
    });
    // Reference points: what the input object alone costs to free, and a call that does nothing.
    group.bench_function("reference/drop-input", |b| {
        b.iter_batched(|| deployment.clone(), drop, BatchSize::SmallInput)
    });
    let trivial = vm.script("trivial", "function InterpretHealth(obj) return true end");
    group.bench_function("reference/empty-call", |b| {
        b.iter_batched(
            || deployment.clone(),
            |object| vm.call_blocking(&trivial, Request::InterpretHealth { object }),
            BatchSize::SmallInput,
        )
    });
    group.finish();

    // The same through the customization layer's async contract: a concurrency permit, then spawn_blocking.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let layer = CustomizationLayer::with_customizations(
        LuaVm::new(VmConfig::default()),
        std::slice::from_ref(&ric),
    );
    let mut group = c.benchmark_group("layer");
    group.bench_function("ReviseReplica", |b| {
        b.iter_batched(
            || deployment.clone(),
            |object| {
                runtime.block_on(layer.interpret(Request::ReviseReplica {
                    object,
                    replicas: 5,
                }))
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("InterpretHealth", |b| {
        b.iter_batched(
            || deployment.clone(),
            |object| runtime.block_on(layer.interpret(Request::InterpretHealth { object })),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, lua_operations);
criterion_main!(benches);
