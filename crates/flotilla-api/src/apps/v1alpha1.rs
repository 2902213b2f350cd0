//! `apps.karmada.io/v1alpha1`: WorkloadRebalancer, a one-off request to schedule the bindings of some workloads
//! afresh. The workload rebalancer controller sets each binding's `spec.rescheduleTriggeredAt` to the
//! rebalancer's `creationTimestamp`, and the scheduler then schedules the binding as if for the first time.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which workloads to reschedule, and how long the rebalancer outlives its work.
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "apps.karmada.io",
    version = "v1alpha1",
    kind = "WorkloadRebalancer",
    plural = "workloadrebalancers",
    status = "WorkloadRebalancerStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRebalancerSpec {
    /// The workloads (resource templates) whose bindings are scheduled afresh; at least one.
    #[schemars(length(min = 1))]
    pub workloads: Vec<ObjectReference>,
    /// Seconds after `status.finishTime` at which the rebalancer is deleted; kept for good when absent,
    /// deleted as soon as it finishes when 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// A workload (resource template) a rebalancer names.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// The template's API version, e.g. `apps/v1`.
    pub api_version: String,
    /// The template's kind.
    pub kind: String,
    /// The template's name.
    pub name: String,
    /// The template's namespace; empty for a cluster-scoped template (its binding is a ClusterResourceBinding).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// What the controller did with each workload, and when it was done with all of them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRebalancerStatus {
    /// One entry per workload of the spec (and per workload once rescheduled, even after it left the spec),
    /// sorted by `apiVersion kind namespace name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_workloads: Vec<ObservedWorkload>,
    /// The `metadata.generation` the entries were last brought in line with.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_default")]
    pub observed_generation: i64,
    /// When every workload last had a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_time: Option<Time>,
}

/// One workload's outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservedWorkload {
    /// The workload.
    pub workload: ObjectReference,
    /// `Successful` or `Failed`; empty while the workload is still to be done.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub result: String,
    /// Why it failed, machine-readable: `ReferencedBindingNotFound`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// `ObservedWorkload.result`: the binding was asked to reschedule.
pub const REBALANCE_SUCCESSFUL: &str = "Successful";
/// `ObservedWorkload.result`: the workload cannot be rescheduled (see `reason`).
pub const REBALANCE_FAILED: &str = "Failed";
/// `ObservedWorkload.reason`: the workload has no binding.
pub const REBALANCE_OBJECT_NOT_FOUND: &str = "ReferencedBindingNotFound";
