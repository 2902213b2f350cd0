//! OverridePolicy and ClusterOverridePolicy: per-cluster changes to propagated objects, as Karmada's
//! `pkg/apis/policy/v1alpha1` defines them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

use super::{ClusterAffinity, ResourceSelector};
use crate::serde_util::is_default;

/// The spec shared by OverridePolicy and ClusterOverridePolicy (`OverrideSpec`).
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "OverridePolicy",
    plural = "overridepolicies",
    shortname = "op",
    category = "karmada-io",
    namespaced,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct OverrideSpec {
    /// Templates the policy applies to; every template in scope when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_selectors: Vec<ResourceSelector>,
    /// Override rules, each for a set of clusters (the preferred form).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub override_rules: Vec<RuleWithCluster>,
    /// Deprecated single-rule form: the clusters `overriders` apply to; exclusive with `overrideRules`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster: Option<ClusterAffinity>,
    /// Deprecated single-rule form: the overriders; exclusive with `overrideRules`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub overriders: Overriders,
}

crate::resource::cluster_twin! {
    /// A cluster-scoped OverridePolicy: the same spec, for templates in every namespace and cluster-scoped ones.
    root = ClusterOverridePolicy,
    namespaced = OverridePolicy,
    group = "policy.karmada.io",
    spec = OverrideSpec,
    kind = "ClusterOverridePolicy",
    plural = "clusteroverridepolicies",
    shortname = "cop",
}

/// Overriders applied to the clusters a target selects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithCluster {
    /// The clusters the rule applies to; every cluster when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster: Option<ClusterAffinity>,
    /// The changes to make.
    pub overriders: Overriders,
}

/// The changes an override rule makes, applied in the order imageOverrider, commandOverrider, argsOverrider,
/// labelsOverrider, annotationsOverrider, fieldOverrider, plaintext.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Overriders {
    /// Raw JSON-patch operations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plaintext: Vec<PlaintextOverrider>,
    /// Changes to container images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_overrider: Vec<ImageOverrider>,
    /// Changes to container commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_overrider: Vec<CommandArgsOverrider>,
    /// Changes to container arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args_overrider: Vec<CommandArgsOverrider>,
    /// Changes to labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels_overrider: Vec<LabelAnnotationOverrider>,
    /// Changes to annotations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations_overrider: Vec<LabelAnnotationOverrider>,
    /// Changes inside string fields that hold JSON or YAML documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field_overrider: Vec<FieldOverrider>,
}

impl Overriders {
    /// Whether no overrider is set.
    pub fn is_empty(&self) -> bool {
        is_default(self)
    }
}

open_enum! {
    /// A JSON-patch style operation.
    pub enum OverriderOperator {
        /// Add a value.
        Add = "add",
        /// Remove a value.
        Remove = "remove",
        /// Replace a value.
        Replace = "replace",
    }
}

/// Adds, removes or replaces labels or annotations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelAnnotationOverrider {
    /// The operation.
    pub operator: OverriderOperator,
    /// The keys (and values) to change.
    pub value: BTreeMap<String, String>,
}

/// Changes one component of container images.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageOverrider {
    /// Which image field to change; every container image of known workloads when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<ImagePredicate>,
    /// The image component to change.
    pub component: ImageComponent,
    /// The operation.
    pub operator: OverriderOperator,
    /// The new value of the component.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}

/// Names the image field an ImageOverrider changes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePredicate {
    /// JSON pointer to the image field, e.g. `/spec/template/spec/containers/0/image`.
    pub path: String,
}

open_enum! {
    /// A component of an image reference.
    pub enum ImageComponent {
        /// The registry host, e.g. `docker.io`.
        Registry = "Registry",
        /// The repository, e.g. `library/nginx`.
        Repository = "Repository",
        /// The tag, e.g. `1.25`.
        Tag = "Tag",
    }
}

/// Adds or removes entries of a container's command or arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandArgsOverrider {
    /// The container to change.
    pub container_name: String,
    /// `add` or `remove`.
    pub operator: OverriderOperator,
    /// The entries to add or remove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub value: Vec<String>,
}

/// One RFC 6902 JSON-patch operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaintextOverrider {
    /// JSON pointer to the target field.
    pub path: String,
    /// The operation.
    pub operator: OverriderOperator,
    /// The value for `add` and `replace`; any JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_value")]
    pub value: Option<serde_json::Value>,
}

/// Patches a string field that holds a JSON or YAML document (e.g. a ConfigMap key).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldOverrider {
    /// JSON pointer to the string field.
    pub field_path: String,
    /// Operations when the field holds JSON; exclusive with `yaml`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json: Vec<PatchOperation>,
    /// Operations when the field holds YAML; exclusive with `json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub yaml: Vec<PatchOperation>,
}

/// One operation inside a document held by a string field (Karmada's JSONPatchOperation and
/// YAMLPatchOperation, which have the same shape).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchOperation {
    /// JSON pointer inside the document.
    pub sub_path: String,
    /// The operation.
    pub operator: OverriderOperator,
    /// The value for `add` and `replace`; any JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_value")]
    pub value: Option<serde_json::Value>,
}

/// Karmada's name for a JSON-document field operation.
pub type JsonPatchOperation = PatchOperation;
/// Karmada's name for a YAML-document field operation.
pub type YamlPatchOperation = PatchOperation;
