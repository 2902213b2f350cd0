//! The native interpreter: Karmada's built-in handlers for Kubernetes kinds, the last
//! layer of every dispatch.
//!
//! Handlers are keyed by exact group, version and kind. InterpretStatus is handled for every kind:
//! kinds without a specific handler reflect their whole `.status`. Handlers that read typed fields decode the
//! object into its k8s-openapi type first, so a field of the wrong type fails the call as in Karmada, except
//! InterpretReplica, which reads and type-checks only the pod template fields its answer depends on (decoding
//! the whole template would triple its cost; see [`requirements`]); handlers
//! that return an object edit the JSON in place, so every field they do not own is kept byte for byte.

mod aggregate;
mod dependencies;
mod error;
mod health;
mod job_status;
mod kinds;
mod load_balancer;
pub(crate) mod object;
pub mod pod;
mod reflect;
mod replica;
pub mod requirements;
mod retain;

use flotilla_api::config::v1alpha1::InterpreterOperation as Op;
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;

pub use error::{NativeError, not_found_message};
pub use kinds::{KINDS, NativeKind};

use crate::layer::{Handles, Layer, LayerKind, Request, Response, gvk_of};

/// Go's spelling of a group, version and kind (`apps/v1, Kind=Deployment`, `/v1, Kind=Pod`), used in
/// Karmada-compatible messages.
pub fn gvk_string(gvk: &GroupVersionKind) -> String {
    format!("{}/{}, Kind={}", gvk.group, gvk.version, gvk.kind)
}

/// Whether the native layer answers `op` for `gvk` (its part of `HookEnabled`): InterpretStatus
/// for every kind, the other operations for the kinds of the coverage matrix.
pub fn enabled(gvk: &GroupVersionKind, op: &Op) -> bool {
    *op == Op::InterpretStatus || NativeKind::of(gvk).is_some_and(|k| k.supports(op))
}

/// Runs the native handler for `request`.
///
/// # Errors
/// [`NativeError::NotFound`] when there is no handler (with Karmada's message), or the handler's error.
pub fn interpret(request: Request) -> Result<Response, NativeError> {
    let gvk = gvk_of(request.object()).map_err(|_| NativeError::Field {
        object: "object".to_owned(),
        field: "kind".to_owned(),
        reason: "Object 'Kind' is missing".to_owned(),
    })?;
    let operation = request.operation();
    let kind = NativeKind::of(&gvk);
    let missing = || not_found(operation, &gvk);
    match request {
        Request::InterpretStatus { object } => {
            reflect::reflect_status(kind.and_then(|k| k.status), &object).map(Response::Status)
        }
        Request::InterpretReplica { object } => {
            let handler = kind.and_then(|k| k.replicas).ok_or_else(missing)?;
            handler(&object).map(|(replicas, requirements)| Response::Replicas {
                replicas,
                requirements,
            })
        }
        Request::ReviseReplica { object, replicas } => {
            let handler = kind.and_then(|k| k.revise).ok_or_else(missing)?;
            handler(object, replicas).map(Response::Object)
        }
        Request::Retain { desired, observed } => {
            let handler = kind.and_then(|k| k.retain).ok_or_else(missing)?;
            handler(desired, &observed).map(Response::Object)
        }
        Request::AggregateStatus { object, items } => {
            let handler = kind.and_then(|k| k.aggregate).ok_or_else(missing)?;
            handler(object, &items).map(Response::Object)
        }
        Request::InterpretHealth { object } => {
            let handler = kind.and_then(|k| k.health).ok_or_else(missing)?;
            handler(&object).map(Response::Healthy)
        }
        Request::InterpretDependency { object } => {
            let handler = kind.and_then(|k| k.dependencies).ok_or_else(missing)?;
            handler(&object).map(Response::Dependencies)
        }
        Request::InterpretComponent { .. } => Err(missing()),
    }
}

fn not_found(operation: Op, gvk: &GroupVersionKind) -> NativeError {
    NativeError::NotFound {
        operation,
        gvk: gvk_string(gvk),
    }
}

/// The native interpreter as a [`Layer`]: stateless, always loaded.
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeLayer;

impl NativeLayer {
    /// The native layer.
    pub fn new() -> NativeLayer {
        NativeLayer
    }
}

impl Layer for NativeLayer {
    fn kind(&self) -> LayerKind {
        LayerKind::Native
    }

    fn handles(&self, gvk: &GroupVersionKind, operation: &Op) -> Handles {
        if enabled(gvk, operation) {
            let rule = if NativeKind::of(gvk).is_some_and(|k| k.supports(operation)) {
                format!("native {} handler", gvk.kind)
            } else {
                "native whole-status reflection".to_owned()
            };
            Handles::Yes(rule)
        } else {
            Handles::No(format!(
                "no native handler for {operation} on {}",
                gvk_string(gvk)
            ))
        }
    }

    fn interpret(&self, request: Request) -> BoxFuture<'_, Result<Response, crate::Error>> {
        // Native handlers are microseconds of CPU: run them inline rather than on a blocking thread.
        let operation = request.operation();
        let object = object::describe(request.object());
        let result = interpret(request).map_err(|source| crate::Error::Layer {
            layer: LayerKind::Native.as_str(),
            operation,
            object,
            source: Box::new(source),
        });
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests;
