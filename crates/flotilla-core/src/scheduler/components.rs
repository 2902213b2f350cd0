//! Scheduling of multi-template workloads (gate `MultiplePodTemplatesScheduling`): when
//! a binding carries components and its placement holds it to exactly one cluster, each cluster's estimate is
//! how many complete sets of the components it can hold (Karmada's general estimator,
//! `MaxAvailableComponentSets`), the workload needs one set, and every target records the components.

use flotilla_api::cluster::v1alpha1::{Cluster, ResourceList, ResourceSummary};
use flotilla_api::policy::v1alpha1::SpreadFieldValue;
use flotilla_api::work::v1alpha2::{Component, ResourceBindingSpec, TargetComponent};
use flotilla_apimachinery::quantity::Format;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;
use std::collections::BTreeMap;

use super::estimate::{ModelNode, allowed_pods, clamp, model_grades, parse};

/// Whether component-based scheduling applies to a binding (Karmada's `isMultiTemplateSchedulingApplicable`):
/// it has components and its placement has a cluster spread constraint with `minGroups` and `maxGroups` 1.
/// Cluster affinities are not consulted: only the spread constraint says for sure that one cluster is meant.
pub fn applicable(spec: &ResourceBindingSpec) -> bool {
    !spec.components.is_empty()
        && spec.placement.as_ref().is_some_and(|placement| {
            placement.spread_constraints.iter().any(|c| {
                c.spread_by_field == Some(SpreadFieldValue::Cluster)
                    && c.min_groups == 1
                    && c.max_groups == 1
            })
        })
}

/// The components a target cluster records: each component's name and replicas.
pub fn target_components(components: &[Component]) -> Vec<TargetComponent> {
    components
        .iter()
        .map(|c| TargetComponent {
            name: c.name.clone(),
            replicas: c.replicas,
        })
        .collect()
}

/// Karmada's integer view of a quantity in the component estimator: milli-units for decimal quantities,
/// units for binary ones (so `2Gi` is bytes and `1` cpu is 1000).
fn amount(q: &WireQuantity) -> i64 {
    let q = parse(q);
    match q.format() {
        Format::DecimalSi | Format::DecimalExponent => q.milli_value(),
        Format::BinarySi => q.value(),
    }
}

/// What one set of the components requests in total, per resource.
fn per_set(components: &[Component]) -> BTreeMap<&str, i64> {
    let mut total = BTreeMap::new();
    for c in components {
        let Some(requirements) = &c.replica_requirements else {
            continue;
        };
        for (name, quantity) in &requirements.resource_request {
            *total.entry(name.as_str()).or_default() += amount(quantity) * i64::from(c.replicas);
        }
    }
    total
}

/// What the summary leaves free per resource, in [`amount`]s of the allocatable quantity's format.
fn free(summary: &ResourceSummary, name: &str) -> i64 {
    let Some(allocatable) = summary.allocatable.get(name) else {
        return 0;
    };
    // Go subtracts exact quantities and keeps the allocatable's format; milli-units are exact for every
    // quantity a Kubernetes API server reports.
    let used = |list: &ResourceList| list.get(name).map_or(0, |q| parse(q).milli_value());
    let milli =
        parse(allocatable).milli_value() - used(&summary.allocated) - used(&summary.allocating);
    match parse(allocatable).format() {
        Format::DecimalSi | Format::DecimalExponent => milli,
        Format::BinarySi => milli.div_euclid(1000) + i64::from(milli.rem_euclid(1000) != 0),
    }
}

/// How many complete sets of `components` a cluster can still hold (Karmada's general estimator).
///
/// Guarantees: 0 without a resource summary or free pods; without components' pods, the free pod count;
/// otherwise at most free pods / pods per set, at most free / per-set request for every requested resource
/// (0 when one is exhausted), and with resource models at most the sets that first-fit onto the model nodes.
pub fn component_sets(cluster: &Cluster, components: &[Component]) -> i32 {
    let Some(summary) = cluster
        .status
        .as_ref()
        .and_then(|s| s.resource_summary.as_ref())
    else {
        return 0;
    };
    let pods = allowed_pods(summary);
    if pods <= 0 {
        return 0;
    }
    let pods_per_set: i64 = components.iter().map(|c| i64::from(c.replicas)).sum();
    if pods_per_set <= 0 {
        return clamp(pods);
    }
    let mut sets = pods / pods_per_set;
    for (name, request) in per_set(components) {
        if request <= 0 {
            continue;
        }
        let available = free(summary, name);
        if available <= 0 {
            return 0;
        }
        sets = sets.min(available / request);
    }
    let sets = clamp(sets);
    if summary.allocatable_modelings.is_empty() {
        return sets;
    }
    match model_grades(cluster, summary) {
        Some(grades) => sets.min(sets_on_models(grades, components, sets)),
        None => sets,
    }
}

/// First fit of whole sets onto the model nodes, up to `upper` sets: each component's replicas go to the
/// first nodes with room, in grade order.
fn sets_on_models(grades: Vec<(ModelNode, i64)>, components: &[Component], upper: i32) -> i32 {
    let mut nodes: Vec<ModelNode> = grades
        .into_iter()
        .flat_map(|(node, count)| std::iter::repeat_n(node, usize::try_from(count).unwrap_or(0)))
        .collect();
    let empty = ResourceList::new();
    let mut sets = 0;
    while sets < upper {
        let placed = components.iter().all(|c| {
            let request = c
                .replica_requirements
                .as_ref()
                .map_or(&empty, |r| &r.resource_request);
            let mut remaining = i64::from(c.replicas);
            for node in &mut nodes {
                if remaining == 0 {
                    break;
                }
                let fits = node.max_divided(request).min(remaining);
                if fits > 0 {
                    node.take(request, fits);
                    remaining -= fits;
                }
            }
            remaining == 0
        });
        if !placed {
            break;
        }
        sets += 1;
    }
    sets
}
