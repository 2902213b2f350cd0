//! The native kinds table: every kind answers every operation its entry claims, and nothing else.

use flotilla_api::config::v1alpha1::InterpreterOperation as Op;
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use super::super::{KINDS, NativeError, NativeKind, enabled, interpret};
use super::{error_chain, mk};
use crate::layer::{Request, Response};

/// An object of `kind` that every handler of the table accepts: a generation and the template generation
/// annotation (status reflection needs them), a pod spec and template, a selector, a Service type that has
/// a status to reflect, and a status.
fn fixture(kind: &NativeKind) -> Value {
    let api_version = if kind.group.is_empty() {
        kind.version.to_owned()
    } else {
        format!("{}/{}", kind.group, kind.version)
    };
    let pod_spec = json!({"containers": [{"name": "app", "image": "nginx"}]});
    mk(
        &api_version,
        kind.kind,
        json!({
            "metadata": {
                "generation": 1,
                "annotations": {"resourcetemplate.karmada.io/generation": "1"}
            },
            "spec": {
                "type": "LoadBalancer",
                "replicas": 2,
                "parallelism": 2,
                // A plain map: a Service selector, and a label selector with no requirements elsewhere.
                "selector": {"app": "web"},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec.clone()},
                "jobTemplate": {"spec": {"template": {"spec": pod_spec.clone()}}},
                "containers": pod_spec["containers"].clone()
            },
            "status": {"observedGeneration": 1}
        }),
    )
}

fn request(op: Op, object: Value) -> Option<Request> {
    Some(match op {
        Op::InterpretReplica => Request::InterpretReplica { object },
        Op::ReviseReplica => Request::ReviseReplica {
            object,
            replicas: 3,
        },
        Op::Retain => Request::Retain {
            desired: object.clone(),
            observed: object,
        },
        Op::AggregateStatus => Request::AggregateStatus {
            object,
            items: vec![AggregatedStatusItem {
                cluster_name: "member1".to_owned(),
                status: Some(json!({"observedGeneration": 1})),
                applied: true,
                ..AggregatedStatusItem::default()
            }],
        },
        Op::InterpretStatus => Request::InterpretStatus { object },
        Op::InterpretHealth => Request::InterpretHealth { object },
        Op::InterpretDependency => Request::InterpretDependency { object },
        Op::InterpretComponent => Request::InterpretComponent { object },
        Op::Prune | Op::All | Op::Other(_) => return None,
    })
}

#[test]
fn every_kind_answers_every_operation_it_claims_and_no_other() {
    for kind in KINDS {
        let gvk = GroupVersionKind::gvk(kind.group, kind.version, kind.kind);
        assert!(
            NativeKind::of(&gvk).is_some_and(|found| std::ptr::eq(found, kind)),
            "{} is found by its group, version and kind",
            kind.kind
        );
        for op in Op::DISPATCHED {
            let Some(request) = request(op.clone(), fixture(kind)) else {
                continue;
            };
            assert_eq!(
                enabled(&gvk, &op),
                kind.supports(&op),
                "{op} on {}",
                kind.kind
            );
            match interpret(request) {
                Ok(response) => {
                    assert!(kind.supports(&op), "{} answered {op} unclaimed", kind.kind);
                    if op == Op::InterpretStatus {
                        assert!(
                            matches!(response, Response::Status(Some(_))),
                            "{} reflects a status",
                            kind.kind
                        );
                    }
                }
                Err(NativeError::NotFound { .. }) => {
                    assert!(
                        !kind.supports(&op),
                        "{} claims {op} but has no handler",
                        kind.kind
                    );
                }
                Err(other) => panic!(
                    "{} failed {op} on a well-formed object: {}",
                    kind.kind,
                    error_chain(&other)
                ),
            }
        }
    }
}

#[test]
fn kinds_are_listed_once() {
    for (i, a) in KINDS.iter().enumerate() {
        for b in &KINDS[i + 1..] {
            assert!(
                (a.group, a.version, a.kind) != (b.group, b.version, b.kind),
                "{} {} listed twice",
                a.group,
                a.kind
            );
        }
    }
}
