//! How controllers reach the resource interpreter: the [`Interpreter`] trait (implemented by the
//! `flotilla-interpreter` facade, and by fakes in tests) and typed helpers, one per operation, that turn the
//! layer contract's [`Response`] into what each caller needs.
//!
//! Invariant: no controller interprets before [`Interpreter::ready`] resolved (interpreter spec §0: a layer is
//! never "not yet synced" at dispatch time); the manager awaits it before starting interpreting controllers.

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, Component, ReplicaRequirements};
use flotilla_interpreter::{Request, Response};
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
}

impl Interpreter for flotilla_interpreter::ResourceInterpreter {
    fn hook_enabled(&self, gvk: &GroupVersionKind, operation: InterpreterOperation) -> bool {
        flotilla_interpreter::ResourceInterpreter::hook_enabled(self, gvk, operation)
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
        source,
    }
}

fn unexpected(operation: InterpreterOperation, object: &Value) -> Error {
    Error::Interpret {
        operation,
        object: describe(object),
        source: flotilla_interpreter::Error::UnexpectedResponse {
            layer: "interpreter",
            operation,
        },
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

/// InterpretReplica: the template's replicas and per-replica requirements.
pub(crate) async fn get_replicas(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> Result<(i32, Option<ReplicaRequirements>)> {
    let op = InterpreterOperation::InterpretReplica;
    match interpreter
        .interpret(Request::InterpretReplica {
            object: object.clone(),
        })
        .await
    {
        Ok(Response::Replicas {
            replicas,
            requirements,
        }) => Ok((replicas, requirements)),
        Ok(_) => Err(unexpected(op, object)),
        Err(err) => Err(failed(op, object, err)),
    }
}

/// InterpretComponent: the pod-template components of a multi-template workload.
pub(crate) async fn get_components(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> Result<Vec<Component>> {
    let op = InterpreterOperation::InterpretComponent;
    match interpreter
        .interpret(Request::InterpretComponent {
            object: object.clone(),
        })
        .await
    {
        Ok(Response::Components(components)) => Ok(components),
        Ok(_) => Err(unexpected(op, object)),
        Err(err) => Err(failed(op, object, err)),
    }
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
            source,
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
            operation: op,
            object: described,
            source: flotilla_interpreter::Error::UnexpectedResponse {
                layer: "interpreter",
                operation: op,
            },
        }),
        Err(source) => Err(Error::Interpret {
            operation: op,
            object: described,
            source,
        }),
    }
}

/// InterpretStatus (ReflectStatus): the status to record for a member object.
pub(crate) async fn reflect_status(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> Result<Option<Value>> {
    let op = InterpreterOperation::InterpretStatus;
    match interpreter
        .interpret(Request::InterpretStatus {
            object: object.clone(),
        })
        .await
    {
        Ok(Response::Status(status)) => Ok(status),
        Ok(_) => Err(unexpected(op, object)),
        Err(err) => Err(failed(op, object, err)),
    }
}

/// InterpretHealth: whether a member object is healthy.
pub(crate) async fn interpret_health(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> Result<bool> {
    let op = InterpreterOperation::InterpretHealth;
    match interpreter
        .interpret(Request::InterpretHealth {
            object: object.clone(),
        })
        .await
    {
        Ok(Response::Healthy(healthy)) => Ok(healthy),
        Ok(_) => Err(unexpected(op, object)),
        Err(err) => Err(failed(op, object, err)),
    }
}

/// AggregateStatus: the template with its status folded from the member items.
pub(crate) async fn aggregate_status(
    interpreter: &dyn Interpreter,
    object: &Value,
    items: Vec<AggregatedStatusItem>,
) -> Result<Value> {
    let op = InterpreterOperation::AggregateStatus;
    match interpreter
        .interpret(Request::AggregateStatus {
            object: object.clone(),
            items,
        })
        .await
    {
        Ok(Response::Object(aggregated)) => Ok(aggregated),
        Ok(_) => Err(unexpected(op, object)),
        Err(err) => Err(failed(op, object, err)),
    }
}

/// InterpretDependency: the objects the template depends on.
pub(crate) async fn get_dependencies(
    interpreter: &dyn Interpreter,
    object: &Value,
) -> Result<Vec<DependentObjectReference>> {
    let op = InterpreterOperation::InterpretDependency;
    match interpreter
        .interpret(Request::InterpretDependency {
            object: object.clone(),
        })
        .await
    {
        Ok(Response::Dependencies(deps)) => Ok(deps),
        Ok(_) => Err(unexpected(op, object)),
        Err(err) => Err(failed(op, object, err)),
    }
}
