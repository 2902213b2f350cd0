//! The native kinds (Karmada's built-in handlers) as one table: each kind's exact group, version
//! and kind, and for each operation the handler that answers it. Which operations a kind supports is read
//! from its entry, so adding a native kind is one entry here plus its handlers.
//!
//! InterpretStatus is answered for every kind, in the table or not: `status` names a kind's own reflection,
//! and kinds without one reflect their whole `.status`.

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation as Op};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ReplicaRequirements};
use kube::core::GroupVersionKind;
use serde_json::{Map, Value};

use super::{
    NativeError, aggregate, dependencies, health, job_status, load_balancer, reflect, replica,
    retain,
};

/// InterpretReplica: the replica count and the requirements of one replica.
pub(crate) type ReplicasFn = fn(&Value) -> Result<(i32, Option<ReplicaRequirements>), NativeError>;
/// ReviseReplica: the object with its replica field set.
pub(crate) type ReviseFn = fn(Value, i64) -> Result<Value, NativeError>;
/// Retain: the desired object with the member-owned fields of the observed one.
pub(crate) type RetainFn = fn(Value, &Value) -> Result<Value, NativeError>;
/// AggregateStatus: the template with the member statuses folded into its status.
pub(crate) type AggregateFn = fn(Value, &[AggregatedStatusItem]) -> Result<Value, NativeError>;
/// What a kind's own status reflection returns: the status to reflect, `None` for none.
pub(crate) type Reflected = Result<Option<Map<String, Value>>, NativeError>;
/// InterpretStatus: the part of an object's (present, map-typed) status to reflect.
pub(crate) type StatusFn = fn(&Value, &Map<String, Value>) -> Reflected;
/// InterpretHealth: whether the object is healthy.
pub(crate) type HealthFn = fn(&Value) -> Result<bool, NativeError>;
/// InterpretDependency: the objects the object depends on.
pub(crate) type DependenciesFn = fn(&Value) -> Result<Vec<DependentObjectReference>, NativeError>;

/// A kind the native layer has handlers for, with one handler (or none) per operation.
#[derive(Debug)]
pub struct NativeKind {
    /// API group (`""` for the core group).
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    pub(crate) replicas: Option<ReplicasFn>,
    pub(crate) revise: Option<ReviseFn>,
    pub(crate) retain: Option<RetainFn>,
    pub(crate) aggregate: Option<AggregateFn>,
    pub(crate) status: Option<StatusFn>,
    pub(crate) health: Option<HealthFn>,
    pub(crate) dependencies: Option<DependenciesFn>,
}

/// An entry with no handlers, to fill in with struct update syntax.
const NONE: NativeKind = NativeKind {
    group: "",
    version: "",
    kind: "",
    replicas: None,
    revise: None,
    retain: None,
    aggregate: None,
    status: None,
    health: None,
    dependencies: None,
};

/// Every native kind.
pub static KINDS: &[NativeKind] = &[
    NativeKind {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        replicas: Some(replica::workload),
        revise: Some(replica::revise_workload),
        retain: Some(retain::deployment),
        aggregate: Some(aggregate::deployment),
        status: Some(reflect::deployment),
        health: Some(health::workload),
        dependencies: Some(dependencies::workload),
    },
    NativeKind {
        group: "apps",
        version: "v1",
        kind: "ReplicaSet",
        replicas: Some(replica::workload),
        revise: Some(replica::revise_workload),
        aggregate: Some(aggregate::replica_set),
        status: Some(reflect::replica_set),
        health: Some(health::replica_set),
        dependencies: Some(dependencies::workload),
        ..NONE
    },
    NativeKind {
        group: "apps",
        version: "v1",
        kind: "StatefulSet",
        replicas: Some(replica::workload),
        revise: Some(replica::revise_workload),
        aggregate: Some(aggregate::stateful_set),
        status: Some(reflect::stateful_set),
        health: Some(health::workload),
        dependencies: Some(dependencies::stateful_set),
        ..NONE
    },
    NativeKind {
        group: "apps",
        version: "v1",
        kind: "DaemonSet",
        aggregate: Some(aggregate::daemon_set),
        status: Some(reflect::daemon_set),
        health: Some(health::daemon_set),
        dependencies: Some(dependencies::workload),
        ..NONE
    },
    NativeKind {
        group: "batch",
        version: "v1",
        kind: "Job",
        replicas: Some(replica::job),
        revise: Some(replica::revise_job),
        retain: Some(retain::job),
        aggregate: Some(job_status::aggregate),
        status: Some(reflect::job),
        dependencies: Some(dependencies::workload),
        ..NONE
    },
    NativeKind {
        group: "batch",
        version: "v1",
        kind: "CronJob",
        aggregate: Some(aggregate::cron_job),
        dependencies: Some(dependencies::cron_job),
        ..NONE
    },
    NativeKind {
        group: "",
        version: "v1",
        kind: "Pod",
        replicas: Some(replica::pod),
        retain: Some(retain::pod),
        aggregate: Some(aggregate::pod),
        health: Some(health::pod),
        dependencies: Some(dependencies::pod),
        ..NONE
    },
    NativeKind {
        group: "",
        version: "v1",
        kind: "Service",
        retain: Some(retain::service),
        aggregate: Some(load_balancer::aggregate_service),
        status: Some(reflect::service),
        health: Some(health::service),
        ..NONE
    },
    NativeKind {
        group: "",
        version: "v1",
        kind: "ServiceAccount",
        retain: Some(retain::service_account),
        ..NONE
    },
    NativeKind {
        group: "",
        version: "v1",
        kind: "Secret",
        retain: Some(retain::secret),
        ..NONE
    },
    NativeKind {
        group: "",
        version: "v1",
        kind: "PersistentVolumeClaim",
        retain: Some(retain::persistent_volume_claim),
        aggregate: Some(aggregate::persistent_volume_claim),
        health: Some(health::persistent_volume_claim),
        ..NONE
    },
    NativeKind {
        group: "",
        version: "v1",
        kind: "PersistentVolume",
        retain: Some(retain::persistent_volume),
        aggregate: Some(aggregate::persistent_volume),
        ..NONE
    },
    NativeKind {
        group: "networking.k8s.io",
        version: "v1",
        kind: "Ingress",
        aggregate: Some(load_balancer::aggregate_ingress),
        health: Some(health::ingress),
        dependencies: Some(dependencies::ingress),
        ..NONE
    },
    NativeKind {
        group: "policy",
        version: "v1",
        kind: "PodDisruptionBudget",
        aggregate: Some(aggregate::pod_disruption_budget),
        status: Some(reflect::pod_disruption_budget),
        health: Some(health::pod_disruption_budget),
        ..NONE
    },
    NativeKind {
        group: "autoscaling",
        version: "v2",
        kind: "HorizontalPodAutoscaler",
        aggregate: Some(aggregate::horizontal_pod_autoscaler),
        status: Some(reflect::horizontal_pod_autoscaler),
        ..NONE
    },
    NativeKind {
        group: "multicluster.x-k8s.io",
        version: "v1alpha1",
        kind: "ServiceImport",
        dependencies: Some(dependencies::service_import),
        ..NONE
    },
];

impl NativeKind {
    /// The native kind of an exact group, version and kind.
    pub fn of(gvk: &GroupVersionKind) -> Option<&'static NativeKind> {
        KINDS
            .iter()
            .find(|k| k.kind == gvk.kind && k.group == gvk.group && k.version == gvk.version)
    }

    /// Whether this kind has a specific handler for `op` (its entry names one; the generic status
    /// reflection answers InterpretStatus for every kind).
    pub fn supports(&self, op: &Op) -> bool {
        match op {
            Op::InterpretReplica => self.replicas.is_some(),
            Op::ReviseReplica => self.revise.is_some(),
            Op::Retain => self.retain.is_some(),
            Op::AggregateStatus => self.aggregate.is_some(),
            Op::InterpretStatus => true,
            Op::InterpretHealth => self.health.is_some(),
            Op::InterpretDependency => self.dependencies.is_some(),
            Op::InterpretComponent | Op::Prune | Op::All | Op::Other(_) => false,
        }
    }
}
