//! `config.karmada.io/v1alpha1`: ResourceInterpreterCustomization, ResourceInterpreterWebhookConfiguration and
//! ResourceInterpreterContext, with the JSON names, enums and omissions of Karmada's `pkg/apis/config/v1alpha1`.

use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::work::v1alpha2::{AggregatedStatusItem, Component, ReplicaRequirements};

open_enum! {
    /// An operation of the resource interpreter, as spelled on the wire (`InterpreterOperation`).
    #[derive(PartialOrd, Ord)]
    pub enum InterpreterOperation {
        /// Any operation; only valid in webhook rules.
        All = "*",
        /// Replica count and per-replica requirements of a workload.
        InterpretReplica = "InterpretReplica",
        /// Pod-template components of a multi-template workload.
        InterpretComponent = "InterpretComponent",
        /// Set the replica count of a desired object.
        ReviseReplica = "ReviseReplica",
        /// Reflect a member object's status.
        InterpretStatus = "InterpretStatus",
        /// Remove irrelevant fields (never dispatched).
        Prune = "Prune",
        /// Keep member-owned fields when updating a member object.
        Retain = "Retain",
        /// Fold member statuses into the template's status.
        AggregateStatus = "AggregateStatus",
        /// Judge a member object's health.
        InterpretHealth = "InterpretHealth",
        /// Objects a workload depends on.
        InterpretDependency = "InterpretDependency",
    }
}

impl InterpreterOperation {
    /// The eight operations the interpreter facade dispatches, in Karmada's rule order.
    pub const DISPATCHED: [InterpreterOperation; 8] = [
        InterpreterOperation::Retain,
        InterpreterOperation::InterpretReplica,
        InterpreterOperation::InterpretComponent,
        InterpreterOperation::ReviseReplica,
        InterpreterOperation::InterpretStatus,
        InterpreterOperation::AggregateStatus,
        InterpreterOperation::InterpretHealth,
        InterpreterOperation::InterpretDependency,
    ];
}

/// A reference to an object a workload depends on.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct DependentObjectReference {
    /// API version of the referent.
    pub api_version: String,
    /// Kind of the referent.
    pub kind: String,
    /// Namespace of the referent; empty for cluster-scoped referents.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the referent; when set, `labelSelector` is ignored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Selects several referents by label when `name` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<OrdLabelSelector>,
}

/// A `metav1.LabelSelector` that can be ordered and hashed, so dependency lists can be sorted and deduplicated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct OrdLabelSelector(pub LabelSelector);

impl Eq for OrdLabelSelector {}

impl PartialOrd for OrdLabelSelector {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdLabelSelector {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Ordering by the canonical JSON text is total and stable; selectors are small.
        let a = serde_json::to_string(&self.0).unwrap_or_default();
        let b = serde_json::to_string(&other.0).unwrap_or_default();
        a.cmp(&b)
    }
}

impl std::hash::Hash for OrdLabelSelector {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        serde_json::to_string(&self.0)
            .unwrap_or_default()
            .hash(state);
    }
}

/// Group, version and kind as the webhook wire format spells them (`{"group", "version", "kind"}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct GroupVersionKind {
    /// API group; empty for the core group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// The body of an interpreter webhook call and its reply (`ResourceInterpreterContext`): the caller fills
/// `request`, the webhook answers with `response`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterContext {
    /// `config.karmada.io/v1alpha1`; may be absent in replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ResourceInterpreterContext`; may be absent in replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The request, set by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ResourceInterpreterRequest>,
    /// The response, set by the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResourceInterpreterResponse>,
}

/// What the interpreter asks a webhook.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterRequest {
    /// New per call; the reply must echo it.
    pub uid: String,
    /// The object's group, version and kind.
    pub kind: GroupVersionKind,
    /// The object's name; always present, possibly empty.
    #[serde(default)]
    pub name: String,
    /// The object's namespace; omitted when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The operation asked for.
    pub operation: InterpreterOperation,
    /// The object being interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<serde_json::Value>,
    /// The member object (Retain only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_object: Option<serde_json::Value>,
    /// Target replicas for ReviseReplica, 0 otherwise; always present.
    #[serde(default)]
    pub replicas: i32,
    /// Member statuses (AggregateStatus only); omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregated_status: Vec<AggregatedStatusItem>,
}

/// A webhook's reply; which fields an operation needs is checked by the interpreter's webhook layer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterResponse {
    /// Must equal the request's uid.
    #[serde(default)]
    pub uid: String,
    /// Whether the webhook succeeded.
    #[serde(default)]
    pub successful: bool,
    /// Why it failed (required when `successful` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RequestStatus>,
    /// Base64 of an RFC 6902 JSON Patch document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<k8s_openapi::ByteString>,
    /// Only `JSONPatch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// InterpretReplica's replica count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// InterpretReplica's per-replica requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_requirements: Option<ReplicaRequirements>,
    /// InterpretComponent's components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<Component>>,
    /// InterpretDependency's references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<DependentObjectReference>>,
    /// InterpretStatus's reflected status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_status: Option<serde_json::Value>,
    /// InterpretHealth's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy: Option<bool>,
}

/// Status of a failed webhook reply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestStatus {
    /// Human-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// HTTP-like code.
    #[serde(default)]
    pub code: i32,
}

/// Re-exported so webhook configurations can be built without naming k8s-openapi.
pub type ClientConfig = WebhookClientConfig;

/// Declarative (Lua) interpreter rules for one target kind. When several customizations target one kind, each
/// operation takes the first non-empty script in name order, and dependency scripts accumulate.
#[derive(
    kube::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "config.karmada.io",
    version = "v1alpha1",
    kind = "ResourceInterpreterCustomization",
    plural = "resourceinterpretercustomizations",
    shortname = "ric",
    category = "karmada-io",
    printcolumn = r#"{"name":"TARGET-API-VERSION","type":"string","jsonPath":".spec.target.apiVersion"}"#,
    printcolumn = r#"{"name":"TARGET-KIND","type":"string","jsonPath":".spec.target.kind"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterCustomizationSpec {
    /// The kind these rules interpret.
    pub target: CustomizationTarget,
    /// One Lua script per operation; all optional.
    pub customizations: CustomizationRules,
}

/// The kind a customization applies to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomizationTarget {
    /// e.g. `apps/v1`.
    pub api_version: String,
    /// e.g. `Deployment`.
    pub kind: String,
}

/// The Lua scripts of a customization, one per operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomizationRules {
    /// Retain: `function Retain(desiredObj, observedObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<LuaScript>,
    /// InterpretReplica: `function GetReplicas(desiredObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_resource: Option<LuaScript>,
    /// InterpretComponent: `function GetComponents(desiredObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_resource: Option<LuaScript>,
    /// ReviseReplica: `function ReviseReplica(desiredObj, desiredReplica)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_revision: Option<LuaScript>,
    /// InterpretStatus: `function ReflectStatus(observedObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reflection: Option<LuaScript>,
    /// AggregateStatus: `function AggregateStatus(desiredObj, statusItems)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_aggregation: Option<LuaScript>,
    /// InterpretHealth: `function InterpretHealth(observedObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_interpretation: Option<LuaScript>,
    /// InterpretDependency: `function GetDependencies(desiredObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency_interpretation: Option<LuaScript>,
}

impl CustomizationRules {
    /// The script for an operation, if set and non-empty (an empty script means "not set").
    pub fn script(&self, op: &InterpreterOperation) -> Option<&str> {
        let rule = match op {
            InterpreterOperation::Retain => &self.retention,
            InterpreterOperation::InterpretReplica => &self.replica_resource,
            InterpreterOperation::InterpretComponent => &self.component_resource,
            InterpreterOperation::ReviseReplica => &self.replica_revision,
            InterpreterOperation::InterpretStatus => &self.status_reflection,
            InterpreterOperation::AggregateStatus => &self.status_aggregation,
            InterpreterOperation::InterpretHealth => &self.health_interpretation,
            InterpreterOperation::InterpretDependency => &self.dependency_interpretation,
            InterpreterOperation::All
            | InterpreterOperation::Prune
            | InterpreterOperation::Other(_) => &None,
        };
        rule.as_ref()
            .map(|r| r.lua_script.as_str())
            .filter(|s| !s.is_empty())
    }
}

/// A Lua chunk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LuaScript {
    /// The whole chunk; it must define the operation's global function.
    pub lua_script: String,
}

/// Interpreter webhooks and the kinds and operations they answer for. When several webhooks match an object and
/// operation, only the first by `<configuration>/<webhook>` name is called.
///
/// Like admission webhook configurations, the webhooks sit at the top level, not under `spec`. Serialized with
/// `apiVersion` and `kind`, as API servers require on create.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterWebhookConfiguration {
    /// Standard object metadata.
    #[serde(default)]
    #[schemars(skip)]
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    /// The webhooks.
    #[serde(default)]
    pub webhooks: Vec<ResourceInterpreterWebhook>,
}

impl Serialize for ResourceInterpreterWebhookConfiguration {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use kube::Resource;
        use serde::ser::SerializeStruct;
        let mut obj = ser.serialize_struct("ResourceInterpreterWebhookConfiguration", 4)?;
        obj.serialize_field("apiVersion", &Self::api_version(&()))?;
        obj.serialize_field("kind", &Self::kind(&()))?;
        obj.serialize_field("metadata", &self.metadata)?;
        obj.serialize_field("webhooks", &self.webhooks)?;
        obj.end()
    }
}

impl kube::Resource for ResourceInterpreterWebhookConfiguration {
    type DynamicType = ();
    type Scope = kube::core::ClusterResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "ResourceInterpreterWebhookConfiguration".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "config.karmada.io".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1alpha1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "resourceinterpreterwebhookconfigurations".into()
    }
    fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &mut self.metadata
    }
}

/// One interpreter webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterWebhook {
    /// Fully qualified name, unique within the configuration.
    pub name: String,
    /// How to reach the webhook.
    pub client_config: WebhookClientConfig,
    /// Which operations on which kinds it answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleWithOperations>,
    /// Call timeout, 1..30 seconds; 10 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// Wire versions the webhook accepts; must include `v1alpha1`.
    pub interpreter_context_versions: Vec<String>,
}

/// Operations and kinds a webhook answers for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithOperations {
    /// `*` or operation names.
    pub operations: Vec<InterpreterOperation>,
    /// `*` or API groups; `""` is the core group.
    pub api_groups: Vec<String>,
    /// `*` or versions.
    pub api_versions: Vec<String>,
    /// `*` or kinds.
    pub kinds: Vec<String>,
}
