//! Selection over the wire: only the first matching webhook by `<configuration>/<webhook>` id is called.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use flotilla_api::config::v1alpha1::{InterpreterOperation, RuleWithOperations};
use flotilla_interpreter::webhook::WebhookLayer;
use flotilla_interpreter::{Handles, Layer, Request, Response};
use flotilla_webhook::succeeded;
use kube::core::GroupVersionKind;
use serde_json::json;

use crate::support::{TestServer, call, mk_config, mk_workload, rule_all, serve_handler};

/// A server answering InterpretHealth with `healthy`, counting its calls.
async fn health_server(healthy: bool) -> (TestServer, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let server = serve_handler(move |_request| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move { succeeded("").with_healthy(healthy) }
    })
    .await;
    (server, calls)
}

#[tokio::test]
async fn only_the_first_matching_webhook_by_id_is_called() {
    let (healthy, healthy_calls) = health_server(true).await;
    let (unhealthy, unhealthy_calls) = health_server(false).await;
    let (retain_only, retain_calls) = health_server(true).await;
    let retain_rule = RuleWithOperations {
        operations: vec![InterpreterOperation::Retain],
        ..rule_all()
    };
    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![
        mk_config(
            "b-config",
            "a.example.com",
            &healthy.url,
            &healthy.ca,
            None,
            vec![rule_all()],
        ),
        mk_config(
            "a-config",
            "z.example.com",
            &unhealthy.url,
            &unhealthy.ca,
            None,
            vec![rule_all()],
        ),
        // Sorted first, but its rule does not cover InterpretHealth.
        mk_config(
            "0-config",
            "a.example.com",
            &retain_only.url,
            &retain_only.ca,
            None,
            vec![retain_rule],
        ),
    ]);
    for _ in 0..3 {
        let answer = call(
            &layer,
            Request::InterpretHealth {
                object: mk_workload(3),
            },
        )
        .await;
        assert_eq!(answer, Response::Healthy(false));
    }
    assert_eq!(unhealthy_calls.load(Ordering::SeqCst), 3);
    assert_eq!(healthy_calls.load(Ordering::SeqCst), 0);
    assert_eq!(retain_calls.load(Ordering::SeqCst), 0);

    // Replacing the configurations switches the answer atomically.
    layer.replace_all(vec![mk_config(
        "b-config",
        "a.example.com",
        &healthy.url,
        &healthy.ca,
        None,
        vec![rule_all()],
    )]);
    let answer = call(
        &layer,
        Request::InterpretHealth {
            object: mk_workload(3),
        },
    )
    .await;
    assert_eq!(answer, Response::Healthy(true));
    assert_eq!(healthy_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn core_group_rules_match_core_kinds_only() {
    let (server, calls) = health_server(true).await;
    let core_pods = RuleWithOperations {
        operations: vec![InterpreterOperation::InterpretHealth],
        api_groups: vec![String::new()],
        api_versions: vec!["v1".into()],
        kinds: vec!["Pod".into()],
    };
    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![mk_config(
        "core",
        "pods.example.com",
        &server.url,
        &server.ca,
        None,
        vec![core_pods],
    )]);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}});
    assert_eq!(
        call(&layer, Request::InterpretHealth { object: pod }).await,
        Response::Healthy(true)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let health = InterpreterOperation::InterpretHealth;
    assert!(matches!(
        layer.handles(&GroupVersionKind::gvk("apps", "v1", "Pod"), &health),
        Handles::No(_)
    ));
    assert!(matches!(
        layer.handles(
            &GroupVersionKind::gvk("", "v1", "Pod"),
            &InterpreterOperation::Retain
        ),
        Handles::No(_)
    ));
}

#[tokio::test]
async fn wildcard_rules_match_every_operation_and_kind() {
    let (server, calls) = health_server(true).await;
    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![mk_config(
        "all",
        "all.example.com",
        &server.url,
        &server.ca,
        None,
        vec![rule_all()],
    )]);
    for gvk in [
        GroupVersionKind::gvk("", "v1", "Service"),
        GroupVersionKind::gvk("apps", "v1", "Deployment"),
    ] {
        for op in InterpreterOperation::DISPATCHED {
            assert_eq!(
                layer.handles(&gvk, &op),
                Handles::Yes("all/all.example.com".into()),
                "{op} {gvk:?}"
            );
        }
    }
    let deployment =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
    assert_eq!(
        call(&layer, Request::InterpretHealth { object: deployment }).await,
        Response::Healthy(true)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
