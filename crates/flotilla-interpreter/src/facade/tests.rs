//! Precedence tests with fake layers above the real native layer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation as Op};
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use super::*;

/// A layer that answers (or fails) for one operation on one kind and counts its calls.
struct Fake {
    kind: LayerKind,
    operation: Op,
    gvk: GroupVersionKind,
    answer: Result<Response, &'static str>,
    calls: AtomicUsize,
}

impl Fake {
    fn new(kind: LayerKind, operation: Op, answer: Result<Response, &'static str>) -> Arc<Fake> {
        Arc::new(Fake {
            kind,
            operation,
            gvk: deployment_gvk(),
            answer,
            calls: AtomicUsize::new(0),
        })
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct FakeError(&'static str);

impl Layer for Fake {
    fn kind(&self) -> LayerKind {
        self.kind
    }

    fn handles(&self, gvk: &GroupVersionKind, operation: &Op) -> Handles {
        if *gvk == self.gvk && *operation == self.operation {
            Handles::Yes(format!("fake {}", self.kind))
        } else {
            Handles::No(format!("fake {} has no rule", self.kind))
        }
    }

    fn interpret(&self, request: Request) -> BoxFuture<'_, Result<Response, Error>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let result = self.answer.clone().map_err(|message| Error::Layer {
            layer: self.kind.as_str(),
            operation: request.operation(),
            object: "Deployment ns/web".to_owned(),
            source: Box::new(FakeError(message)),
        });
        Box::pin(std::future::ready(result))
    }
}

fn deployment_gvk() -> GroupVersionKind {
    GroupVersionKind::gvk("apps", "v1", "Deployment")
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns", "generation": 1},
           "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2}})
}

fn interpreter(layers: &[Arc<Fake>]) -> ResourceInterpreter {
    let mut builder = ResourceInterpreter::builder().native();
    for layer in layers {
        builder = builder.layer(layer.clone());
    }
    match builder.build() {
        Ok(i) => i,
        Err(e) => panic!("build: {e}"),
    }
}

const ABOVE_NATIVE: [LayerKind; 3] = [
    LayerKind::Customization,
    LayerKind::Webhook,
    LayerKind::ThirdParty,
];

#[tokio::test]
async fn each_layer_in_turn_answers_for_the_same_kind() {
    // Every fake says "unhealthy", native says "healthy": removing the top layer each round shows who answers.
    for top in 0..=ABOVE_NATIVE.len() {
        let fakes: Vec<Arc<Fake>> = ABOVE_NATIVE[top..]
            .iter()
            .map(|kind| Fake::new(*kind, Op::InterpretHealth, Ok(Response::Healthy(false))))
            .collect();
        // Added bottom-up to show the builder orders layers by kind.
        let reversed: Vec<Arc<Fake>> = fakes.iter().rev().cloned().collect();
        let interpreter = interpreter(&reversed);
        let result = interpreter.interpret_health(deployment()).await;
        let Ok(Interpreted { value, explanation }) = result else {
            panic!("round {top}: {result:?}")
        };
        let expected_layer = ABOVE_NATIVE.get(top).copied().unwrap_or(LayerKind::Native);
        assert_eq!(
            explanation.answered.as_ref().map(|a| a.layer),
            Some(expected_layer),
            "round {top}"
        );
        assert_eq!(value, expected_layer == LayerKind::Native, "round {top}");
        let skipped: Vec<LayerKind> = explanation.skipped.iter().map(|s| s.layer).collect();
        assert!(
            skipped.is_empty(),
            "no fake above the answering one exists in round {top}: {skipped:?}"
        );
        let called: Vec<usize> = fakes.iter().map(|f| f.calls()).collect();
        let mut expected_calls = vec![0; fakes.len()];
        if let Some(first) = expected_calls.first_mut() {
            *first = 1;
        }
        assert_eq!(
            called, expected_calls,
            "only the answering layer is called in round {top}"
        );
    }
}

#[tokio::test]
async fn layers_without_a_rule_are_skipped_with_their_reason() {
    let customization = Fake::new(
        LayerKind::Customization,
        Op::Retain,
        Ok(Response::Healthy(false)),
    );
    let third_party = Fake::new(
        LayerKind::ThirdParty,
        Op::InterpretHealth,
        Ok(Response::Healthy(false)),
    );
    let interpreter = interpreter(&[customization.clone(), third_party.clone()]);
    let (result, explanation) = interpreter
        .interpret(Request::InterpretHealth {
            object: deployment(),
        })
        .await;
    assert!(matches!(result, Ok(Response::Healthy(false))));
    assert_eq!(
        explanation.skipped,
        vec![Skipped {
            layer: LayerKind::Customization,
            reason: "fake customization has no rule".to_owned()
        }]
    );
    assert_eq!(
        explanation.answered,
        Some(Answer {
            layer: LayerKind::ThirdParty,
            rule: "fake third-party".to_owned()
        })
    );
    assert_eq!(customization.calls(), 0);
    let text = explanation.to_string();
    assert!(
        text.contains("customization: skipped: fake customization has no rule"),
        "{text}"
    );
    assert!(
        text.contains("third-party: answered (fake third-party)"),
        "{text}"
    );
}

#[tokio::test]
async fn an_error_stops_the_chain() {
    let customization = Fake::new(
        LayerKind::Customization,
        Op::InterpretHealth,
        Err("lua exploded"),
    );
    let webhook = Fake::new(
        LayerKind::Webhook,
        Op::InterpretHealth,
        Ok(Response::Healthy(true)),
    );
    let interpreter = interpreter(&[customization.clone(), webhook.clone()]);
    let (result, explanation) = interpreter
        .interpret(Request::InterpretHealth {
            object: deployment(),
        })
        .await;
    let Err(error) = result else {
        panic!("expected the customization's error")
    };
    assert!(error_text(&error).contains("lua exploded"));
    assert_eq!(webhook.calls(), 0, "no fallback to lower layers");
    assert_eq!(
        explanation.answered.map(|a| a.layer),
        Some(LayerKind::Customization)
    );
    assert!(
        explanation
            .error
            .is_some_and(|e| e.contains("lua exploded"))
    );
    assert_eq!(
        interpreter.metrics().calls(
            "customization",
            "InterpretHealth",
            "apps/Deployment",
            "error"
        ),
        1
    );
}

#[tokio::test]
async fn hook_enabled_is_an_or_over_layers() {
    let webhook = Fake::new(
        LayerKind::Webhook,
        Op::InterpretComponent,
        Ok(Response::Components(vec![])),
    );
    let interpreter = interpreter(&[webhook]);
    let widget = GroupVersionKind::gvk("example.io", "v1", "Widget");
    assert!(
        interpreter.hook_enabled(&deployment_gvk(), Op::InterpretComponent),
        "webhook rule"
    );
    assert!(
        interpreter.hook_enabled(&deployment_gvk(), Op::Retain),
        "native rule"
    );
    assert!(
        interpreter.hook_enabled(&widget, Op::InterpretStatus),
        "native whole-status reflection"
    );
    assert!(!interpreter.hook_enabled(&widget, Op::InterpretHealth));
    assert!(!interpreter.hook_enabled(&deployment_gvk(), Op::Prune));
}

#[tokio::test]
async fn no_rule_anywhere_gives_karmadas_message() {
    let interpreter = interpreter(&[]);
    let widget =
        json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let Err(error) = interpreter.interpret_health(widget.clone()).await else {
        panic!("expected not found")
    };
    assert_eq!(
        error.to_string(),
        r#"default InterpretHealth interpreter for "example.io/v1, Kind=Widget" not found"#
    );
    let (_, explanation) = interpreter
        .interpret(Request::InterpretHealth { object: widget })
        .await;
    assert_eq!(explanation.skipped.len(), 1);
    assert_eq!(explanation.answered, None);
    assert_eq!(
        interpreter
            .metrics()
            .calls("none", "InterpretHealth", "example.io/Widget", "error"),
        2
    );
    let Err(error) = interpreter.get_replicas(json!({"apiVersion": "v1"})).await else {
        panic!("expected an error")
    };
    assert!(matches!(error, Error::MissingKind));
}

#[tokio::test]
async fn calls_wait_for_readiness() {
    let readiness = Readiness::new();
    let customizations = readiness.gate("customizations");
    let webhooks = readiness.gate("webhook configurations");
    let interpreter = match ResourceInterpreter::builder()
        .native()
        .readiness(readiness)
        .build()
    {
        Ok(i) => Arc::new(i),
        Err(e) => panic!("{e}"),
    };
    assert!(!interpreter.is_ready());
    let Err(error) = interpreter.interpret_health(deployment()).await else {
        panic!("must not dispatch yet")
    };
    assert!(
        matches!(
            error,
            Error::NotReady {
                layer: "customizations"
            }
        ),
        "{error}"
    );
    let waiter = tokio::spawn({
        let interpreter = interpreter.clone();
        async move { interpreter.ready().await }
    });
    customizations.set_ready();
    assert!(!interpreter.is_ready(), "one gate is still closed");
    webhooks.set_ready();
    match tokio::time::timeout(Duration::from_secs(5), waiter).await {
        Ok(Ok(())) => {}
        other => panic!("ready() did not return after every gate opened: {other:?}"),
    }
    assert!(
        interpreter
            .interpret_health(deployment())
            .await
            .is_ok_and(|r| r.value)
    );
}

fn reference(kind: &str, name: &str) -> DependentObjectReference {
    DependentObjectReference {
        api_version: "v1".to_owned(),
        kind: kind.to_owned(),
        namespace: "ns".to_owned(),
        name: name.to_owned(),
        label_selector: None,
    }
}

#[tokio::test]
async fn dependencies_are_validated_and_lua_results_sorted() {
    let unsorted = vec![
        reference("Secret", "b"),
        reference("ConfigMap", "z"),
        reference("Secret", "b"),
        reference("Secret", "a"),
    ];
    let customization = Fake::new(
        LayerKind::Customization,
        Op::InterpretDependency,
        Ok(Response::Dependencies(unsorted.clone())),
    );
    let interpreter = interpreter(&[customization]);
    let refs = interpreter
        .get_dependencies(deployment())
        .await
        .map(|r| r.value);
    let names: Vec<(String, String)> = refs
        .into_iter()
        .flatten()
        .map(|r| (r.kind, r.name))
        .collect();
    let expected = [("ConfigMap", "z"), ("Secret", "a"), ("Secret", "b")]
        .map(|(k, n)| (k.to_owned(), n.to_owned()));
    assert_eq!(names, expected);

    let webhook = Fake::new(
        LayerKind::Webhook,
        Op::InterpretDependency,
        Ok(Response::Dependencies(unsorted.clone())),
    );
    let interpreter = super::tests::interpreter(&[webhook]);
    let refs = interpreter
        .get_dependencies(deployment())
        .await
        .map(|r| r.value);
    assert_eq!(refs.ok(), Some(unsorted), "webhook order is kept");

    let mut nameless = reference("Secret", "");
    let invalid = Fake::new(
        LayerKind::Webhook,
        Op::InterpretDependency,
        Ok(Response::Dependencies(vec![
            reference("Secret", "ok"),
            nameless.clone(),
        ])),
    );
    let Err(error) = super::tests::interpreter(&[invalid])
        .get_dependencies(deployment())
        .await
    else {
        panic!("must fail")
    };
    assert!(
        error.to_string().contains("dependencies[1]")
            && error.to_string().contains("labelSelector"),
        "{error}"
    );

    nameless.label_selector = Some(flotilla_api::config::v1alpha1::OrdLabelSelector(
        serde_json::from_value(json!({"matchLabels": {"app": "bad value"}})).unwrap_or_default(),
    ));
    let invalid = Fake::new(
        LayerKind::Customization,
        Op::InterpretDependency,
        Ok(Response::Dependencies(vec![nameless])),
    );
    let Err(error) = super::tests::interpreter(&[invalid])
        .get_dependencies(deployment())
        .await
    else {
        panic!("must fail")
    };
    assert!(
        error.to_string().contains("not a valid label value"),
        "{error}"
    );
}

#[tokio::test]
async fn a_response_of_the_wrong_shape_is_an_error() {
    let confused = Fake::new(
        LayerKind::Webhook,
        Op::InterpretHealth,
        Ok(Response::Object(json!({}))),
    );
    let interpreter = interpreter(&[confused]);
    let Err(error) = interpreter.interpret_health(deployment()).await else {
        panic!("must fail")
    };
    assert!(matches!(
        error,
        Error::UnexpectedResponse {
            layer: "webhook",
            operation: Op::InterpretHealth
        }
    ));
}

#[tokio::test]
async fn native_answers_count_in_metrics_with_low_cardinality_labels() {
    let interpreter = interpreter(&[]);
    for _ in 0..3 {
        assert!(
            interpreter
                .get_replicas(deployment())
                .await
                .is_ok_and(|r| r.value.0 == 2)
        );
    }
    assert_eq!(
        interpreter
            .metrics()
            .calls("native", "InterpretReplica", "apps/Deployment", "ok"),
        3
    );
    let registry = prometheus::Registry::new();
    assert!(interpreter.metrics().register(&registry).is_ok());
    let families = registry.gather();
    let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    assert!(
        names.contains(&"flotilla_interpreter_calls_total")
            && names.contains(&"flotilla_interpreter_call_duration_seconds")
    );
}

#[tokio::test]
async fn metrics_keep_their_names_in_a_registry_that_prefixes_every_name() {
    let interpreter = interpreter(&[]);
    assert!(interpreter.get_replicas(deployment()).await.is_ok());
    let registry = match prometheus::Registry::new_custom(Some("flotilla".to_owned()), None) {
        Ok(registry) => registry,
        Err(e) => panic!("registry: {e}"),
    };
    assert!(
        interpreter
            .metrics()
            .register_in_prefixed(&registry, "flotilla")
            .is_ok()
    );
    let families = registry.gather();
    let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    assert!(
        names.contains(&"flotilla_interpreter_calls_total")
            && names.contains(&"flotilla_interpreter_call_duration_seconds"),
        "{names:?}"
    );
    let calls = families
        .iter()
        .find(|f| f.name() == "flotilla_interpreter_calls_total")
        .map(|f| f.get_metric().len());
    assert_eq!(calls, Some(1));
    // Registering twice is refused, as for any collector.
    assert!(
        interpreter
            .metrics()
            .register_in_prefixed(&registry, "flotilla")
            .is_err()
    );
}

#[tokio::test]
async fn every_dispatched_call_is_journaled_under_its_object() {
    let webhook = Fake::new(LayerKind::Webhook, Op::InterpretHealth, Err("refused"));
    let interpreter = interpreter(&[webhook]);
    assert!(interpreter.interpret_health(deployment()).await.is_err());
    assert!(interpreter.get_replicas(deployment()).await.is_ok());
    let entries = interpreter
        .journal()
        .entries(&Subject::new("apps", "Deployment", "ns", "web"));
    let seen: Vec<(Op, Option<LayerKind>, bool)> = entries
        .iter()
        .map(|e| (e.operation.clone(), e.layer, e.failed))
        .collect();
    assert_eq!(
        seen,
        [
            (Op::InterpretReplica, Some(LayerKind::Native), false),
            (Op::InterpretHealth, Some(LayerKind::Webhook), true),
        ]
    );
    let error = entries[1].last_error.as_ref().map(|e| e.message.as_str());
    assert!(error.is_some_and(|e| e.contains("refused")), "{error:?}");
}
