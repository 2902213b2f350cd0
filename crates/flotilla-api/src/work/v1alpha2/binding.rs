//! ResourceBinding and ClusterResourceBinding (`work.karmada.io/v1alpha2`, the storage version), as Karmada's
//! `pkg/apis/work/v1alpha2` defines them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AggregatedStatusItem, Component, ReplicaRequirements};
use crate::policy::v1alpha1::{ConflictResolution, FailoverBehavior, Placement, PurgeMode};
use crate::serde_util::is_default;

/// The spec shared by ResourceBinding and ClusterResourceBinding: one template, the scheduling inputs copied from
/// its policy, and the scheduling result.
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "work.karmada.io",
    version = "v1alpha2",
    kind = "ResourceBinding",
    plural = "resourcebindings",
    shortname = "rb",
    category = "karmada-io",
    namespaced,
    status = "ResourceBindingStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"SCHEDULED","type":"string","jsonPath":".status.conditions[?(@.type==\"Scheduled\")].status"}"#,
    printcolumn = r#"{"name":"FULLYAPPLIED","type":"string","jsonPath":".status.conditions[?(@.type==\"FullyApplied\")].status"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingSpec {
    /// The resource template this binding propagates.
    pub resource: ObjectReference,
    /// Propagate the template's dependencies too.
    #[serde(default, skip_serializing_if = "is_default")]
    pub propagate_deps: bool,
    /// What one replica needs, as InterpretReplica reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_requirements: Option<ReplicaRequirements>,
    /// The template's replica count, as InterpretReplica reported it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub replicas: i32,
    /// The template's components (multi-template workloads, alpha).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<Component>,
    /// The scheduling result: target clusters and their replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<TargetCluster>,
    /// The placement copied from the policy; absent for dependency-attached bindings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Clusters being left, whose copies are removed later.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graceful_eviction_tasks: Vec<GracefulEvictionTask>,
    /// The bindings that depend on this one (dependencies distributor).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_by: Vec<BindingSnapshot>,
    /// The scheduler responsible for this binding.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheduler_name: String,
    /// Failover behaviour copied from the policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverBehavior>,
    /// What to do when a member already holds an unmanaged object.
    #[serde(default)]
    pub conflict_resolution: ConflictResolution,
    /// Forces a fresh reschedule when later than `status.lastScheduledTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_triggered_at: Option<Time>,
    /// Suspends scheduling or dispatching.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<Suspension>,
    /// Keep member objects when the binding is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
    /// Scheduling priority of the binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_priority: Option<SchedulePriority>,
    /// Workload affinity groups this binding belongs to (alpha).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_affinity_groups: Option<WorkloadAffinityGroups>,
}

crate::resource::cluster_twin! {
    /// A cluster-scoped ResourceBinding: binds a cluster-scoped template.
    root = ClusterResourceBinding,
    namespaced = ResourceBinding,
    group = "work.karmada.io",
    spec = ResourceBindingSpec,
    status = ResourceBindingStatus,
    kind = "ClusterResourceBinding",
    plural = "clusterresourcebindings",
    shortname = "crb",
}

/// Identifies a resource template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// API version of the template.
    pub api_version: String,
    /// Kind of the template.
    pub kind: String,
    /// Namespace of the template; empty for cluster-scoped templates.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the template.
    pub name: String,
    /// UID of the template.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Resource version of the template the binding was built from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
}

/// One target cluster of a scheduling result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetCluster {
    /// Name of the cluster.
    pub name: String,
    /// Replicas assigned to the cluster.
    #[serde(default, skip_serializing_if = "is_default")]
    pub replicas: i32,
    /// Replicas per component assigned to the cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<TargetComponent>,
}

/// Replicas of one component assigned to a cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetComponent {
    /// Name of the component.
    pub name: String,
    /// Replicas of the component.
    pub replicas: i32,
}

/// A cluster being left, and how its copy is removed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GracefulEvictionTask {
    /// The cluster being left.
    pub from_cluster: String,
    /// How the copy is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge_mode: Option<PurgeMode>,
    /// Replicas the cluster had, when it had any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Why the cluster is left (e.g. `TaintUntolerated`), CamelCase, 1..32 characters.
    #[schemars(
        length(min = 1, max = 32),
        regex(pattern = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    )]
    pub reason: String,
    /// Details, at most 1024 characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 1024))]
    pub message: String,
    /// Who created the task (e.g. `TaintManager`).
    pub producer: String,
    /// How long a graceful removal waits at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// Keep the copy until this is set to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppress_deletion: Option<bool>,
    /// State preserved from the copy being left.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub preserved_label_state: BTreeMap<String, String>,
    /// When the graceful eviction controller first saw the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// The binding's clusters before the failover.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters_before_failover: Vec<String>,
}

/// A binding that depends on this one, and its clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingSnapshot {
    /// Namespace of the dependent binding; empty for a ClusterResourceBinding.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the dependent binding.
    pub name: String,
    /// Target clusters of the dependent binding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<TargetCluster>,
}

/// A binding's suspension: the policy's suspension plus suspension of scheduling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suspension {
    /// The part copied from the policy (`dispatching`, `dispatchingOnClusters`).
    #[serde(flatten)]
    pub policy: crate::policy::v1alpha1::Suspension,
    /// `true` stops scheduling the binding (set by third parties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<bool>,
}

/// The scheduling priority of a binding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchedulePriority {
    /// Higher is scheduled first; 0 when absent.
    #[serde(default)]
    pub priority: i32,
}

/// Workload affinity groups, each `<labelKey>=<labelValue>` (alpha).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadAffinityGroups {
    /// The affinity group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub affinity_group: String,
    /// The anti-affinity group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub anti_affinity_group: String,
}

/// The observed state of a binding: scheduling, application and member statuses.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingStatus {
    /// The generation the scheduler last acted on.
    #[serde(default, skip_serializing_if = "is_default")]
    pub scheduler_observed_generation: i64,
    /// The `clusterAffinities` term in use (JSON key spelled `schedulerObservingAffinityName`, as Karmada's).
    #[serde(
        default,
        rename = "schedulerObservingAffinityName",
        skip_serializing_if = "String::is_empty"
    )]
    pub scheduler_observed_affinity_name: String,
    /// When the binding was last scheduled successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scheduled_time: Option<Time>,
    /// `Scheduled` and `FullyApplied` conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Per-cluster status of the propagated object, sorted by cluster name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregated_status: Vec<AggregatedStatusItem>,
}
