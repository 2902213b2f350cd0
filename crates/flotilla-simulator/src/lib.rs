//! The member workload simulator: stands in for kube-controller-manager's workload controllers and the kubelet
//! in a member cluster that has neither, so propagated workloads report the status real ones would.
//!
//! It watches every kind whose status Karmada's native interpreter aggregates (Deployments, StatefulSets,
//! ReplicaSets, DaemonSets, Jobs, CronJobs, Pods, PodDisruptionBudgets, Services, Ingresses,
//! PersistentVolumeClaims and PersistentVolumes; not HorizontalPodAutoscalers' status, which needs metrics) and,
//! after a short delay, sets their status the way the real controllers would once every pod is up (see
//! [`simulated_status`]); it also creates what those controllers create (a Deployment's ReplicaSet, a
//! ReplicaSet's Pods, a CronJob's Jobs) and scales what HorizontalPodAutoscalers target as a metrics-less
//! autoscaler does (within their replica bounds). Custom resources are left alone, as in a cluster without their
//! operator.
//!
//! It stands in for kube-scheduler and the Nodes' kubelets too: it binds pods to Nodes through `pods/binding`
//! (`scheduler`), reports a bound pod running with its Node's address, and serves the simulated containers' logs
//! and exec over HTTPS as every Node's kubelet (`kubelet`, with [`SimulatorConfig::kubelet`]; the commands a
//! simulated container answers are listed there and in docs/COMPATIBILITY.md).
//!
//! Guarantees:
//! * it is an ordinary API client: it reads through list and watch and writes with `PUT .../status` carrying the
//!   object's resourceVersion, so every other client sees a MODIFIED event with a new resourceVersion, a
//!   concurrent writer wins (the simulator re-reads and tries again), and `metadata.generation` never moves;
//! * what it creates carries a controller owner reference to its owner and a name derived from it (a
//!   Deployment's ReplicaSet `<name>-<template hash>`, its Pods `<replicaset>-<5 characters>` per slot, a
//!   CronJob's Job `<name>-<minute>`), so a repeated or concurrent sync makes nothing twice; the only spec it
//!   writes is `spec.replicas` of a Deployment's ReplicaSets, as the Deployment controller does;
//! * a settled object is never rewritten: computing its status again gives the same value (timestamps of
//!   unchanged conditions and start times are kept);
//! * objects being deleted, finished Jobs and finished Pods are not touched;
//! * a pod is bound once, by one `pods/binding` the API server checks (a pod bound meanwhile is left to its
//!   binder), and a Node's only field it writes is its kubelet's endpoint (`status.addresses`' `InternalIP`,
//!   `status.daemonEndpoints`); the kubelet runs nothing on the machine.
//!
//! It runs against any API server (it needs only a kube [`Client`]): `flotilla up` starts one per member, and
//! `flotilla simulate` runs one alone against any cluster. Real members need none: their own controllers, scheduler
//! and nodes report real status, and where the two differ the real one is right (docs/COMPATIBILITY.md).

mod autoscaler;
mod children;
mod common;
mod cron_job;
mod disruption;
mod images;
mod job;
mod kubelet;
pub mod metrics;
mod network;
mod owned;
mod pod;
mod runner;
mod scheduler;
mod storage;
mod workloads;

#[cfg(test)]
mod tests;

use std::time::Duration;

use kube::Client;
use kube::core::ApiResource;
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use kubelet::ServeError;
pub use workloads::{NodeView, Taint};

/// Field manager of the simulator's status writes.
pub const FIELD_MANAGER: &str = "flotilla-simulator";

/// The delay [`SimulatorConfig::default`] waits before reporting a change.
pub const DEFAULT_DELAY: Duration = Duration::from_millis(200);

/// A kind whose status the simulator sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `apps/v1 Deployment`.
    Deployment,
    /// `apps/v1 StatefulSet`.
    StatefulSet,
    /// `apps/v1 ReplicaSet`.
    ReplicaSet,
    /// `apps/v1 DaemonSet`.
    DaemonSet,
    /// `batch/v1 Job`.
    Job,
    /// `batch/v1 CronJob`.
    CronJob,
    /// `v1 Pod`.
    Pod,
    /// `policy/v1 PodDisruptionBudget`.
    PodDisruptionBudget,
    /// `v1 Service`.
    Service,
    /// `networking.k8s.io/v1 Ingress`.
    Ingress,
    /// `v1 PersistentVolumeClaim`.
    PersistentVolumeClaim,
    /// `v1 PersistentVolume`.
    PersistentVolume,
}

impl Kind {
    /// Every simulated kind.
    pub const ALL: [Kind; 12] = [
        Kind::Deployment,
        Kind::StatefulSet,
        Kind::ReplicaSet,
        Kind::DaemonSet,
        Kind::Job,
        Kind::CronJob,
        Kind::Pod,
        Kind::PodDisruptionBudget,
        Kind::Service,
        Kind::Ingress,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
    ];

    /// Whether the kind's status depends on the member's Nodes (re-read when a Node changes): DaemonSets are placed
    /// on them, and Pods bound to them (their `hostIP` is their Node's).
    pub fn needs_nodes(self) -> bool {
        matches!(self, Kind::DaemonSet | Kind::Pod)
    }

    /// Whether the kind's status depends on the member's Jobs (re-read when a Job changes).
    pub fn needs_jobs(self) -> bool {
        self == Kind::CronJob
    }

    /// Whether the kind's status depends on the member's Pods (re-read when a Pod changes).
    pub fn needs_pods(self) -> bool {
        matches!(
            self,
            Kind::PodDisruptionBudget | Kind::PersistentVolumeClaim
        )
    }

    /// The API resource of the kind.
    pub fn api_resource(self) -> ApiResource {
        use k8s_openapi::api::{
            apps::v1 as apps, batch::v1 as batch, core::v1 as core, networking::v1 as networking,
            policy::v1 as policy,
        };
        match self {
            Kind::Deployment => ApiResource::erase::<apps::Deployment>(&()),
            Kind::StatefulSet => ApiResource::erase::<apps::StatefulSet>(&()),
            Kind::ReplicaSet => ApiResource::erase::<apps::ReplicaSet>(&()),
            Kind::DaemonSet => ApiResource::erase::<apps::DaemonSet>(&()),
            Kind::Job => ApiResource::erase::<batch::Job>(&()),
            Kind::CronJob => ApiResource::erase::<batch::CronJob>(&()),
            Kind::Pod => ApiResource::erase::<core::Pod>(&()),
            Kind::PodDisruptionBudget => ApiResource::erase::<policy::PodDisruptionBudget>(&()),
            Kind::Service => ApiResource::erase::<core::Service>(&()),
            Kind::Ingress => ApiResource::erase::<networking::Ingress>(&()),
            Kind::PersistentVolumeClaim => ApiResource::erase::<core::PersistentVolumeClaim>(&()),
            Kind::PersistentVolume => ApiResource::erase::<core::PersistentVolume>(&()),
        }
    }
}

/// What of the member, besides the object itself, some kinds' status depends on.
#[derive(Clone, Debug, Default)]
pub struct MemberView {
    /// The member's Nodes (DaemonSets and Pods are placed on them).
    pub nodes: Vec<NodeView>,
    /// The member's Pods, as JSON (PodDisruptionBudgets count them, claims are used by them).
    pub pods: Vec<Value>,
    /// The member's Jobs, as JSON (CronJobs list those they run).
    pub jobs: Vec<Value>,
}

/// The status the real controllers would report for `object` (of `kind`) once its pods are up; `member` holds
/// what of the member the kind depends on ([`Kind::needs_nodes`], [`Kind::needs_pods`], [`Kind::needs_jobs`]),
/// `now` the RFC 3339
/// time for new timestamps.
///
/// Pure: for a settled object it returns the object's current status unchanged.
pub fn simulated_status(kind: Kind, object: &Value, member: &MemberView, now: &str) -> Value {
    match kind {
        Kind::Deployment => workloads::deployment(object, now),
        Kind::StatefulSet => workloads::stateful_set(object),
        Kind::ReplicaSet => workloads::replica_set(object),
        Kind::DaemonSet => workloads::daemon_set(object, &member.nodes),
        Kind::Job => job::job(object, now),
        Kind::CronJob => cron_job::cron_job(object, &member.jobs),
        Kind::Pod => pod::pod(object, &member.nodes, now),
        Kind::PodDisruptionBudget => disruption::pod_disruption_budget(object, &member.pods, now),
        Kind::Service => network::service(object),
        Kind::Ingress => network::ingress(object),
        Kind::PersistentVolumeClaim => storage::persistent_volume_claim(object, &member.pods, now),
        Kind::PersistentVolume => storage::persistent_volume(object, now),
    }
}

/// The status to write for `object`, or `None` when the simulator leaves it as it is (already settled, or being
/// deleted).
pub fn pending_status(kind: Kind, object: &Value, member: &MemberView, now: &str) -> Option<Value> {
    if object.pointer("/metadata/deletionTimestamp").is_some() {
        return None;
    }
    let desired = simulated_status(kind, object, member, now);
    let current = object.get("status").cloned().unwrap_or_default();
    let unchanged = desired == current
        || (current.is_null() && desired.as_object().is_some_and(serde_json::Map::is_empty));
    (!unchanged).then_some(desired)
}

/// How the simulator behaves.
#[derive(Clone, Debug)]
pub struct SimulatorConfig {
    /// How long after a change it reports the new status (the time pods would take to start).
    pub delay: Duration,
    /// Name used in logs (the member cluster's name).
    pub cluster: String,
    /// Create what the real controllers create (a Deployment's ReplicaSet, a ReplicaSet's Pods, a CronJob's
    /// Jobs). Off, only statuses are written: `flotilla bench` measures propagation, and these member-side
    /// objects would otherwise triple the member writes it pays for on the same CPU.
    pub children: bool,
    /// Serve the simulated kubelet (`kubelet`: simulated containers' logs and exec over HTTPS on 127.0.0.1) and
    /// point every Node's kubelet endpoint (`InternalIP` 127.0.0.1, `daemonEndpoints.kubeletEndpoint.Port`) at it.
    pub kubelet: bool,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        SimulatorConfig {
            delay: DEFAULT_DELAY,
            cluster: String::new(),
            children: true,
            kubelet: true,
        }
    }
}

/// Why a status could not be written (logged and retried; the simulator never stops on errors).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The status update was refused or failed.
    #[error("failed to update the status of {kind:?} {object}")]
    UpdateStatus {
        /// Kind of the object.
        kind: Kind,
        /// `namespace/name` of the object.
        object: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// An object the owner's controller keeps (a Deployment's ReplicaSet, a ReplicaSet's Pod) could not be
    /// listed, created, updated or deleted.
    #[error("failed to sync what {kind:?} {object} owns")]
    Children {
        /// Kind of the owner.
        kind: Kind,
        /// `namespace/name` of the owner.
        object: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// A pod could not be bound to the Node the simulated scheduler chose.
    #[error("failed to bind Pod {object}")]
    Bind {
        /// `namespace/name` of the pod.
        object: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The simulated kubelet could not start serving.
    #[error("failed to serve the simulated kubelet")]
    Kubelet(#[source] kubelet::ServeError),
    /// The object could not be encoded.
    #[error("failed to encode {kind:?} {object}")]
    Encode {
        /// Kind of the object.
        kind: Kind,
        /// `namespace/name` of the object.
        object: String,
        /// The encoding error.
        #[source]
        source: serde_json::Error,
    },
}

/// A running simulator: one watch-driven loop per kind, the Node, Pod and Job watches, and the simulated kubelet.
pub struct Simulator {
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    kubelet_port: Option<u16>,
}

impl Simulator {
    /// Starts simulating every [`Kind`] on the cluster `client` reaches. Must run inside a Tokio runtime (the
    /// kubelet's listener is bound at once).
    pub fn start(client: Client, config: SimulatorConfig) -> Simulator {
        let cancel = CancellationToken::new();
        let (tasks, kubelet_port) = runner::spawn(client, config, cancel.clone());
        Simulator {
            cancel,
            tasks,
            kubelet_port,
        }
    }

    /// The port the simulated kubelet serves on 127.0.0.1, when it runs.
    pub fn kubelet_port(&self) -> Option<u16> {
        self.kubelet_port
    }

    /// Stops every loop and waits for in-flight writes to finish.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// An error and its causes on one line, for logs.
fn display_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}
