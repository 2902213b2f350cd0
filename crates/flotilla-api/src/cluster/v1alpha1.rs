//! `cluster.karmada.io/v1alpha1`: Cluster, a registered member cluster, as Karmada's `pkg/apis/cluster/v1alpha1`
//! defines it.
//!
//! Karmada serves this kind from an aggregated API server; Flotilla serves it as a plain cluster-scoped CRD with
//! a status subresource.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

use crate::serde_util::is_default;

/// Compute resources by name (`cpu`, `memory`, ...), as Kubernetes' `ResourceList`.
pub type ResourceList = BTreeMap<String, Quantity>;

/// How a member cluster is reached and what it offers.
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "cluster.karmada.io",
    version = "v1alpha1",
    kind = "Cluster",
    plural = "clusters",
    status = "ClusterStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"VERSION","type":"string","jsonPath":".status.kubernetesVersion"}"#,
    printcolumn = r#"{"name":"MODE","type":"string","jsonPath":".spec.syncMode"}"#,
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Unique id of the member (its kube-system namespace UID), collected at join.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 128000))]
    pub id: String,
    /// Whether the control plane pushes to the member or an agent pulls.
    pub sync_mode: ClusterSyncMode,
    /// URL of the member's API server.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_endpoint: String,
    /// Secret holding the member's bearer `token` and `caBundle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalSecretReference>,
    /// Secret holding the impersonator token used for proxying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonator_secret_ref: Option<LocalSecretReference>,
    /// Skip verifying the member's serving certificate.
    #[serde(
        default,
        rename = "insecureSkipTLSVerification",
        skip_serializing_if = "is_default"
    )]
    pub insecure_skip_tls_verification: bool,
    /// Proxy (http, https or socks5) used to reach the member.
    #[serde(default, rename = "proxyURL", skip_serializing_if = "String::is_empty")]
    pub proxy_url: String,
    /// Extra headers sent to the proxy.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub proxy_header: BTreeMap<String, String>,
    /// Cloud provider of the member.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provider: String,
    /// Region of the member.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// Zone of the member (deprecated: use `zones`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zone: String,
    /// Zones of the member.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Taints that keep workloads away unless tolerated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Resource models used to estimate available replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_models: Vec<ResourceModel>,
}

open_enum! {
    /// How the control plane talks to a member.
    #[derive(Default)]
    pub enum ClusterSyncMode {
        /// The control plane applies objects to the member.
        #[default]
        Push = "Push",
        /// An agent in the member pulls its Works.
        Pull = "Pull",
    }
}

/// A Secret reference with namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalSecretReference {
    /// Namespace of the Secret.
    pub namespace: String,
    /// Name of the Secret.
    pub name: String,
}

/// One grade of a cluster's resource model: nodes whose resources fall in every range.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceModel {
    /// The grade, from 0 upwards.
    pub grade: u32,
    /// One range per resource.
    pub ranges: Vec<ResourceModelRange>,
}

/// A half-open range `[min, max)` of one resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceModelRange {
    /// The resource, e.g. `cpu` or `memory`.
    pub name: String,
    /// Lower bound, inclusive.
    pub min: Quantity,
    /// Upper bound, exclusive.
    pub max: Quantity,
}

/// The observed state of a member cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// The member's Kubernetes version (`gitVersion`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kubernetes_version: String,
    /// The APIs the member serves, sorted by group version then resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_enablements: Vec<APIEnablement>,
    /// `Ready` and `CompleteAPIEnablements` conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Node counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_summary: Option<NodeSummary>,
    /// Resource totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_summary: Option<ResourceSummary>,
    /// Remedy actions in effect for the cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy_actions: Vec<String>,
}

/// The resources a member serves in one group version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::upper_case_acronyms)]
pub struct APIEnablement {
    /// The group version, e.g. `apps/v1`.
    pub group_version: String,
    /// The resources served, without sub-resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<APIResource>,
}

/// One served resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::upper_case_acronyms)]
pub struct APIResource {
    /// The plural resource name, e.g. `deployments`.
    pub name: String,
    /// The kind, e.g. `Deployment`.
    pub kind: String,
}

/// Node counts of a member.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSummary {
    /// All nodes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub total_num: i32,
    /// Ready nodes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub ready_num: i32,
}

/// Resource totals of a member.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    /// Resources the nodes offer.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: ResourceList,
    /// Resources requested by pods not yet scheduled.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocating: ResourceList,
    /// Resources requested by scheduled pods.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocated: ResourceList,
    /// Nodes per resource-model grade.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocatable_modelings: Vec<AllocatableModeling>,
}

/// How many nodes fall into a resource-model grade.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllocatableModeling {
    /// The grade.
    pub grade: u32,
    /// The node count.
    pub count: i64,
}
