//! `work.karmada.io/v1alpha1`: Work, one manifest to apply to one member cluster (Karmada always writes exactly one
//! manifest per Work, and its status handling assumes it).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::work::v1alpha2::ResourceHealth;

/// What to apply to the member cluster of the Work's execution namespace (`karmada-es-<cluster>`).
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "work.karmada.io",
    version = "v1alpha1",
    kind = "Work",
    plural = "works",
    shortname = "wk",
    category = "karmada-io",
    namespaced,
    status = "WorkStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"WORKLOAD-KIND","type":"string","jsonPath":".spec.workload.manifests[*].kind"}"#,
    printcolumn = r#"{"name":"APPLIED","type":"string","jsonPath":".status.conditions[?(@.type==\"Applied\")].status"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct WorkSpec {
    /// The manifests to apply; Karmada always writes exactly one.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_default")]
    pub workload: WorkloadTemplate,
    /// `true` stops the execution controller from touching the member cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_dispatching: Option<bool>,
    /// Keep the member object when the Work is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
}

/// The manifests of a Work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadTemplate {
    /// Whole Kubernetes objects, as JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Manifest>,
}

/// One whole Kubernetes object in a Work; unchecked JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Manifest(
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")] pub serde_json::Value,
);

impl From<serde_json::Value> for Manifest {
    fn from(value: serde_json::Value) -> Self {
        Manifest(value)
    }
}

/// The observed state of a Work: conditions and the member object's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkStatus {
    /// `Applied` and `Dispatching` conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Status of each manifest's member object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest_statuses: Vec<ManifestStatus>,
}

/// The status and health of one manifest's member object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestStatus {
    /// Which manifest.
    pub identifier: ResourceIdentifier,
    /// The member object's status as InterpretStatus reflected it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub status: Option<serde_json::Value>,
    /// Health as InterpretHealth judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<ResourceHealth>,
}

/// Identifies a manifest of a Work and its member object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIdentifier {
    /// Index of the manifest in `spec.workload.manifests`.
    #[schemars(transform = crate::schema::go_int)]
    pub ordinal: i64,
    /// API group; empty for the core group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Resource (plural); Karmada leaves it empty but always writes it.
    pub resource: String,
    /// Namespace; empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    pub name: String,
}
