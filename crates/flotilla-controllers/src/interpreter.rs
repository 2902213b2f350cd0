//! How controllers reach the resource interpreter: the [`Interpreter`] trait (implemented by the
//! `flotilla-interpreter` facade, and by fakes in tests) and typed helpers, one per operation, that turn the
//! layer contract's [`Response`] into what each caller needs.
//!
//! Invariant: no controller interprets before [`Interpreter::ready`] resolved, so a layer is never "not yet
//! synced" when a call reaches it (Karmada deleted member objects after a restart for want of this); the manager
//! awaits it before starting interpreting controllers.

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, Component, ReplicaRequirements};
use flotilla_interpreter::facade::Explanation;
use flotilla_interpreter::{LayerKind, Request, Response};
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::objects::describe;

/// The interpreter as controllers see it.
pub trait Interpreter: Send + Sync + 'static {
    /// Whether any layer has a rule for `operation` on `gvk` (Karmada's `HookEnabled`).
    fn hook_enabled(&self, gvk: &GroupVersionKind, operation: InterpreterOperation) -> bool;

    /// Runs one operation through the layers, highest precedence first.
    fn interpret(
        &self,
        request: Request,
    ) -> BoxFuture<'_, std::result::Result<Response, flotilla_interpreter::Error>>;

    /// As [`Interpreter::interpret`], with the record of which layer answered and why the layers above it were
    /// skipped; interpreters that keep no such record (test fakes) give none.
    fn interpret_explained(
        &self,
        request: Request,
    ) -> BoxFuture<
        '_,
        (
            std::result::Result<Response, flotilla_interpreter::Error>,
            Option<Explanation>,
        ),
    > {
        Box::pin(async move { (self.interpret(request).await, None) })
    }

    /// Resolves once every layer has loaded its configuration.
    fn ready(&self) -> BoxFuture<'_, ()>;

    /// Registers the interpreter's own metrics in `registry` (the one `/metrics` serves), which puts `prefix_`
    /// before every name. Interpreters without metrics (test fakes) register nothing.
    ///
    /// # Errors
    /// When collectors of the same names are already registered there.
    fn register_metrics(
        &self,
        _registry: &prometheus::Registry,
        _prefix: &str,
    ) -> std::result::Result<(), prometheus::Error> {
        Ok(())
    }

    /// The record of the last call per object and operation (the status page shows it); `None` for
    /// interpreters that keep none (test fakes).
    fn journal(&self) -> Option<flotilla_interpreter::facade::Journal> {
        None
    }

    /// Tells `hook` of the configuration objects the interpreter cannot read, as the informers tell theirs.
    /// Interpreters that watch nothing (test fakes) have none.
    fn report_undecodable_to(&self, _hook: &crate::runtime::UndecodableHook) {}
}

impl Interpreter for flotilla_interpreter::ResourceInterpreter {
    fn hook_enabled(&self, gvk: &GroupVersionKind, operation: InterpreterOperation) -> bool {
        flotilla_interpreter::ResourceInterpreter::hook_enabled(self, gvk, operation)
    }

    fn report_undecodable_to(&self, hook: &crate::runtime::UndecodableHook) {
        flotilla_interpreter::ResourceInterpreter::report_undecodable_to(self, hook);
    }

    fn interpret(
        &self,
        request: Request,
    ) -> BoxFuture<'_, std::result::Result<Response, flotilla_interpreter::Error>> {
        Box::pin(async move {
            let (result, explanation) =
                flotilla_interpreter::ResourceInterpreter::interpret(self, request).await;
            tracing::trace!(?explanation, "interpreted");
            result
        })
    }

    fn interpret_explained(
        &self,
        request: Request,
    ) -> BoxFuture<
        '_,
        (
            std::result::Result<Response, flotilla_interpreter::Error>,
            Option<Explanation>,
        ),
    > {
        Box::pin(async move {
            let (result, explanation) =
                flotilla_interpreter::ResourceInterpreter::interpret(self, request).await;
            (result, Some(explanation))
        })
    }

    fn ready(&self) -> BoxFuture<'_, ()> {
        Box::pin(flotilla_interpreter::ResourceInterpreter::ready(self))
    }

    fn register_metrics(
        &self,
        registry: &prometheus::Registry,
        prefix: &str,
    ) -> std::result::Result<(), prometheus::Error> {
        self.metrics().register_in_prefixed(registry, prefix)
    }

    fn journal(&self) -> Option<flotilla_interpreter::facade::Journal> {
        Some(flotilla_interpreter::ResourceInterpreter::journal(self).clone())
    }
}

/// The group, version and kind of a JSON object (`apiVersion`, `kind`).
pub(crate) fn gvk_of(object: &Value) -> Result<GroupVersionKind> {
    flotilla_interpreter::layer::gvk_of(object)
        .map_err(|_| Error::invalid(describe(object), "object has no kind"))
}

fn failed(
    operation: InterpreterOperation,
    object: &Value,
    source: flotilla_interpreter::Error,
) -> Error {
    Error::Interpret {
        operation,
        object: describe(object),
        source: Box::new(source),
    }
}

fn unexpected(operation: InterpreterOperation, object: &Value) -> Error {
    Error::Interpret {
        operation: operation.clone(),
        object: describe(object),
        source: Box::new(flotilla_interpreter::Error::UnexpectedResponse {
            layer: "interpreter",
            operation,
        }),
    }
}

/// Whether any layer interprets `operation` for `object`'s kind.
pub(crate) fn enabled(
    interpreter: &dyn Interpreter,
    object: &Value,
    operation: InterpreterOperation,
) -> bool {
    gvk_of(object).is_ok_and(|gvk| interpreter.hook_enabled(&gvk, operation))
}

/// InterpretReplica: the template's replicas and per-replica requirements, with the layer that answered.
pub(crate) async fn get_replicas(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> (Result<(i32, Option<ReplicaRequirements>)>, Answered) {
    let request = Request::InterpretReplica {
        object: object.clone(),
    };
    ask(
        interpreter,
        InterpreterOperation::InterpretReplica,
        object,
        request,
        |response| match response {
            Response::Replicas {
                replicas,
                requirements,
            } => Some((replicas, requirements)),
            _ => None,
        },
    )
    .await
}

/// InterpretComponent: the pod-template components of a multi-template workload, and which layer answered.
pub(crate) async fn get_components(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> (Result<Vec<Component>>, Answered) {
    let request = Request::InterpretComponent {
        object: object.clone(),
    };
    ask(
        interpreter,
        InterpreterOperation::InterpretComponent,
        object,
        request,
        |response| match response {
            Response::Components(components) => Some(components),
            _ => None,
        },
    )
    .await
}

/// ReviseReplica: `object` with its replicas set to `replicas`.
pub(crate) async fn revise_replica(
    interpreter: &dyn Interpreter,
    object: Value,
    replicas: i64,
) -> Result<Value> {
    let op = InterpreterOperation::ReviseReplica;
    let described = describe(&object);
    match interpreter
        .interpret(Request::ReviseReplica { object, replicas })
        .await
    {
        Ok(Response::Object(revised)) => Ok(revised),
        Ok(_) => Err(unexpected(op, &Value::String(described))),
        Err(source) => Err(Error::Interpret {
            operation: op,
            object: described,
            source: Box::new(source),
        }),
    }
}

/// Retain: `desired` keeping what member-side controllers own in `observed`.
pub(crate) async fn retain(
    interpreter: &dyn Interpreter,
    desired: Value,
    observed: Value,
) -> Result<Value> {
    let op = InterpreterOperation::Retain;
    let described = describe(&desired);
    match interpreter
        .interpret(Request::Retain { desired, observed })
        .await
    {
        Ok(Response::Object(retained)) => Ok(retained),
        Ok(_) => Err(Error::Interpret {
            operation: op.clone(),
            object: described,
            source: Box::new(flotilla_interpreter::Error::UnexpectedResponse {
                layer: "interpreter",
                operation: op,
            }),
        }),
        Err(source) => Err(Error::Interpret {
            operation: op,
            object: described,
            source: Box::new(source),
        }),
    }
}

/// InterpretStatus (ReflectStatus): the status to record for a member object, with the layer that answered.
pub(crate) async fn reflect_status(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> (Result<Option<Value>>, Answered) {
    let request = Request::InterpretStatus {
        object: object.clone(),
    };
    ask(
        interpreter,
        InterpreterOperation::InterpretStatus,
        object,
        request,
        |response| match response {
            Response::Status(status) => Some(status),
            _ => None,
        },
    )
    .await
}

/// InterpretHealth: whether a member object is healthy, with the layer that answered.
pub(crate) async fn interpret_health(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> (Result<bool>, Answered) {
    let request = Request::InterpretHealth {
        object: object.clone(),
    };
    ask(
        interpreter,
        InterpreterOperation::InterpretHealth,
        object,
        request,
        |response| match response {
            Response::Healthy(healthy) => Some(healthy),
            _ => None,
        },
    )
    .await
}

/// AggregateStatus: the template with its status folded from the member items, with the layer that answered.
pub(crate) async fn aggregate_status(
    interpreter: &dyn Interpreter,
    object: &Value,
    items: Vec<AggregatedStatusItem>,
) -> (Result<Value>, Answered) {
    let request = Request::AggregateStatus {
        object: object.clone(),
        items,
    };
    ask(
        interpreter,
        InterpreterOperation::AggregateStatus,
        object,
        request,
        |response| match response {
            Response::Object(aggregated) => Some(aggregated),
            _ => None,
        },
    )
    .await
}

/// InterpretDependency: the objects the template depends on, with the layer that answered.
pub(crate) async fn get_dependencies(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> (Result<Vec<DependentObjectReference>>, Answered) {
    let request = Request::InterpretDependency {
        object: object.clone(),
    };
    ask(
        interpreter,
        InterpreterOperation::InterpretDependency,
        object,
        request,
        |response| match response {
            Response::Dependencies(deps) => Some(deps),
            _ => None,
        },
    )
    .await
}

/// Asks for `operation` on `object` and takes the answer `pick` finds in the response (none: an unexpected
/// response), with the layer that answered.
async fn ask<T>(
    interpreter: &dyn Interpreter,
    operation: InterpreterOperation,
    object: &Value,
    request: Request,
    pick: impl FnOnce(Response) -> Option<T>,
) -> (Result<T>, Answered) {
    let (result, answered) = explained(interpreter, request).await;
    let result = match result {
        Ok(response) => pick(response).ok_or_else(|| unexpected(operation, object)),
        Err(err) => Err(failed(operation, object, err)),
    };
    (result, answered)
}

async fn explained(
    interpreter: &dyn Interpreter,
    request: Request,
) -> (
    std::result::Result<Response, flotilla_interpreter::Error>,
    Answered,
) {
    let (result, explanation) = interpreter.interpret_explained(request).await;
    if let Some(explanation) = &explanation {
        tracing::trace!(?explanation, "interpreted");
    }
    (result, Answered(explanation))
}

/// Which interpreter layer answered an operation and why the layers above it did not, as Event messages say
/// it: beyond Karmada, whose users ask for it (karmada-io/karmada#5238).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Answered(pub(crate) Option<Explanation>);

impl Answered {
    /// `text` (Karmada's message, kept first so its users recognise it) followed by the layers in parentheses,
    /// e.g. `... successfully. (answered by webhook "workloads.example.io"; customization skipped: no
    /// customization for workload.example.io/v1alpha1 Workload)`. Just `text` when nothing was recorded.
    pub(crate) fn note(&self, text: impl Into<String>) -> String {
        let text = text.into();
        let Some(explanation) = &self.0 else {
            return text;
        };
        let mut parts = vec![match &explanation.answered {
            Some(answer) if answer.layer == LayerKind::Native => {
                format!("answered by the {}", answer.rule)
            }
            Some(answer) => format!("answered by {} \"{}\"", answer.layer, answer.rule),
            None => "no interpreter layer has a rule for it".to_owned(),
        }];
        parts.extend(
            explanation
                .skipped
                .iter()
                .map(|s| format!("{} skipped: {}", s.layer, s.reason)),
        );
        format!("{text} ({})", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use flotilla_interpreter::facade::{Answer, Skipped};

    use super::*;

    fn explanation(answered: Option<(LayerKind, &str)>) -> Explanation {
        Explanation {
            operation: InterpreterOperation::InterpretHealth,
            gvk: None,
            skipped: vec![Skipped {
                layer: LayerKind::Customization,
                reason: "no customization for apps/v1 Deployment".into(),
            }],
            answered: answered.map(|(layer, rule)| Answer {
                layer,
                rule: rule.into(),
            }),
            error: None,
        }
    }

    #[test]
    fn notes_keep_karmadas_text_first_and_name_the_layer_and_the_skipped_ones() {
        let native = Answered(Some(explanation(Some((
            LayerKind::Native,
            "native Deployment handler",
        )))));
        assert_eq!(
            native.note("Interpret health of object(Deployment/d/web) as healthy."),
            "Interpret health of object(Deployment/d/web) as healthy. (answered by the native Deployment \
             handler; customization skipped: no customization for apps/v1 Deployment)"
        );
        let webhook = Answered(Some(explanation(Some((LayerKind::Webhook, "cfg/hook")))));
        assert!(
            webhook
                .note("x")
                .starts_with("x (answered by webhook \"cfg/hook\"; ")
        );
        let none = Answered(Some(explanation(None)));
        assert!(
            none.note("x")
                .starts_with("x (no interpreter layer has a rule for it; ")
        );
        assert_eq!(Answered(None).note("plain"), "plain");
    }
}
