//! The typed computation the native layer used before requirements were read from JSON, kept as the oracle
//! the JSON path is tested against: a `PodSpec` decoded by k8s-openapi, then the same rules.

use std::collections::BTreeMap;

use flotilla_api::work::v1alpha2::{NodeClaim, ReplicaRequirements};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use super::super::{Unit, format_of, unit_of};
use crate::native::NativeError;
use flotilla_apimachinery::quantity::Quantity;

/// What one replica of a pod template needs: node constraints and the effective resource request, or
/// `None` when there are neither. `namespace` and `priorityClassName` are never set here: Karmada
/// sets them only under the `ResourceQuotaEstimate` feature gate (the detector's business here).
///
/// # Errors
/// [`NativeError::Quantity`] when a request, limit or overhead does not parse.
pub(super) fn replica_requirements(
    template: &PodTemplateSpec,
) -> Result<Option<ReplicaRequirements>, NativeError> {
    match &template.spec {
        Some(spec) => pod_replica_requirements(spec),
        None => Ok(None),
    }
}

/// [`replica_requirements`] for a pod spec (a Pod's own `spec`).
///
/// # Errors
/// [`NativeError::Quantity`] when a request, limit or overhead does not parse.
pub(super) fn pod_replica_requirements(
    spec: &PodSpec,
) -> Result<Option<ReplicaRequirements>, NativeError> {
    let node_claim = node_claim(spec);
    let resource_request = effective_request(spec)?;
    if node_claim.is_none() && resource_request.is_empty() {
        return Ok(None);
    }
    Ok(Some(ReplicaRequirements {
        node_claim,
        resource_request,
        ..ReplicaRequirements::default()
    }))
}

/// Node selector, tolerations and required node affinity; `None` when the selector and the affinity are
/// absent and there are no tolerations (an empty but present selector still counts).
fn node_claim(spec: &PodSpec) -> Option<NodeClaim> {
    let hard_node_affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .clone()
        });
    let tolerations = spec.tolerations.clone().unwrap_or_default();
    if spec.node_selector.is_none() && hard_node_affinity.is_none() && tolerations.is_empty() {
        return None;
    }
    Some(NodeClaim {
        hard_node_affinity,
        node_selector: spec.node_selector.clone().unwrap_or_default(),
        tolerations,
    })
}

/// Per-resource totals in accounting units (millis for cpu).
type Totals = BTreeMap<String, i64>;

/// The effective pod request: the sum over containers, raised to each init container's request, plus the
/// pod overhead; only strictly positive totals, formatted as Kubernetes prints them.
fn effective_request(spec: &PodSpec) -> Result<BTreeMap<String, K8sQuantity>, NativeError> {
    let mut totals = Totals::new();
    for container in &spec.containers {
        for (name, amount) in container_request(container, "containers")? {
            let total = totals.entry(name).or_default();
            *total = total.saturating_add(amount);
        }
    }
    for container in spec.init_containers.iter().flatten() {
        for (name, amount) in container_request(container, "initContainers")? {
            let total = totals.entry(name).or_default();
            *total = (*total).max(amount);
        }
    }
    if let Some(overhead) = &spec.overhead {
        for (name, amount) in accounted(overhead, "overhead")? {
            let total = totals.entry(name).or_default();
            *total = total.saturating_add(amount);
        }
    }
    Ok(totals
        .into_iter()
        .filter(|(_, amount)| *amount > 0)
        .map(|(name, amount)| {
            let quantity = match unit_of(&name) {
                Some(Unit::Milli) => Quantity::from_milli(amount, format_of(&name)),
                _ => Quantity::from_value(amount, format_of(&name)),
            };
            (name, quantity.to_k8s())
        })
        .collect())
}

/// One container's requests, with limits standing in for missing requests, in accounting units.
fn container_request(container: &Container, list: &str) -> Result<Totals, NativeError> {
    let Some(resources) = &container.resources else {
        return Ok(Totals::new());
    };
    let mut merged: BTreeMap<String, K8sQuantity> = resources.requests.clone().unwrap_or_default();
    for (name, limit) in resources.limits.iter().flatten() {
        merged.entry(name.clone()).or_insert_with(|| limit.clone());
    }
    accounted(
        &merged,
        &format!("spec.{list}[{}].resources", container.name),
    )
}

/// A resource list in accounting units, dropping names Karmada does not account.
fn accounted(list: &BTreeMap<String, K8sQuantity>, field: &str) -> Result<Totals, NativeError> {
    let mut totals = Totals::new();
    for (name, quantity) in list {
        let Some(unit) = unit_of(name) else { continue };
        let parsed = Quantity::from_k8s(quantity).map_err(|source| NativeError::Quantity {
            field: format!("{field}.{name}"),
            value: quantity.0.clone(),
            source,
        })?;
        let amount = match unit {
            Unit::Milli => parsed.milli_value(),
            Unit::Whole => parsed.value(),
        };
        totals.insert(name.clone(), amount);
    }
    Ok(totals)
}
