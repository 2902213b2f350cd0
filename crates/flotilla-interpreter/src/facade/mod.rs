//! The `ResourceInterpreter` facade: one method per operation, dispatching to the layers in
//! Karmada's order (customization, webhook, third-party, native) and recording which layer answered.
//!
//! Guarantees:
//! - Per call, layers are consulted in [`LayerKind::ORDER`]; a layer whose [`Layer::handles`] says no is
//!   skipped and its reason recorded; the first that says yes answers, and its error is the call's error
//!   (no fallback).
//! - No call is dispatched before every readiness gate opened: it fails with [`Error::NotReady`] instead.
//!   Callers await [`ResourceInterpreter::ready`] first.
//! - Dependency results of every layer are validated; the Lua layers' are deduplicated and sorted.
//! - Every dispatched call is counted in [`Metrics`] and runs inside an `interpret` tracing span carrying the
//!   operation, kind and answering layer; its layer, latency and error are kept per object in the [`Journal`].

mod explain;
mod journal;
mod metrics;
mod readiness;
pub(crate) mod validate;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Instant;

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation as Op};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, Component, ReplicaRequirements};
use flotilla_client::lenient::{Reporter, UndecodableHook};
use kube::core::GroupVersionKind;
use serde_json::Value;
use tracing::Instrument;

pub use explain::{Answer, Explanation, Skipped, kind_label};
pub use journal::{Entry, Journal, LastError, Subject};
pub use metrics::Metrics;
pub use readiness::{Readiness, ReadyGate};

use crate::Error;
use crate::layer::{Handles, Input, Layer, LayerKind, Request, Response};
use crate::native::{NativeLayer, gvk_string};

/// A result together with the record of how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub struct Interpreted<T> {
    /// The result.
    pub value: T,
    /// Which layer answered and why the others did not.
    pub explanation: Explanation,
}

/// The layered resource interpreter. Share it as `Arc<ResourceInterpreter>`.
pub struct ResourceInterpreter {
    /// In dispatch order.
    layers: Vec<Arc<dyn Layer>>,
    readiness: Readiness,
    metrics: Metrics,
    journal: Journal,
    /// Reporters of the configuration objects the user layers' watches cannot read.
    reporters: Vec<Arc<Reporter>>,
}

/// Assembles a [`ResourceInterpreter`] from its layers.
#[derive(Default)]
pub struct Builder {
    layers: Vec<Arc<dyn Layer>>,
    readiness: Option<Readiness>,
    metrics: Option<Metrics>,
    reporters: Vec<Arc<Reporter>>,
}

impl Builder {
    /// Adds a layer; layers are ordered by their [`LayerKind`] whatever the order they are added in.
    #[must_use]
    pub fn layer(mut self, layer: Arc<dyn Layer>) -> Builder {
        self.layers.push(layer);
        self
    }

    /// Adds the native layer.
    #[must_use]
    pub fn native(self) -> Builder {
        self.layer(Arc::new(NativeLayer::new()))
    }

    /// The readiness gates the interpreter waits for (default: none, ready at once).
    #[must_use]
    pub fn readiness(mut self, readiness: Readiness) -> Builder {
        self.readiness = Some(readiness);
        self
    }

    /// The reporters of configuration objects the user layers' watches cannot read (see
    /// [`ResourceInterpreter::report_undecodable_to`]).
    #[must_use]
    pub fn reporters(mut self, reporters: Vec<Arc<Reporter>>) -> Builder {
        self.reporters = reporters;
        self
    }

    /// The metrics to count calls in (default: fresh, unregistered collectors).
    #[must_use]
    pub fn metrics(mut self, metrics: Metrics) -> Builder {
        self.metrics = Some(metrics);
        self
    }

    /// The interpreter.
    ///
    /// # Errors
    /// Only if default metrics cannot be created (a bug).
    pub fn build(self) -> Result<ResourceInterpreter, prometheus::Error> {
        let mut layers = self.layers;
        // Stable: two layers of one kind (tests) keep the order they were added in.
        layers.sort_by_key(|layer| layer.kind());
        let metrics = match self.metrics {
            Some(metrics) => metrics,
            None => Metrics::new()?,
        };
        Ok(ResourceInterpreter {
            layers,
            readiness: self.readiness.unwrap_or_default(),
            metrics,
            journal: Journal::default(),
            reporters: self.reporters,
        })
    }
}

impl ResourceInterpreter {
    /// A builder with no layers.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Whether every readiness gate is open.
    pub fn is_ready(&self) -> bool {
        self.readiness.is_ready()
    }

    /// Waits until every layer has loaded its configuration.
    pub async fn ready(&self) {
        self.readiness.wait().await;
    }

    /// Tells `hook` of every configuration object the user layers' watches cannot read: those already seen, and
    /// each one after.
    pub fn report_undecodable_to(&self, hook: &UndecodableHook) {
        for reporter in &self.reporters {
            reporter.set_hook(hook.clone());
        }
    }

    /// The metrics this interpreter counts in.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The record of the last call per object and operation.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Whether any layer has a rule for `op` on `gvk` (Karmada's `HookEnabled`: a plain OR over the layers).
    /// Callers skip the operation when this is false.
    pub fn hook_enabled(&self, gvk: &GroupVersionKind, op: Op) -> bool {
        self.layers
            .iter()
            .any(|layer| matches!(layer.handles(gvk, &op), Handles::Yes(_)))
    }

    /// Dispatches one request; returns the result and the record of which layer answered, also on failure.
    pub async fn interpret(&self, request: Request) -> (Result<Response, Error>, Explanation) {
        self.interpret_input(Input::from(request)).await
    }

    /// As [`ResourceInterpreter::interpret`], for an input that may say AggregateStatus's items were given as an
    /// empty list rather than not at all (`flotilla interpret --status-file`).
    pub async fn interpret_input(&self, input: Input) -> (Result<Response, Error>, Explanation) {
        let operation = input.operation();
        let gvk = match input.request().gvk() {
            Ok(gvk) => gvk,
            Err(error) => {
                let mut explanation = Explanation::new(operation.clone(), None);
                explanation.error = Some(error.to_string());
                return (Err(error), explanation);
            }
        };
        let mut explanation = Explanation::new(operation.clone(), Some(gvk.clone()));
        if let Some(layer) = self.readiness.pending() {
            let error = Error::NotReady { layer };
            explanation.error = Some(error.to_string());
            return (Err(error), explanation);
        }
        let kind = kind_label(&gvk);
        let subject = journal::Subject::of(&gvk, input.object());
        let span = tracing::debug_span!(
            "interpret",
            operation = operation.as_str(),
            kind = kind.as_str(),
            layer = tracing::field::Empty,
            skipped = tracing::field::Empty,
        );
        for layer in &self.layers {
            let rule = match layer.handles(&gvk, &operation) {
                Handles::No(reason) => {
                    explanation.skipped.push(Skipped {
                        layer: layer.kind(),
                        reason,
                    });
                    continue;
                }
                Handles::Yes(rule) => rule,
            };
            let layer_kind = layer.kind();
            span.record("layer", layer_kind.as_str());
            span.record(
                "skipped",
                tracing::field::debug(skipped_layers(&explanation)),
            );
            explanation.answered = Some(Answer {
                layer: layer_kind,
                rule,
            });
            let started = Instant::now();
            let result = layer.interpret_input(input).instrument(span.clone()).await;
            let result = result.and_then(|response| check(layer_kind, &operation, response));
            self.metrics.observe(
                layer_kind.as_str(),
                operation.as_str(),
                &kind,
                result.is_ok(),
                started.elapsed().as_secs_f64(),
            );
            if let Err(error) = &result {
                explanation.error = Some(error_text(error));
                tracing::debug!(parent: &span, error = %explanation.error.as_deref().unwrap_or_default(), "interpreter layer failed");
            }
            self.journal
                .record(subject, &explanation, started.elapsed());
            return (result, explanation);
        }
        self.metrics
            .observe("none", operation.as_str(), &kind, false, 0.0);
        let error = Error::NotFound {
            operation,
            gvk: gvk_string(&gvk),
        };
        explanation.error = Some(error.to_string());
        (Err(error), explanation)
    }

    async fn call<T>(
        &self,
        request: Request,
        extract: impl FnOnce(Response) -> Option<T>,
    ) -> Result<Interpreted<T>, Error> {
        let operation = request.operation();
        let (result, explanation) = self.interpret(request).await;
        let response = result?;
        let layer = explanation
            .answered
            .as_ref()
            .map_or("none", |a| a.layer.as_str());
        let value = extract(response).ok_or(Error::UnexpectedResponse { layer, operation })?;
        Ok(Interpreted { value, explanation })
    }

    /// InterpretReplica: the replica count and per-replica requirements of a template.
    ///
    /// # Errors
    /// The answering layer's error, or [`Error::NotFound`] when no layer has a rule.
    pub async fn get_replicas(
        &self,
        object: Value,
    ) -> Result<Interpreted<(i32, Option<ReplicaRequirements>)>, Error> {
        self.call(Request::InterpretReplica { object }, |r| match r {
            Response::Replicas {
                replicas,
                requirements,
            } => Some((replicas, requirements)),
            _ => None,
        })
        .await
    }

    /// InterpretComponent: the pod-template components of a multi-template workload.
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`].
    pub async fn get_components(
        &self,
        object: Value,
    ) -> Result<Interpreted<Vec<Component>>, Error> {
        self.call(Request::InterpretComponent { object }, |r| match r {
            Response::Components(components) => Some(components),
            _ => None,
        })
        .await
    }

    /// ReviseReplica: the template (a copy) with `replicas` replicas.
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`].
    pub async fn revise_replica(
        &self,
        object: Value,
        replicas: i64,
    ) -> Result<Interpreted<Value>, Error> {
        self.call(Request::ReviseReplica { object, replicas }, object_of)
            .await
    }

    /// Retain: `desired` keeping the member-owned fields of `observed`.
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`].
    pub async fn retain(
        &self,
        desired: Value,
        observed: Value,
    ) -> Result<Interpreted<Value>, Error> {
        self.call(Request::Retain { desired, observed }, object_of)
            .await
    }

    /// AggregateStatus: the template with its status folded from `items` (one per member, sorted by cluster).
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`].
    pub async fn aggregate_status(
        &self,
        object: Value,
        items: Vec<AggregatedStatusItem>,
    ) -> Result<Interpreted<Value>, Error> {
        self.call(Request::AggregateStatus { object, items }, object_of)
            .await
    }

    /// InterpretStatus: the status to reflect from a member object, `None` when it has none.
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`].
    pub async fn reflect_status(&self, object: Value) -> Result<Interpreted<Option<Value>>, Error> {
        self.call(Request::InterpretStatus { object }, |r| match r {
            Response::Status(status) => Some(status),
            _ => None,
        })
        .await
    }

    /// InterpretHealth: whether a member object is healthy.
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`].
    pub async fn interpret_health(&self, object: Value) -> Result<Interpreted<bool>, Error> {
        self.call(Request::InterpretHealth { object }, |r| match r {
            Response::Healthy(healthy) => Some(healthy),
            _ => None,
        })
        .await
    }

    /// InterpretDependency: the objects a template depends on, validated.
    ///
    /// # Errors
    /// As [`ResourceInterpreter::get_replicas`], or [`Error::InvalidDependency`].
    pub async fn get_dependencies(
        &self,
        object: Value,
    ) -> Result<Interpreted<Vec<DependentObjectReference>>, Error> {
        self.call(Request::InterpretDependency { object }, |r| match r {
            Response::Dependencies(refs) => Some(refs),
            _ => None,
        })
        .await
    }
}

fn object_of(response: Response) -> Option<Value> {
    match response {
        Response::Object(object) => Some(object),
        _ => None,
    }
}

/// Checks that a response fits the operation, and post-processes dependency lists.
fn check(layer: LayerKind, operation: &Op, response: Response) -> Result<Response, Error> {
    let fits = matches!(
        (operation, &response),
        (Op::InterpretReplica, Response::Replicas { .. })
            | (Op::InterpretComponent, Response::Components(_))
            | (
                Op::ReviseReplica | Op::Retain | Op::AggregateStatus,
                Response::Object(_)
            )
            | (Op::InterpretStatus, Response::Status(_))
            | (Op::InterpretHealth, Response::Healthy(_))
            | (Op::InterpretDependency, Response::Dependencies(_))
    );
    if !fits {
        return Err(Error::UnexpectedResponse {
            layer: layer.as_str(),
            operation: operation.clone(),
        });
    }
    match response {
        Response::Dependencies(refs) => {
            validate::dependencies(layer, refs).map(Response::Dependencies)
        }
        other => Ok(other),
    }
}

fn skipped_layers(explanation: &Explanation) -> Vec<&'static str> {
    explanation
        .skipped
        .iter()
        .map(|s| s.layer.as_str())
        .collect()
}

/// The error and its sources on one line.
pub fn error_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let message = s.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = s.source();
    }
    text
}
