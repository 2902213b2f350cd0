//! The native interpreter: Karmada's built-in handlers for Kubernetes kinds (interpreter spec §3), the last
//! layer of every dispatch.
//!
//! Handlers are keyed by exact group, version and kind (§3.1). InterpretStatus is handled for every kind:
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

use crate::layer::{Handles, Layer, LayerKind, Request, Response, gvk_of};

/// A kind the native layer has handlers for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeKind {
    /// `apps/v1 Deployment`.
    Deployment,
    /// `apps/v1 ReplicaSet`.
    ReplicaSet,
    /// `apps/v1 StatefulSet`.
    StatefulSet,
    /// `apps/v1 DaemonSet`.
    DaemonSet,
    /// `batch/v1 Job`.
    Job,
    /// `batch/v1 CronJob`.
    CronJob,
    /// `v1 Pod`.
    Pod,
    /// `v1 Service`.
    Service,
    /// `v1 ServiceAccount`.
    ServiceAccount,
    /// `v1 Secret`.
    Secret,
    /// `v1 PersistentVolumeClaim`.
    PersistentVolumeClaim,
    /// `v1 PersistentVolume`.
    PersistentVolume,
    /// `networking.k8s.io/v1 Ingress`.
    Ingress,
    /// `policy/v1 PodDisruptionBudget`.
    PodDisruptionBudget,
    /// `autoscaling/v2 HorizontalPodAutoscaler`.
    HorizontalPodAutoscaler,
    /// `multicluster.x-k8s.io/v1alpha1 ServiceImport`.
    ServiceImport,
}

impl NativeKind {
    /// The native kind of an exact group, version and kind.
    pub fn of(gvk: &GroupVersionKind) -> Option<NativeKind> {
        use NativeKind as K;
        Some(
            match (gvk.group.as_str(), gvk.version.as_str(), gvk.kind.as_str()) {
                ("apps", "v1", "Deployment") => K::Deployment,
                ("apps", "v1", "ReplicaSet") => K::ReplicaSet,
                ("apps", "v1", "StatefulSet") => K::StatefulSet,
                ("apps", "v1", "DaemonSet") => K::DaemonSet,
                ("batch", "v1", "Job") => K::Job,
                ("batch", "v1", "CronJob") => K::CronJob,
                ("", "v1", "Pod") => K::Pod,
                ("", "v1", "Service") => K::Service,
                ("", "v1", "ServiceAccount") => K::ServiceAccount,
                ("", "v1", "Secret") => K::Secret,
                ("", "v1", "PersistentVolumeClaim") => K::PersistentVolumeClaim,
                ("", "v1", "PersistentVolume") => K::PersistentVolume,
                ("networking.k8s.io", "v1", "Ingress") => K::Ingress,
                ("policy", "v1", "PodDisruptionBudget") => K::PodDisruptionBudget,
                ("autoscaling", "v2", "HorizontalPodAutoscaler") => K::HorizontalPodAutoscaler,
                ("multicluster.x-k8s.io", "v1alpha1", "ServiceImport") => K::ServiceImport,
                _ => return None,
            },
        )
    }

    /// Whether this kind has a specific handler for `op` (the coverage matrix of spec §3.1, less the generic
    /// status reflection).
    pub fn supports(self, op: Op) -> bool {
        use NativeKind as K;
        match op {
            Op::InterpretReplica => matches!(
                self,
                K::Deployment | K::ReplicaSet | K::StatefulSet | K::Job | K::Pod
            ),
            Op::ReviseReplica => matches!(
                self,
                K::Deployment | K::ReplicaSet | K::StatefulSet | K::Job
            ),
            Op::Retain => matches!(
                self,
                K::Deployment
                    | K::Job
                    | K::Pod
                    | K::Service
                    | K::ServiceAccount
                    | K::Secret
                    | K::PersistentVolumeClaim
                    | K::PersistentVolume
            ),
            Op::AggregateStatus => {
                !matches!(self, K::ServiceAccount | K::Secret | K::ServiceImport)
            }
            Op::InterpretStatus => true,
            Op::InterpretHealth => matches!(
                self,
                K::Deployment
                    | K::ReplicaSet
                    | K::StatefulSet
                    | K::DaemonSet
                    | K::Pod
                    | K::Service
                    | K::PersistentVolumeClaim
                    | K::Ingress
                    | K::PodDisruptionBudget
            ),
            Op::InterpretDependency => matches!(
                self,
                K::Deployment
                    | K::ReplicaSet
                    | K::StatefulSet
                    | K::DaemonSet
                    | K::Job
                    | K::CronJob
                    | K::Pod
                    | K::Ingress
                    | K::ServiceImport
            ),
            Op::InterpretComponent | Op::Prune | Op::All => false,
        }
    }
}

/// Go's spelling of a group, version and kind (`apps/v1, Kind=Deployment`, `/v1, Kind=Pod`), used in
/// Karmada-compatible messages.
pub fn gvk_string(gvk: &GroupVersionKind) -> String {
    format!("{}/{}, Kind={}", gvk.group, gvk.version, gvk.kind)
}

/// Whether the native layer answers `op` for `gvk` (its part of `HookEnabled`, spec §2.3): InterpretStatus
/// for every kind, the other operations for the kinds of the coverage matrix.
pub fn enabled(gvk: &GroupVersionKind, op: Op) -> bool {
    op == Op::InterpretStatus || NativeKind::of(gvk).is_some_and(|k| k.supports(op))
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
    let kind = NativeKind::of(&gvk).filter(|k| k.supports(operation));
    if operation == Op::InterpretStatus {
        let Request::InterpretStatus { object } = &request else {
            return Err(not_found(operation, &gvk));
        };
        return reflect::reflect_status(NativeKind::of(&gvk), object).map(Response::Status);
    }
    let Some(kind) = kind else {
        return Err(not_found(operation, &gvk));
    };
    match request {
        Request::InterpretReplica { object } => {
            replica::get_replicas(kind, &object).map(|(replicas, requirements)| {
                Response::Replicas {
                    replicas,
                    requirements,
                }
            })
        }
        Request::ReviseReplica { object, replicas } => {
            replica::revise_replica(kind, object, replicas).map(Response::Object)
        }
        Request::Retain { desired, observed } => {
            retain::retain(kind, desired, &observed).map(Response::Object)
        }
        Request::AggregateStatus { object, items } => {
            aggregate::aggregate_status(kind, object, &items).map(Response::Object)
        }
        Request::InterpretHealth { object } => {
            health::interpret_health(kind, &object).map(Response::Healthy)
        }
        Request::InterpretDependency { object } => {
            dependencies::get_dependencies(kind, &object).map(Response::Dependencies)
        }
        Request::InterpretComponent { .. } | Request::InterpretStatus { .. } => {
            Err(not_found(operation, &gvk))
        }
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

    fn handles(&self, gvk: &GroupVersionKind, operation: Op) -> Handles {
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
