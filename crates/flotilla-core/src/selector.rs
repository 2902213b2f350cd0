//! Matching templates to policies and clusters to affinities, as Karmada's `pkg/util/selector.go` does.
//!
//! Invariants: pure functions over API types; an invalid selector never panics and never matches (Karmada
//! treats selector parse errors as "no match"); label selectors use kube-core's evaluation with Kubernetes'
//! validation of value counts on top.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::{ClusterAffinity, PropagationSpec, ResourceSelector};
use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube_core::ResourceExt;
use kube_core::object::HasSpec;
use kube_core::{Selector, SelectorExt};

/// The `fieldSelector` key matched against a cluster's `spec.provider`.
pub const FIELD_PROVIDER: &str = "provider";
/// The `fieldSelector` key matched against a cluster's `spec.region`.
pub const FIELD_REGION: &str = "region";
/// The `fieldSelector` key matched against a cluster's `spec.zones`.
pub const FIELD_ZONE: &str = "zone";

/// How precisely a resource selector matches a template (Karmada's implicit priority), ordered
/// `MisMatch < MatchAll < MatchLabelSelector < MatchName`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ImplicitPriority {
    /// The selector does not match.
    #[default]
    MisMatch = 0,
    /// The selector matches every template of the kind (no name, no label selector).
    MatchAll = 1,
    /// The selector's label selector matches.
    MatchLabelSelector = 2,
    /// The selector names the template.
    MatchName = 3,
}

/// What selectors look at in a template: its type, namespace, name and labels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateRef {
    /// `apiVersion`, compared by exact string equality.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`; empty for cluster-scoped templates.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
}

impl TemplateRef {
    /// Reads the selector-relevant parts of an object in JSON form; absent fields read as empty, and labels
    /// whose values are not strings are skipped (the API server never stores them).
    pub fn from_value(object: &serde_json::Value) -> Self {
        let str_at = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let labels = object
            .pointer("/metadata/labels")
            .and_then(serde_json::Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            api_version: str_at("/apiVersion"),
            kind: str_at("/kind"),
            namespace: str_at("/metadata/namespace"),
            name: str_at("/metadata/name"),
            labels,
        }
    }
}

/// Converts a `metav1.LabelSelector` as `LabelSelectorAsSelector` does, or `None` when it is invalid
/// (unknown operator, `In`/`NotIn` without values, `Exists`/`DoesNotExist` with values).
pub fn compile_label_selector(selector: &LabelSelector) -> Option<Selector> {
    for req in selector.match_expressions.iter().flatten() {
        let values = req.values.as_deref().unwrap_or_default();
        let valid = match req.operator.as_str() {
            "In" | "NotIn" => !values.is_empty(),
            "Exists" | "DoesNotExist" => values.is_empty(),
            _ => false,
        };
        if !valid {
            return None;
        }
    }
    Selector::try_from(selector.clone()).ok()
}

/// Whether a label selector matches a label set, with Kubernetes semantics: an empty selector `{}` matches
/// everything; an invalid selector matches nothing.
pub fn label_selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    compile_label_selector(selector).is_some_and(|s| s.matches(labels))
}

/// How one resource selector matches a template.
///
/// Guarantees: `MisMatch` unless apiVersion and kind are equal and the selector namespace (when set) equals
/// the template's; a non-empty `name` decides alone (`MatchName` or `MisMatch`); a nil label selector gives
/// `MatchAll`; otherwise `MatchLabelSelector` when the (valid) label selector matches.
pub fn selector_priority(selector: &ResourceSelector, template: &TemplateRef) -> ImplicitPriority {
    if selector.api_version != template.api_version
        || selector.kind != template.kind
        || (!selector.namespace.is_empty() && selector.namespace != template.namespace)
    {
        return ImplicitPriority::MisMatch;
    }
    if !selector.name.is_empty() {
        return if selector.name == template.name {
            ImplicitPriority::MatchName
        } else {
            ImplicitPriority::MisMatch
        };
    }
    match &selector.label_selector {
        None => ImplicitPriority::MatchAll,
        Some(ls) if label_selector_matches(ls, &template.labels) => {
            ImplicitPriority::MatchLabelSelector
        }
        Some(_) => ImplicitPriority::MisMatch,
    }
}

/// The best match over a list of selectors (a policy's implicit priority); `MisMatch` for an empty list.
pub fn selectors_priority(
    selectors: &[ResourceSelector],
    template: &TemplateRef,
) -> ImplicitPriority {
    selectors
        .iter()
        .map(|s| selector_priority(s, template))
        .max()
        .unwrap_or_default()
}

/// Whether any selector matches the template.
pub fn selectors_match(selectors: &[ResourceSelector], template: &TemplateRef) -> bool {
    selectors_priority(selectors, template) > ImplicitPriority::MisMatch
}

/// Chooses the propagation policy for a template among candidates of one kind (PPs of the template's
/// namespace, or CPPs), as Karmada does.
///
/// Guarantees: policies that do not match are ignored; the highest `spec.priority` wins, then the highest
/// implicit priority, then the byte-wise smallest `metadata.name`. Deterministic whatever the input order.
/// PP-over-CPP precedence is the caller's (run this on PPs first).
pub fn select_policy<'a, P>(
    policies: impl IntoIterator<Item = &'a P>,
    template: &TemplateRef,
) -> Option<&'a P>
where
    P: kube_core::Resource + HasSpec<Spec = PropagationSpec> + 'a,
{
    policies
        .into_iter()
        .filter_map(|p| {
            let implicit = selectors_priority(&p.spec().resource_selectors, template);
            (implicit > ImplicitPriority::MisMatch).then_some((p, implicit))
        })
        .min_by(|(a, ai), (b, bi)| {
            compare_policies(
                (&a.name_any(), a.spec().priority, *ai),
                (&b.name_any(), b.spec().priority, *bi),
            )
        })
        .map(|(p, _)| p)
}

/// Compares two candidate policies as [`select_policy`] does: `Less` means `a` is preferred.
pub fn compare_policies(
    a: (&str, i32, ImplicitPriority),
    b: (&str, i32, ImplicitPriority),
) -> Ordering {
    b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then_with(|| a.0.cmp(b.0))
}

/// A cluster's zones: `spec.zones`, or the deprecated `spec.zone` when `zones` is empty (the API
/// normalisation Karmada's aggregated server applies, which a plain CRD does not).
pub fn cluster_zones(cluster: &Cluster) -> Vec<&str> {
    if cluster.spec.zones.is_empty() && !cluster.spec.zone.is_empty() {
        vec![cluster.spec.zone.as_str()]
    } else {
        cluster.spec.zones.iter().map(String::as_str).collect()
    }
}

/// Whether a cluster matches an affinity (Karmada's `ClusterMatches`, used by the affinity filter, static
/// weights, override target clusters and taint policies).
///
/// Guarantees, all ANDed: the cluster is not in `exclude`; the label selector (if any, and valid) matches the
/// cluster's labels; every `zone` field expression matches `spec.zones` (`In`: some zone listed, `NotIn`: no
/// zone listed, `Exists`/`DoesNotExist`: zones non-empty/empty, other operators: false); the other field
/// expressions (if any) are valid label requirements satisfied by `{provider, region}` (keys present only when
/// the field is non-empty); `clusterNames` (if non-empty) lists the cluster.
pub fn cluster_matches(cluster: &Cluster, affinity: &ClusterAffinity) -> bool {
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    if affinity.exclude_clusters.iter().any(|c| c == name) {
        return false;
    }
    if let Some(ls) = &affinity.label_selector {
        let labels = cluster.metadata.labels.clone().unwrap_or_default();
        if !label_selector_matches(ls, &labels) {
            return false;
        }
    }
    if let Some(fs) = &affinity.field_selector
        && !field_selector_matches(cluster, &fs.match_expressions)
    {
        return false;
    }
    affinity.cluster_names.is_empty() || affinity.cluster_names.iter().any(|c| c == name)
}

fn field_selector_matches(cluster: &Cluster, expressions: &[NodeSelectorRequirement]) -> bool {
    let zones = cluster_zones(cluster);
    let mut fields = BTreeMap::new();
    if !cluster.spec.provider.is_empty() {
        fields.insert(FIELD_PROVIDER, cluster.spec.provider.as_str());
    }
    if !cluster.spec.region.is_empty() {
        fields.insert(FIELD_REGION, cluster.spec.region.as_str());
    }
    let (zone_exprs, other): (Vec<_>, Vec<_>) =
        expressions.iter().partition(|e| e.key == FIELD_ZONE);
    if !zone_exprs.iter().all(|e| zone_matches(e, &zones)) {
        return false;
    }
    // Karmada converts all non-zone expressions first and fails the whole match if any is invalid, so
    // validity is checked before any is evaluated.
    if !other.iter().all(|e| requirement_is_valid(e)) {
        return false;
    }
    other.iter().all(|e| requirement_matches(e, &fields))
}

fn zone_matches(expr: &NodeSelectorRequirement, zones: &[&str]) -> bool {
    let values = expr.values.as_deref().unwrap_or_default();
    let listed = |z: &&str| values.iter().any(|v| v == z);
    match expr.operator.as_str() {
        "In" => zones.iter().any(listed),
        "NotIn" => !zones.iter().any(listed),
        "Exists" => !zones.is_empty(),
        "DoesNotExist" => zones.is_empty(),
        _ => false,
    }
}

/// Kubernetes' `labels.NewRequirement` value-count rules for node selector operators.
fn requirement_is_valid(expr: &NodeSelectorRequirement) -> bool {
    let values = expr.values.as_deref().unwrap_or_default();
    match expr.operator.as_str() {
        "In" | "NotIn" => !values.is_empty(),
        "Exists" | "DoesNotExist" => values.is_empty(),
        "Gt" | "Lt" => values.len() == 1 && values[0].parse::<i64>().is_ok(),
        _ => false,
    }
}

fn requirement_matches(expr: &NodeSelectorRequirement, fields: &BTreeMap<&str, &str>) -> bool {
    let values: BTreeSet<&str> = expr.values.iter().flatten().map(String::as_str).collect();
    let value = fields.get(expr.key.as_str()).copied();
    let compare = |want: Ordering| {
        let bound = values.iter().next().and_then(|v| v.parse::<i64>().ok());
        match (value.and_then(|v| v.parse::<i64>().ok()), bound) {
            (Some(have), Some(bound)) => have.cmp(&bound) == want,
            _ => false,
        }
    };
    match expr.operator.as_str() {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => compare(Ordering::Greater),
        "Lt" => compare(Ordering::Less),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
