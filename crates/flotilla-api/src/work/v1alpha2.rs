//! `work.karmada.io/v1alpha2`: ResourceBinding, ClusterResourceBinding and the types they share with the
//! resource interpreter (replica requirements, components, aggregated status items).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelector, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

mod binding;

pub use binding::*;

/// What one replica of a workload needs from a cluster (`spec.replicaRequirements` of a binding).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaRequirements {
    /// Node constraints every replica carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_claim: Option<NodeClaim>,
    /// Compute resources one replica requests.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::schema::quantities)]
    pub resource_request: BTreeMap<String, Quantity>,
    /// Namespace of the workload.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Priority class of the workload's pods.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub priority_class_name: String,
}

/// Node constraints of a replica: hard node affinity, node selector and tolerations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaim {
    /// The pod template's required node affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_node_affinity: Option<NodeSelector>,
    /// The pod template's node selector.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// The pod template's tolerations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

/// One pod template of a multi-template workload (InterpretComponent).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    /// Unique name of the component within the workload (at most 32 characters).
    #[schemars(length(max = 32))]
    pub name: String,
    /// Replicas of this component.
    pub replicas: i32,
    /// What one replica of this component needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_requirements: Option<ComponentReplicaRequirements>,
}

/// Replica requirements of one component (no namespace, unlike [`ReplicaRequirements`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentReplicaRequirements {
    /// Node constraints every replica carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_claim: Option<NodeClaim>,
    /// Compute resources one replica requests.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::schema::quantities)]
    pub resource_request: BTreeMap<String, Quantity>,
    /// Priority class of the component's pods.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub priority_class_name: String,
}

open_enum! {
    /// Health of a propagated object in one member cluster.
    pub enum ResourceHealth {
        /// The interpreter said the object is healthy.
        Healthy = "Healthy",
        /// The interpreter said the object is not healthy.
        Unhealthy = "Unhealthy",
        /// No answer yet, or the interpreter failed.
        Unknown = "Unknown",
    }
}

/// One member cluster's view of a binding's object (`status.aggregatedStatus[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AggregatedStatusItem {
    /// The member cluster.
    pub cluster_name: String,
    /// The member object's status as InterpretStatus reflected it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub status: Option<serde_json::Value>,
    /// Whether the Work was applied; omitted when false, as Karmada does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub applied: bool,
    /// Why applying failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub applied_message: String,
    /// Health as InterpretHealth judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<ResourceHealth>,
}
