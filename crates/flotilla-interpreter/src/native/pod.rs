//! Pure computations over a pod spec that several layers share: the per-replica requirements of a pod
//! template (spec §3.2) and the objects a pod depends on (spec §3.8). The Lua `kube` library and the webhook
//! SDK call these too, so their results match the native layer's exactly.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::config::v1alpha1::DependentObjectReference;
use flotilla_api::work::v1alpha2::{NodeClaim, ReplicaRequirements};
use k8s_openapi::api::core::v1::{
    Container, EnvFromSource, EnvVar, PodSpec, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use super::NativeError;
use crate::quantity::{Format, Quantity};

/// What one replica of a pod template needs: node constraints and the effective resource request, or
/// `None` when there are neither (spec §3.2). `namespace` and `priorityClassName` are never set here: Karmada
/// sets them only under the `ResourceQuotaEstimate` feature gate, which is off.
///
/// # Errors
/// [`NativeError::Quantity`] when a request, limit or overhead does not parse.
pub fn replica_requirements(
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
pub fn pod_replica_requirements(
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

/// How a resource is accounted: cpu in millis, everything else in whole units.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Milli,
    Whole,
}

/// The accounting unit of a resource name, or `None` for names Karmada drops.
fn unit_of(name: &str) -> Option<Unit> {
    match name {
        "cpu" => Some(Unit::Milli),
        "memory" | "ephemeral-storage" | "pods" => Some(Unit::Whole),
        _ if is_scalar_resource(name) => Some(Unit::Whole),
        _ => None,
    }
}

/// Output format of a resource total: binary for byte counts, decimal for counts.
fn format_of(name: &str) -> Format {
    if name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-") {
        Format::BinarySi
    } else {
        Format::DecimalSi
    }
}

/// Kubernetes' scalar resources: extended resources, huge pages, `kubernetes.io/`-prefixed names and
/// attachable volumes.
pub fn is_scalar_resource(name: &str) -> bool {
    is_extended_resource(name)
        || name.starts_with("hugepages-")
        || name.contains("kubernetes.io/")
        || name.starts_with("attachable-volumes-")
}

/// An extended resource: a domain-qualified name outside `kubernetes.io/`, not a quota `requests.` name, that
/// is a valid qualified name once prefixed with `requests.`.
fn is_extended_resource(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if native || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}"))
}

/// Kubernetes' `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63
/// alphanumerics, `-`, `_` or `.`, starting and ending alphanumeric.
pub(crate) fn is_qualified_name(value: &str) -> bool {
    let (prefix, name) = match value.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, value),
    };
    if name.contains('/') {
        return false;
    }
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric());
    name_ok && prefix.is_none_or(is_dns_subdomain)
}

/// Kubernetes' DNS-1123 subdomain: at most 253 characters, dot-separated lower-case labels.
fn is_dns_subdomain(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 253
        && value.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && label
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphanumeric())
                && label
                    .bytes()
                    .last()
                    .is_some_and(|b| b.is_ascii_alphanumeric())
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

/// The ConfigMaps, Secrets, ServiceAccount and PersistentVolumeClaims a pod spec refers to, each as a
/// `v1` reference in `namespace` (spec §3.8): all ConfigMaps, then Secrets, then the ServiceAccount, then
/// PVCs; names are deduplicated and sorted within a kind, empty names skipped, and the `default` service
/// account is not a dependency.
pub fn dependencies(spec: &PodSpec, namespace: &str) -> Vec<DependentObjectReference> {
    let mut config_maps = BTreeSet::new();
    let mut secrets = BTreeSet::new();
    for (env, env_from) in env_sources(spec) {
        for source in env_from {
            config_maps.extend(source.config_map_ref.as_ref().map(|r| r.name.as_str()));
            secrets.extend(source.secret_ref.as_ref().map(|r| r.name.as_str()));
        }
        for var in env {
            let Some(from) = &var.value_from else {
                continue;
            };
            config_maps.extend(from.config_map_key_ref.as_ref().map(|r| r.name.as_str()));
            secrets.extend(from.secret_key_ref.as_ref().map(|r| r.name.as_str()));
        }
    }
    secrets.extend(
        spec.image_pull_secrets
            .iter()
            .flatten()
            .map(|r| r.name.as_str()),
    );
    let volumes = spec.volumes.as_deref().unwrap_or_default();
    for volume in volumes {
        volume_config_maps(volume, &mut config_maps);
        secrets.extend(volume_secrets(volume));
    }
    let service_account = spec
        .service_account_name
        .as_deref()
        .filter(|name| *name != "default");
    let claims = volumes
        .iter()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.as_str());
    let claims: BTreeSet<&str> = claims.collect();

    let mut refs = Vec::new();
    let mut push = |kind: &str, names: &mut dyn Iterator<Item = &str>| {
        for name in names.filter(|name| !name.is_empty()) {
            refs.push(DependentObjectReference {
                api_version: "v1".to_owned(),
                kind: kind.to_owned(),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                label_selector: None,
            });
        }
    };
    push("ConfigMap", &mut config_maps.into_iter());
    push("Secret", &mut secrets.into_iter());
    push("ServiceAccount", &mut service_account.into_iter());
    push("PersistentVolumeClaim", &mut claims.into_iter());
    refs
}

/// `env` and `envFrom` of every init, regular and ephemeral container.
fn env_sources(spec: &PodSpec) -> Vec<(&[EnvVar], &[EnvFromSource])> {
    fn of<'a>(
        env: &'a Option<Vec<EnvVar>>,
        from: &'a Option<Vec<EnvFromSource>>,
    ) -> (&'a [EnvVar], &'a [EnvFromSource]) {
        (
            env.as_deref().unwrap_or_default(),
            from.as_deref().unwrap_or_default(),
        )
    }
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .map(|c| of(&c.env, &c.env_from));
    let regular = spec.containers.iter().map(|c| of(&c.env, &c.env_from));
    let ephemeral = spec
        .ephemeral_containers
        .iter()
        .flatten()
        .map(|c| of(&c.env, &c.env_from));
    init.chain(regular).chain(ephemeral).collect()
}

/// ConfigMaps a volume mounts, directly or through a projection.
fn volume_config_maps<'a>(volume: &'a Volume, out: &mut BTreeSet<&'a str>) {
    if let Some(projected) = &volume.projected {
        out.extend(
            projected
                .sources
                .iter()
                .flatten()
                .filter_map(|s| s.config_map.as_ref())
                .map(|c| c.name.as_str()),
        );
    } else if let Some(config_map) = &volume.config_map {
        out.insert(config_map.name.as_str());
    }
}

/// Secrets a volume refers to; like Kubernetes' visitor, only the first source type found counts.
fn volume_secrets(volume: &Volume) -> Vec<&str> {
    fn name(r: &Option<k8s_openapi::api::core::v1::LocalObjectReference>) -> Vec<&str> {
        r.iter().map(|r| r.name.as_str()).collect()
    }
    if let Some(s) = &volume.azure_file {
        vec![s.secret_name.as_str()]
    } else if let Some(s) = &volume.cephfs {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.cinder {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.flex_volume {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.projected {
        s.sources
            .iter()
            .flatten()
            .filter_map(|p| p.secret.as_ref())
            .map(|p| p.name.as_str())
            .collect()
    } else if let Some(s) = &volume.rbd {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.secret {
        s.secret_name.iter().map(String::as_str).collect()
    } else if let Some(s) = &volume.scale_io {
        vec![s.secret_ref.name.as_str()]
    } else if let Some(s) = &volume.iscsi {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.storageos {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.csi {
        name(&s.node_publish_secret_ref)
    } else {
        Vec::new()
    }
}

#[cfg(test)]
#[path = "pod_tests.rs"]
mod tests;
