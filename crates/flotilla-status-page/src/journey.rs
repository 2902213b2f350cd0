//! The journey of each template through the control plane, for people: the policy that claimed it, the
//! scheduling result with replicas per cluster, each Work and its member object's health, the aggregated status,
//! and, per interpreter operation, the layer that answered, its latency and its last error. `flotilla status`
//! prints it; the controller manager serves it as a live page (the `page` module).
//!
//! Built from the bindings and Works alone (every binding names its template in `spec.resource` and carries
//! its policy's claim annotations, and its Works carry its permanent id), so it needs no informer per template
//! kind. A template no policy claims has no binding and no journey.
//!
//! Guarantees: a journey is deterministic (clusters, Works and status items sorted by cluster) and [`snapshot`]
//! sorts journeys by namespace, kind and name, so the page, the JSON endpoint and `flotilla status` agree.

#[cfg(test)]
mod tests;

use flotilla_api::names::{annotations, conditions, namespaces};
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ResourceBindingSpec, ResourceBindingStatus, ResourceHealth};
use flotilla_interpreter::facade::{Journal, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::ResourceExt;
use kube::core::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use flotilla_core::bindings::Binding;

/// Every journey at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// When it was taken (RFC 3339).
    pub generated_at: String,
    /// Whether the interpreter's journal was consulted: only the controller manager's own process has it, so a
    /// snapshot computed from the API alone (`flotilla status --kubeconfig`) has no operations.
    pub interpreter: bool,
    /// One per bound template, sorted by namespace, kind and name.
    pub templates: Vec<Journey>,
}

/// An object named by API version, kind, namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Namespace; empty for cluster-scoped objects.
    #[serde(default)]
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl std::fmt::Display for ObjectRef {
    /// `Kind namespace/name`, or `Kind name` when cluster-scoped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One template's journey.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Journey {
    /// The template.
    pub template: ObjectRef,
    /// The (Cluster)PropagationPolicy that claimed it, from the binding's claim annotations.
    pub policy: Option<ObjectRef>,
    /// Its (Cluster)ResourceBinding.
    pub binding: ObjectRef,
    /// Replicas the interpreter found in the template (`spec.replicas` of the binding).
    pub replicas: i32,
    /// The binding's `Scheduled` and `FullyApplied` conditions, when set.
    pub conditions: Vec<ConditionView>,
    /// The scheduling result: target clusters and the replicas each got.
    pub clusters: Vec<Placement>,
    /// The Works written for it, one per target cluster.
    pub works: Vec<WorkView>,
    /// The aggregated status: per cluster, whether its Work applied, the member object's health and status.
    pub aggregated: Vec<MemberStatus>,
    /// Per interpreter operation, what the last call on this template (or its member copies) did.
    pub operations: Vec<Operation>,
}

/// A condition, as a person reads it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionView {
    /// `type`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `reason`.
    pub reason: String,
    /// `message`.
    pub message: String,
}

/// One target cluster of the scheduling result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The cluster.
    pub name: String,
    /// Replicas assigned to it (0 for kinds without replicas).
    pub replicas: i32,
}

/// One Work and the health of the member object it applies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkView {
    /// Its execution namespace (`karmada-es-<cluster>`).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The member cluster it applies to.
    pub cluster: String,
    /// Its `Applied` condition, when set.
    pub applied: Option<ConditionView>,
    /// The member object's health as reported in the Work's manifest status (`Healthy`, `Unhealthy`,
    /// `Unknown`), when reported.
    pub health: Option<String>,
}

/// One cluster's item of the binding's aggregated status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberStatus {
    /// The member cluster.
    pub cluster: String,
    /// Whether its Work was applied.
    pub applied: bool,
    /// Why applying failed.
    pub applied_message: String,
    /// The member object's health.
    pub health: Option<String>,
    /// The member object's status as InterpretStatus reflected it.
    pub status: Option<Value>,
}

/// What the last interpreter call of one operation on this template did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// The operation (`InterpretReplica`, `InterpretHealth`, ...).
    pub operation: String,
    /// The layer that answered (`customization`, `webhook`, `third-party`, `native`; `none`: no rule).
    pub layer: String,
    /// The rule it used (customization name, webhook name, bundled document, native handler).
    pub rule: String,
    /// How long the last call took, in milliseconds.
    pub latency_ms: f64,
    /// Calls recorded.
    pub calls: u64,
    /// When the last call ended (RFC 3339).
    pub at: String,
    /// Whether the last call failed.
    pub failed: bool,
    /// The most recent error, also after later successes.
    pub last_error: Option<String>,
    /// When it happened (RFC 3339).
    pub last_error_at: Option<String>,
}

/// The journeys of every template bound by `bindings`, with their Works among `works` and, when `journal` is
/// given, the interpreter's record of each.
pub(crate) fn build<'a, B: Binding + 'a>(
    bindings: impl IntoIterator<Item = &'a B>,
    works: &[&Work],
    journal: Option<&Journal>,
) -> Vec<Journey> {
    bindings
        .into_iter()
        .map(|binding| journey(binding, works, journal))
        .collect()
}

/// A snapshot of the journeys of both binding kinds, sorted.
pub fn snapshot(mut journeys: Vec<Journey>, interpreter: bool) -> Snapshot {
    journeys.sort_by(|a, b| {
        let key = |j: &Journey| {
            (
                j.template.namespace.clone(),
                j.template.kind.clone(),
                j.template.name.clone(),
                j.template.api_version.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    Snapshot {
        generated_at: jiff::Timestamp::now().to_string(),
        interpreter,
        templates: journeys,
    }
}

fn journey<B: Binding>(binding: &B, works: &[&Work], journal: Option<&Journal>) -> Journey {
    let spec: &ResourceBindingSpec = binding.spec();
    let status: Option<&ResourceBindingStatus> = binding.status();
    let template = ObjectRef {
        api_version: spec.resource.api_version.clone(),
        kind: spec.resource.kind.clone(),
        namespace: spec.resource.namespace.clone(),
        name: spec.resource.name.clone(),
    };
    let operations = journal.map_or_else(Vec::new, |journal| operations(journal, &template));
    let mut clusters: Vec<Placement> = spec
        .clusters
        .iter()
        .map(|c| Placement {
            name: c.name.clone(),
            replicas: c.replicas,
        })
        .collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    let mut own_works: Vec<WorkView> = match binding.permanent_id() {
        Some(id) => works
            .iter()
            .filter(|w| w.labels().get(B::permanent_id_label()) == Some(&id))
            .map(|w| work_view(w))
            .collect(),
        None => Vec::new(),
    };
    own_works.sort_by(|a, b| (&a.cluster, &a.name).cmp(&(&b.cluster, &b.name)));
    let binding_conditions = status.map_or(&[][..], |s| s.conditions.as_slice());
    let shown = [conditions::SCHEDULED, conditions::FULLY_APPLIED]
        .iter()
        .filter_map(|type_| binding_conditions.iter().find(|c| c.type_ == *type_))
        .map(condition_view)
        .collect();
    let mut aggregated: Vec<MemberStatus> = status
        .map(|s| s.aggregated_status.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|item| MemberStatus {
            cluster: item.cluster_name.clone(),
            applied: item.applied,
            applied_message: item.applied_message.clone(),
            health: item.health.as_ref().map(ResourceHealth::to_string),
            status: item.status.clone(),
        })
        .collect();
    aggregated.sort_by(|a, b| a.cluster.cmp(&b.cluster));
    Journey {
        policy: policy_of(binding.meta()),
        binding: ObjectRef {
            api_version: B::api_version(&()).into_owned(),
            kind: B::KIND.to_owned(),
            namespace: binding.namespace().unwrap_or_default(),
            name: binding.name_any(),
        },
        template,
        replicas: spec.replicas,
        conditions: shown,
        clusters,
        works: own_works,
        aggregated,
        operations,
    }
}

/// The policy named by a binding's claim annotations; a PropagationPolicy's first, as the detector's namespaced
/// claim replaces a cluster one.
fn policy_of(meta: &ObjectMeta) -> Option<ObjectRef> {
    let annotations_map = meta.annotations.as_ref()?;
    let get = |key: &str| annotations_map.get(key).filter(|v| !v.is_empty());
    let api_version = "policy.karmada.io/v1alpha1".to_owned();
    if let Some(name) = get(annotations::PROPAGATION_POLICY_NAME) {
        return Some(ObjectRef {
            api_version,
            kind: "PropagationPolicy".to_owned(),
            namespace: get(annotations::PROPAGATION_POLICY_NAMESPACE)
                .cloned()
                .unwrap_or_default(),
            name: name.clone(),
        });
    }
    get(annotations::CLUSTER_PROPAGATION_POLICY_NAME).map(|name| ObjectRef {
        api_version,
        kind: "ClusterPropagationPolicy".to_owned(),
        namespace: String::new(),
        name: name.clone(),
    })
}

fn work_view(work: &Work) -> WorkView {
    let namespace = work.namespace().unwrap_or_default();
    let status = work.status.as_ref();
    let applied = status
        .and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == conditions::WORK_APPLIED)
        })
        .map(condition_view);
    let health = status
        .and_then(|s| s.manifest_statuses.iter().find_map(|m| m.health.as_ref()))
        .map(ResourceHealth::to_string);
    WorkView {
        cluster: namespaces::cluster_of_execution_space(&namespace)
            .unwrap_or_default()
            .to_owned(),
        namespace,
        name: work.name_any(),
        applied,
        health,
    }
}

fn condition_view(condition: &Condition) -> ConditionView {
    ConditionView {
        type_: condition.type_.clone(),
        status: condition.status.clone(),
        reason: condition.reason.clone(),
        message: condition.message.clone(),
    }
}

fn operations(journal: &Journal, template: &ObjectRef) -> Vec<Operation> {
    let group = template
        .api_version
        .split_once('/')
        .map_or("", |(group, _)| group);
    let subject = Subject::new(group, &template.kind, &template.namespace, &template.name);
    journal
        .entries(&subject)
        .into_iter()
        .map(|entry| Operation {
            operation: entry.operation.to_string(),
            layer: entry.layer.map_or("none", |l| l.as_str()).to_owned(),
            rule: entry.rule.unwrap_or_default(),
            latency_ms: entry.latency.as_secs_f64() * 1000.0,
            calls: entry.calls,
            at: entry.at.to_string(),
            failed: entry.failed,
            last_error_at: entry.last_error.as_ref().map(|e| e.at.to_string()),
            last_error: entry.last_error.map(|e| e.message),
        })
        .collect()
}

/// Journeys of both binding kinds from their lists, for callers without informers (`flotilla status
/// --kubeconfig`).
pub fn from_lists(
    bindings: &[flotilla_api::work::v1alpha2::ResourceBinding],
    cluster_bindings: &[flotilla_api::work::v1alpha2::ClusterResourceBinding],
    works: &[Work],
    journal: Option<&Journal>,
) -> Snapshot {
    let works: Vec<&Work> = works.iter().collect();
    let mut journeys = build(bindings, &works, journal);
    journeys.extend(build(cluster_bindings, &works, journal));
    snapshot(journeys, journal.is_some())
}
