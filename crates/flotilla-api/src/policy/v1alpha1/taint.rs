//! ClusterTaintPolicy: taints a controller adds to and removes from Clusters as their conditions change (with the
//! `Failover` gate). The cluster controller itself only adds NoSchedule taints, so the NoExecute taints the taint
//! manager evicts by come from these policies (or from users).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ClusterAffinity;

/// Which taints to put on, and take off, the Clusters a policy targets as their status conditions change.
///
/// Taints are never removed because a policy is deleted; `addOnConditions` are evaluated before
/// `removeOnConditions`.
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "ClusterTaintPolicy",
    plural = "clustertaintpolicies",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterTaintPolicySpec {
    /// The clusters the policy watches; every cluster when absent. Clusters that stop matching keep their taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_clusters: Option<ClusterAffinity>,
    /// Conditions (ANDed) under which `taints` are added; none are added when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_on_conditions: Vec<MatchCondition>,
    /// Conditions (ANDed) under which `taints` are removed; none are removed when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_on_conditions: Vec<MatchCondition>,
    /// The taints to add or remove (matched by key and effect).
    #[schemars(length(min = 1))]
    pub taints: Vec<PolicyTaint>,
}

/// A test on one condition of a Cluster's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchCondition {
    /// The condition type, e.g. `Ready`.
    pub condition_type: String,
    /// `In` or `NotIn`.
    pub operator: String,
    /// Condition statuses (`True`, `False`, `Unknown`).
    pub status_values: Vec<String>,
}

/// `MatchCondition.operator`: the status is one of the values.
pub const MATCH_CONDITION_OP_IN: &str = "In";
/// `MatchCondition.operator`: the status is none of the values.
pub const MATCH_CONDITION_OP_NOT_IN: &str = "NotIn";

/// A taint a ClusterTaintPolicy manages (Go: `policy/v1alpha1.Taint`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyTaint {
    /// The taint key.
    pub key: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
    /// The taint value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}
