//! The interpreter's webhook layer against the example Workload webhook, for every operation it registers.

use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use flotilla_interpreter::webhook::WebhookLayer;
use flotilla_interpreter::{Handles, Layer, Request, Response};
use flotilla_webhook::example::{ExampleConfig, RunningWebhook, serve};
use kube::core::GroupVersionKind;
use serde_json::json;

use crate::support::{call, mk_workload};

async fn example() -> (RunningWebhook, WebhookLayer) {
    let webhook = serve(ExampleConfig::default()).await.unwrap();
    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![webhook.webhook_configuration()]);
    (webhook, layer)
}

#[tokio::test]
async fn registers_for_the_workload_operations_only() {
    let (webhook, layer) = example().await;
    assert!(webhook.url().starts_with("https://127.0.0.1:"));
    assert!(webhook.url().ends_with("/interpreter-workload"));
    let gvk = GroupVersionKind::gvk("workload.example.io", "v1alpha1", "Workload");
    for op in flotilla_webhook::example::OPERATIONS {
        assert_eq!(
            layer.handles(&gvk, &op),
            Handles::Yes("examples/workloads.example.com".into()),
            "{op}"
        );
    }
    let component = flotilla_api::config::v1alpha1::InterpreterOperation::InterpretComponent;
    assert!(matches!(layer.handles(&gvk, &component), Handles::No(_)));
    let deployment = GroupVersionKind::gvk("apps", "v1", "Deployment");
    assert!(matches!(
        layer.handles(&deployment, &flotilla_webhook::example::OPERATIONS[0]),
        Handles::No(_)
    ));
}

#[tokio::test]
async fn interpret_replica_reads_spec_replicas_defaulting_to_one() {
    let (_webhook, layer) = example().await;
    let answer = call(
        &layer,
        Request::InterpretReplica {
            object: mk_workload(0),
        },
    )
    .await;
    assert_eq!(
        answer,
        Response::Replicas {
            replicas: 3,
            requirements: None
        }
    );
    let mut unset = mk_workload(0);
    unset["spec"].as_object_mut().unwrap().remove("replicas");
    let answer = call(&layer, Request::InterpretReplica { object: unset }).await;
    assert_eq!(
        answer,
        Response::Replicas {
            replicas: 1,
            requirements: None
        }
    );
}

#[tokio::test]
async fn revise_replica_patches_spec_replicas_only() {
    let (_webhook, layer) = example().await;
    let answer = call(
        &layer,
        Request::ReviseReplica {
            object: mk_workload(0),
            replicas: 1,
        },
    )
    .await;
    let mut expected = mk_workload(0);
    expected["spec"]["replicas"] = json!(1);
    assert_eq!(answer, Response::Object(expected));
}

#[tokio::test]
async fn retain_keeps_the_members_paused() {
    let (_webhook, layer) = example().await;
    let mut observed = mk_workload(1);
    observed["spec"]["paused"] = json!(true);
    observed["spec"]["replicas"] = json!(7);
    let answer = call(
        &layer,
        Request::Retain {
            desired: mk_workload(0),
            observed,
        },
    )
    .await;
    let mut expected = mk_workload(0);
    expected["spec"]["paused"] = json!(true);
    assert_eq!(answer, Response::Object(expected));

    // A member that is not paused un-pauses nothing and adds nothing.
    let mut desired = mk_workload(0);
    desired["spec"].as_object_mut().unwrap().remove("paused");
    let answer = call(
        &layer,
        Request::Retain {
            desired: desired.clone(),
            observed: mk_workload(0),
        },
    )
    .await;
    assert_eq!(answer, Response::Object(desired));
}

#[tokio::test]
async fn aggregate_status_sums_ready_replicas() {
    let (_webhook, layer) = example().await;
    let item = |cluster: &str, status: Option<serde_json::Value>| AggregatedStatusItem {
        cluster_name: cluster.into(),
        status,
        applied: true,
        ..Default::default()
    };
    let items = vec![
        item("member1", Some(json!({"readyReplicas": 1}))),
        item("member2", Some(json!({"readyReplicas": 2}))),
        item("member3", None),
    ];
    let mut template = mk_workload(0);
    template.as_object_mut().unwrap().remove("status");
    let answer = call(
        &layer,
        Request::AggregateStatus {
            object: template,
            items,
        },
    )
    .await;
    assert_eq!(answer, Response::Object(mk_workload(3)));
}

#[tokio::test]
async fn interpret_status_reflects_ready_replicas() {
    let (_webhook, layer) = example().await;
    let answer = call(
        &layer,
        Request::InterpretStatus {
            object: mk_workload(2),
        },
    )
    .await;
    assert_eq!(answer, Response::Status(Some(json!({"readyReplicas": 2}))));
}

#[tokio::test]
async fn interpret_health_compares_ready_with_desired_replicas() {
    let (_webhook, layer) = example().await;
    assert_eq!(
        call(
            &layer,
            Request::InterpretHealth {
                object: mk_workload(3)
            }
        )
        .await,
        Response::Healthy(true)
    );
    assert_eq!(
        call(
            &layer,
            Request::InterpretHealth {
                object: mk_workload(1)
            }
        )
        .await,
        Response::Healthy(false)
    );
}

/// A Workload whose pod template requests resources and refers to a ConfigMap, a Secret, a service account
/// and a claim.
fn mk_rich_workload() -> serde_json::Value {
    let mut workload = mk_workload(0);
    workload["spec"]["template"]["spec"] = json!({
        "serviceAccountName": "runner",
        "nodeSelector": {"disk": "ssd"},
        "containers": [{
            "name": "nginx",
            "image": "nginx",
            "envFrom": [{"configMapRef": {"name": "settings"}}],
            "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}
        }],
        "volumes": [
            {"name": "creds", "secret": {"secretName": "token"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "cache"}}
        ]
    });
    workload
}

#[tokio::test]
async fn interpret_replica_reports_the_pod_templates_requirements() {
    let (_webhook, layer) = example().await;
    let answer = call(
        &layer,
        Request::InterpretReplica {
            object: mk_rich_workload(),
        },
    )
    .await;
    let Response::Replicas {
        replicas,
        requirements: Some(requirements),
    } = answer
    else {
        panic!("{answer:?}")
    };
    assert_eq!(replicas, 3);
    assert_eq!(
        serde_json::to_value(&requirements).unwrap(),
        json!({"nodeClaim": {"nodeSelector": {"disk": "ssd"}}, "resourceRequest": {"cpu": "250m", "memory": "64Mi"}})
    );
}

#[tokio::test]
async fn interpret_dependency_lists_the_pod_templates_references() {
    let (_webhook, layer) = example().await;
    let answer = call(
        &layer,
        Request::InterpretDependency {
            object: mk_workload(0),
        },
    )
    .await;
    assert_eq!(answer, Response::Dependencies(vec![]));
    let Response::Dependencies(dependencies) = call(
        &layer,
        Request::InterpretDependency {
            object: mk_rich_workload(),
        },
    )
    .await
    else {
        panic!("not dependencies")
    };
    let found: Vec<(String, String, String, String)> = dependencies
        .into_iter()
        .map(|d| (d.api_version, d.kind, d.namespace, d.name))
        .collect();
    let expected = [
        ("v1", "ConfigMap", "default", "settings"),
        ("v1", "Secret", "default", "token"),
        ("v1", "ServiceAccount", "default", "runner"),
        ("v1", "PersistentVolumeClaim", "default", "cache"),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(a, k, n, m)| {
            (
                (*a).to_owned(),
                (*k).to_owned(),
                (*n).to_owned(),
                (*m).to_owned(),
            )
        })
        .collect();
    assert_eq!(found, expected);
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let (webhook, layer) = example().await;
    webhook.shutdown().await;
    let error = crate::support::call_err(
        &layer,
        Request::InterpretHealth {
            object: mk_workload(3),
        },
    )
    .await;
    assert!(error.contains("failed to send the request"), "{error}");
}
