//! PropagationPolicy and ClusterPropagationPolicy: which templates go to which clusters, with the fields, enums
//! and CRD defaults of Karmada's `pkg/apis/policy/v1alpha1`.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

use crate::serde_util::is_default;

/// The scheduler a policy names when it names none (CRD default of `schedulerName`).
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

fn default_scheduler_name() -> String {
    DEFAULT_SCHEDULER_NAME.to_owned()
}

/// The spec shared by PropagationPolicy and ClusterPropagationPolicy (`PropagationSpec`).
///
/// Fields with a CRD default (`priority`, `preemption`, `schedulerName`, `conflictResolution`) take the same
/// default here when absent, so a parsed object looks like one read back from an API server.
#[derive(kube::CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "PropagationPolicy",
    plural = "propagationpolicies",
    shortname = "pp",
    category = "karmada-io",
    namespaced,
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"CONFLICT-RESOLUTION","type":"string","jsonPath":".spec.conflictResolution"}"#,
    printcolumn = r#"{"name":"PRIORITY","type":"string","jsonPath":".spec.priority"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct PropagationSpec {
    /// Which resource templates the policy claims; at least one (an empty list does not mean "all").
    #[schemars(length(min = 1))]
    pub resource_selectors: Vec<ResourceSelector>,
    /// Deprecated alias of `propagateDeps`; ignored.
    #[serde(default, skip_serializing_if = "is_default")]
    pub association: bool,
    /// Propagate the objects a workload depends on along with it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub propagate_deps: bool,
    /// Cluster selection and replica scheduling.
    #[serde(default, skip_serializing_if = "is_default")]
    pub placement: Placement,
    /// Explicit priority among policies matching the same template; higher wins.
    #[serde(default)]
    pub priority: i32,
    /// Whether this policy may take templates from lower-priority policies.
    #[serde(default)]
    pub preemption: PreemptionBehavior,
    /// OverridePolicies (or ClusterOverridePolicies) that must exist before this policy is applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependent_overrides: Vec<String>,
    /// Scheduler responsible for the bindings this policy derives; immutable.
    #[serde(default = "default_scheduler_name")]
    pub scheduler_name: String,
    /// Failover behaviour, copied to bindings; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverBehavior>,
    /// What to do when a member already has an object Karmada does not manage.
    #[serde(default)]
    pub conflict_resolution: ConflictResolution,
    /// How policy changes reach templates already propagated; immediate when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_preference: Option<ActivationPreference>,
    /// Suspends dispatching to all or some clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<Suspension>,
    /// Keep member objects when the template is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
    /// Where the scheduling priority of derived bindings comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_priority: Option<SchedulePriority>,
}

impl Default for PropagationSpec {
    fn default() -> Self {
        Self {
            resource_selectors: Vec::new(),
            association: false,
            propagate_deps: false,
            placement: Placement::default(),
            priority: 0,
            preemption: PreemptionBehavior::default(),
            dependent_overrides: Vec::new(),
            scheduler_name: default_scheduler_name(),
            failover: None,
            conflict_resolution: ConflictResolution::default(),
            activation_preference: None,
            suspension: None,
            preserve_resources_on_deletion: None,
            schedule_priority: None,
        }
    }
}

crate::resource::cluster_twin! {
    /// A cluster-scoped PropagationPolicy: the same spec, able to select templates in every namespace and
    /// cluster-scoped templates.
    root = ClusterPropagationPolicy,
    namespaced = PropagationPolicy,
    group = "policy.karmada.io",
    spec = PropagationSpec,
    kind = "ClusterPropagationPolicy",
    plural = "clusterpropagationpolicies",
    shortname = "cpp",
}

/// Selects resource templates by apiVersion and kind, then by namespace, name or labels.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSelector {
    /// API version of the templates, compared by exact string equality.
    pub api_version: String,
    /// Kind of the templates.
    pub kind: String,
    /// Namespace of the templates; empty means the policy's namespace (PP) or any namespace (CPP).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the template; when set, `labelSelector` is ignored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Labels of the templates; used only when `name` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
}

/// Selects clusters by fields (`provider`, `region`, `zone`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldSelector {
    /// Requirements on cluster fields, ANDed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
}

/// Suspends dispatching of a policy's templates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suspension {
    /// `true` suspends dispatching to every cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatching: Option<bool>,
    /// Suspends dispatching to the named clusters only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatching_on_clusters: Option<SuspendClusters>,
}

/// Clusters whose dispatching is suspended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuspendClusters {
    /// Names of the clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_names: Vec<String>,
}

open_enum! {
    /// How the copy in the cluster being left is removed during failover.
    #[derive(Default)]
    pub enum PurgeMode {
        /// Remove at once, then create in the new cluster.
        Directly = "Directly",
        /// Remove once the new copy is healthy or the grace period ends.
        #[default]
        Gracefully = "Gracefully",
        /// Never remove automatically.
        Never = "Never",
    }
}

/// Failover behaviour of applications and clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailoverBehavior {
    /// Failover when the application is unhealthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<ApplicationFailoverBehavior>,
    /// Failover when the cluster fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterFailoverBehavior>,
}

/// Application failover: when to move an unhealthy application and how.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationFailoverBehavior {
    /// When an application counts as failed.
    pub decision_conditions: DecisionConditions,
    /// How the failed copy is removed.
    #[serde(default)]
    pub purge_mode: PurgeMode,
    /// How long a graceful removal waits at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// State carried from the failed copy to the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_preservation: Option<StatePreservation>,
}

/// Cluster failover: how workloads leave a failed cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFailoverBehavior {
    /// How copies in the failed cluster are removed (`Directly` or `Gracefully`).
    #[serde(default)]
    pub purge_mode: PurgeMode,
    /// State carried from the failed copy to the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_preservation: Option<StatePreservation>,
}

fn default_toleration_seconds() -> Option<i32> {
    Some(300)
}

/// When an application counts as failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionConditions {
    /// Seconds an application may stay unhealthy before failover; 300 when absent.
    #[serde(
        default = "default_toleration_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub toleration_seconds: Option<i32>,
}

impl Default for DecisionConditions {
    fn default() -> Self {
        Self {
            toleration_seconds: default_toleration_seconds(),
        }
    }
}

/// Rules extracting state from a failed application.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatePreservation {
    /// One rule per preserved value.
    pub rules: Vec<StatePreservationRule>,
}

/// One preserved value: a JSONPath into the failed object and the label name it is passed on under.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatePreservationRule {
    /// Label key under which the value is passed on.
    pub alias_label_name: String,
    /// JSONPath of the value in the failed object.
    pub json_path: String,
}

/// Cluster selection and replica scheduling of a policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// Clusters to choose from; every cluster when absent (and no `clusterAffinities`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_affinity: Option<ClusterAffinity>,
    /// Ordered fallback groups of clusters; exclusive with `clusterAffinity`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_affinities: Vec<ClusterAffinityTerm>,
    /// Tolerations against cluster taints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_tolerations: Vec<Toleration>,
    /// How selected clusters spread over regions, zones and providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread_constraints: Vec<SpreadConstraint>,
    /// How replicas are scheduled; `Duplicated` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_scheduling: Option<ReplicaSchedulingStrategy>,
    /// Affinity between workloads (alpha).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_affinity: Option<WorkloadAffinity>,
}

open_enum! {
    /// A cluster field a spread constraint groups by.
    #[derive(PartialOrd, Ord)]
    pub enum SpreadFieldValue {
        /// Each cluster is its own group.
        Cluster = "cluster",
        /// Group by `spec.region`.
        Region = "region",
        /// Group by `spec.zones`.
        Zone = "zone",
        /// Group by `spec.provider`.
        Provider = "provider",
    }
}

/// How many groups of clusters (by field or label) the selection spans.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadConstraint {
    /// The cluster field to group by; exclusive with `spreadByLabel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_by_field: Option<SpreadFieldValue>,
    /// The cluster label to group by; exclusive with `spreadByField`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub spread_by_label: String,
    /// At most this many groups; 0 means no limit.
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(transform = crate::schema::go_int)]
    pub max_groups: i64,
    /// At least this many groups.
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(transform = crate::schema::go_int)]
    pub min_groups: i64,
}

/// Selects clusters by labels, fields and names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinity {
    /// Labels of the clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Fields of the clusters (`provider`, `region`, `zone`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<FieldSelector>,
    /// Names of the clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_names: Vec<String>,
    /// Clusters never selected (Go: `ExcludeClusters`).
    #[serde(default, rename = "exclude", skip_serializing_if = "Vec::is_empty")]
    pub exclude_clusters: Vec<String>,
}

/// A named group of clusters in `clusterAffinities`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinityTerm {
    /// Unique name of the group (1..32 characters).
    #[schemars(length(min = 1, max = 32))]
    pub affinity_name: String,
    /// The clusters of the group.
    #[serde(flatten)]
    pub cluster_affinity: ClusterAffinity,
    /// Overflow tiers used when the group cannot hold every replica.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflow_affinities: Vec<OverflowClusterAffinity>,
}

/// An overflow tier of a cluster group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverflowClusterAffinity {
    /// Unique name of the tier (1..32 characters).
    #[schemars(length(min = 1, max = 32))]
    pub affinity_name: String,
    /// The clusters of the tier.
    #[serde(flatten)]
    pub cluster_affinity: ClusterAffinity,
}

/// Affinity and anti-affinity between workloads (alpha).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadAffinity {
    /// Co-locate workloads sharing the label value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<WorkloadAffinityTerm>,
    /// Separate workloads sharing the label value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anti_affinity: Option<WorkloadAntiAffinityTerm>,
}

/// Workloads with the same value of this label are co-located.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadAffinityTerm {
    /// The workload label key.
    pub group_by_label_key: String,
}

/// Workloads with the same value of this label are kept apart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadAntiAffinityTerm {
    /// The workload label key.
    pub group_by_label_key: String,
}

open_enum! {
    /// Whether replicas are copied to every cluster or divided among them.
    #[derive(Default)]
    pub enum ReplicaSchedulingType {
        /// Every selected cluster gets all replicas.
        Duplicated = "Duplicated",
        /// Replicas are divided among the selected clusters (CRD default inside `replicaScheduling`).
        #[default]
        Divided = "Divided",
    }
}

open_enum! {
    /// How divided replicas are split.
    pub enum ReplicaDivisionPreference {
        /// Pack replicas into as few clusters as possible.
        Aggregated = "Aggregated",
        /// Split by weights (static or dynamic).
        Weighted = "Weighted",
    }
}

/// How a policy schedules replicas.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSchedulingStrategy {
    /// Duplicated or Divided; `Divided` when the strategy is present without it.
    #[serde(default)]
    pub replica_scheduling_type: ReplicaSchedulingType,
    /// How Divided replicas are split; the normalizer sets `Weighted` for Divided when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_division_preference: Option<ReplicaDivisionPreference>,
    /// Weights for the `Weighted` preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_preference: Option<ClusterPreferences>,
}

/// Static or dynamic cluster weights.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPreferences {
    /// Fixed weights per cluster group; ignored when `dynamicWeight` is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_weight_list: Vec<StaticClusterWeight>,
    /// Weights computed from a cluster property.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_weight: Option<DynamicWeightFactor>,
}

/// A static weight for the clusters an affinity selects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaticClusterWeight {
    /// The clusters this weight applies to.
    pub target_cluster: ClusterAffinity,
    /// The weight, at least 1.
    #[schemars(range(min = 1))]
    pub weight: i64,
}

open_enum! {
    /// What dynamic weights are computed from.
    pub enum DynamicWeightFactor {
        /// Replicas each cluster can still hold.
        AvailableReplicas = "AvailableReplicas",
    }
}

open_enum! {
    /// Whether a policy may preempt templates claimed by lower-priority policies.
    #[derive(Default)]
    pub enum PreemptionBehavior {
        /// Preempt lower-priority policies.
        Always = "Always",
        /// Never preempt (CRD default).
        #[default]
        Never = "Never",
    }
}

open_enum! {
    /// What to do when a member already holds an object Karmada does not manage.
    #[derive(Default)]
    pub enum ConflictResolution {
        /// Take the object over.
        Overwrite = "Overwrite",
        /// Leave it and report the conflict (CRD default).
        #[default]
        Abort = "Abort",
    }
}

open_enum! {
    /// How policy changes reach templates already propagated.
    pub enum ActivationPreference {
        /// Apply changes only when the template itself changes.
        Lazy = "Lazy",
    }
}

/// Where a binding's scheduling priority comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchedulePriority {
    /// The source of the priority class; only `KubePriorityClass` is accepted.
    pub priority_class_source: PriorityClassSource,
    /// Name of the priority class.
    pub priority_class_name: String,
}

open_enum! {
    /// Kinds of priority classes a policy can name.
    pub enum PriorityClassSource {
        /// A Karmada federated priority class (rejected at runtime).
        FederatedPriorityClass = "FederatedPriorityClass",
        /// A Kubernetes PriorityClass in the control plane.
        KubePriorityClass = "KubePriorityClass",
        /// The priority class of the workload's pod template (rejected at runtime).
        PodPriorityClass = "PodPriorityClass",
    }
}
