//! The filter plugins (every one must pass for a cluster to be feasible) and the FitError they add up to.
//!
//! Karmada runs its plugins in Go map order, so which failing plugin's reason is recorded for a cluster is
//! unspecified there; here the order is fixed (APIEnablement, TaintToleration, ClusterAffinity,
//! SpreadConstraint, ClusterEviction, Karmada's registry order) so diagnoses are reproducible.

use std::collections::BTreeMap;
use std::fmt;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{conditions, taints};
use flotilla_api::policy::v1alpha1::{ClusterAffinity, Placement, SpreadFieldValue};
use flotilla_api::work::v1alpha2::ResourceBindingSpec;
use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::selector::{cluster_matches, cluster_zones};

/// APIEnablement: the member does not serve the binding's kind.
pub const REASON_API_MISSING: &str = "cluster(s) did not have the API resource";
/// ClusterAffinity: the cluster is outside the placement's affinity.
pub const REASON_AFFINITY: &str =
    "cluster(s) did not match the placement cluster affinity constraint";
/// SpreadConstraint: no `spec.provider`.
pub const REASON_NO_PROVIDER: &str = "cluster(s) did not have provider property";
/// SpreadConstraint: no `spec.region`.
pub const REASON_NO_REGION: &str = "cluster(s) did not have region property";
/// SpreadConstraint: no `spec.zones`.
pub const REASON_NO_ZONES: &str = "cluster(s) did not have zones property";
/// ClusterEviction: the binding is being evicted from the cluster.
pub const REASON_EVICTING: &str = "cluster(s) is in the process of eviction";

const TAINT_REASON_PREFIX: &str = "cluster(s) had untolerated taint {";

/// Whether a member serves a kind (Karmada's `Cluster.APIEnablement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiEnablement {
    /// The group version lists the kind.
    Enabled,
    /// The list is complete (`CompleteAPIEnablements` is True) and lacks the kind.
    Disabled,
    /// The list is incomplete and lacks the kind.
    Unknown,
}

/// Whether `cluster` serves `kind` in `api_version`, according to its `status.apiEnablements`.
pub fn api_enablement(cluster: &Cluster, api_version: &str, kind: &str) -> ApiEnablement {
    let Some(status) = cluster.status.as_ref() else {
        return ApiEnablement::Unknown;
    };
    let listed = status
        .api_enablements
        .iter()
        .filter(|e| e.group_version == api_version)
        .any(|e| e.resources.iter().any(|r| r.kind == kind));
    if listed {
        return ApiEnablement::Enabled;
    }
    let complete = status
        .conditions
        .iter()
        .any(|c| c.type_ == conditions::CLUSTER_COMPLETE_API_ENABLEMENTS && c.status == "True");
    if complete {
        ApiEnablement::Disabled
    } else {
        ApiEnablement::Unknown
    }
}

/// Whether a toleration tolerates a taint (Kubernetes' `ToleratesTaint`; `tolerationSeconds` is irrelevant).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty())
        && key != taint.key
    {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// Kubernetes' `Taint.ToString`: `key=value:effect`, or `key:effect` without a value.
fn taint_string(taint: &Taint) -> String {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(value) => format!("{}={value}:{}", taint.key, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}

/// The first `NoSchedule`/`NoExecute` taint of the cluster no toleration tolerates.
fn untolerated_taint<'a>(cluster: &'a Cluster, tolerations: &[Toleration]) -> Option<&'a Taint> {
    cluster
        .spec
        .taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// The affinities a cluster must match one of: the inline `clusterAffinity`, or the `clusterAffinities` term
/// named `affinity_name` (plus its overflow tiers for workloads); empty means no constraint.
pub(crate) fn active_affinities<'a>(
    placement: &'a Placement,
    affinity_name: &str,
    is_workload: bool,
) -> Vec<&'a ClusterAffinity> {
    if let Some(affinity) = &placement.cluster_affinity {
        return vec![affinity];
    }
    let Some(term) = placement
        .cluster_affinities
        .iter()
        .find(|t| t.affinity_name == affinity_name)
    else {
        return Vec::new();
    };
    let mut out = vec![&term.cluster_affinity];
    if is_workload {
        out.extend(term.overflow_affinities.iter().map(|o| &o.cluster_affinity));
    }
    out
}

/// Whether a binding is a workload: replicas, replica requirements or components.
pub fn is_workload(spec: &ResourceBindingSpec) -> bool {
    spec.replicas > 0 || spec.replica_requirements.is_some() || !spec.components.is_empty()
}

/// Runs every filter plugin on one cluster for one attempt (`affinity_name` is the `clusterAffinities` term
/// being tried, empty without terms).
///
/// # Errors
/// The first failing plugin's reason, verbatim as Karmada words it.
pub fn filter(
    spec: &ResourceBindingSpec,
    placement: &Placement,
    affinity_name: &str,
    cluster: &Cluster,
) -> Result<(), String> {
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    let targeted = spec.clusters.iter().any(|c| c.name == name);
    if !targeted
        && api_enablement(cluster, &spec.resource.api_version, &spec.resource.kind)
            != ApiEnablement::Enabled
    {
        return Err(REASON_API_MISSING.to_owned());
    }
    if !targeted && let Some(taint) = untolerated_taint(cluster, &placement.cluster_tolerations) {
        return Err(format!("{TAINT_REASON_PREFIX}{}}}", taint_string(taint)));
    }
    let affinities = active_affinities(placement, affinity_name, is_workload(spec));
    if !affinities.is_empty() && !affinities.iter().any(|a| cluster_matches(cluster, a)) {
        return Err(REASON_AFFINITY.to_owned());
    }
    for constraint in &placement.spread_constraints {
        match constraint.spread_by_field {
            Some(SpreadFieldValue::Provider) if cluster.spec.provider.is_empty() => {
                return Err(REASON_NO_PROVIDER.to_owned());
            }
            Some(SpreadFieldValue::Region) if cluster.spec.region.is_empty() => {
                return Err(REASON_NO_REGION.to_owned());
            }
            Some(SpreadFieldValue::Zone) if cluster_zones(cluster).is_empty() => {
                return Err(REASON_NO_ZONES.to_owned());
            }
            _ => {}
        }
    }
    if spec
        .graceful_eviction_tasks
        .iter()
        .any(|t| t.from_cluster == name)
    {
        return Err(REASON_EVICTING.to_owned());
    }
    Ok(())
}

/// No cluster passed the filters: how many clusters there were and why each one failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FitError {
    /// Clusters in the snapshot (deleting ones included, as Karmada counts them).
    pub num_all_clusters: usize,
    /// The failing reason per cluster name.
    pub diagnosis: BTreeMap<String, String>,
}

impl FitError {
    /// Whether every failure may clear up without any change to the binding or to a Cluster's labels or
    /// spec: a member not (yet) serving the kind, or a cluster not ready or unreachable. Karmada waits for such
    /// a change; Flotilla retries such bindings with backoff, so they schedule once the cause clears up.
    pub fn is_transient(&self) -> bool {
        !self.diagnosis.is_empty()
            && self.diagnosis.values().all(|reason| {
                reason == REASON_API_MISSING
                    || [taints::NOT_READY, taints::UNREACHABLE].iter().any(|key| {
                        reason
                            .strip_prefix(TAINT_REASON_PREFIX)
                            .is_some_and(|rest| {
                                rest.starts_with(&format!("{key}:"))
                                    || rest.starts_with(&format!("{key}="))
                            })
                    })
            })
    }
}

impl fmt::Display for FitError {
    /// `0/<N> clusters are available: <sorted "<count> <reason>" joined by ", ">.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.num_all_clusters == 0 || self.diagnosis.is_empty() {
            return write!(
                f,
                "0/{} clusters are available: no cluster exists.",
                self.num_all_clusters
            );
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for reason in self.diagnosis.values() {
            *counts.entry(reason).or_default() += 1;
        }
        let mut histogram: Vec<String> = counts
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        // Go sorts the formatted strings, so "10 ..." sorts before "2 ...".
        histogram.sort();
        write!(
            f,
            "0/{} clusters are available: {}.",
            self.num_all_clusters,
            histogram.join(", ")
        )
    }
}

impl std::error::Error for FitError {}
