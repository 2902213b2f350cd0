//! The scheduling pipeline for one binding: filter, score, estimate, order, select, assign; and the iteration
//! over `clusterAffinities` terms.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::{Placement, ReplicaSchedulingType};
use flotilla_api::work::v1alpha2::{ResourceBindingSpec, ResourceBindingStatus, TargetCluster};

use super::assign::{AssignInput, assign};
use super::components;
use super::defaults::default_placement;
use super::estimate::allocatable_replicas;
use super::filter::{FitError, filter};
use super::select::{Candidate, NO_OVERFLOW_MATCH, compare, select_clusters};
use super::workload_affinity::WorkloadRules;
use crate::selector::cluster_matches;

/// The score `ClusterLocality` gives clusters already in `spec.clusters`.
const LOCALITY_SCORE: i64 = 100;

/// Scheduler switches, and what the other workloads of the binding's groups allow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleOptions<'a> {
    /// Karmada's `--enable-empty-workload-propagation`: selected clusters that got 0 replicas stay in the
    /// result with 0 replicas.
    pub enable_empty_workload_propagation: bool,
    /// The binding's workload affinity and anti-affinity rules (gate `WorkloadAffinity`); `None`: no rules.
    pub workload_rules: Option<&'a WorkloadRules>,
    /// Gate `MultiplePodTemplatesScheduling`: a binding with components held to one cluster is estimated
    /// by whole sets of its components (see [`super::components`]).
    pub multiple_pod_templates: bool,
}

/// What kind of failure a schedule attempt ended in; decides the `Scheduled` reason and the retry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// No cluster passed the filters (`NoClusterFit`; Karmada does not retry, Flotilla retries transient
    /// ones, see [`FitError::is_transient`]).
    NoClusterFit(FitError),
    /// Not enough capacity (`Unschedulable`; retried, previous result kept).
    Unschedulable,
    /// Anything else (`SchedulerError`; retried with backoff).
    Other,
}

/// A failed schedule attempt: its kind and Karmada's message for it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ScheduleError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The message written to the `Scheduled` condition and the event.
    pub message: String,
}

impl ScheduleError {
    fn other(message: String) -> Self {
        Self {
            kind: ErrorKind::Other,
            message,
        }
    }

    /// Whether this is a FitError.
    pub fn is_fit_error(&self) -> bool {
        matches!(self.kind, ErrorKind::NoClusterFit(_))
    }

    /// Prefixes the message with more context, keeping the kind (Go's `%w` wrapping).
    #[must_use]
    pub fn wrap(self, context: &str) -> Self {
        Self {
            kind: self.kind,
            message: format!("{context}: {}", self.message),
        }
    }
}

/// Whether a reschedule was requested: `rescheduleTriggeredAt` later than `lastScheduledTime` (both set).
pub fn reschedule_requested(spec: &ResourceBindingSpec, status: &ResourceBindingStatus) -> bool {
    match (&spec.reschedule_triggered_at, &status.last_scheduled_time) {
        (Some(triggered), Some(last)) => triggered.0 > last.0,
        _ => false,
    }
}

/// Overflow order of a cluster for the term being tried: 0 if it matches the term's own affinity, `i` for
/// the `i`-th overflow tier, [`NO_OVERFLOW_MATCH`] otherwise; 0 without terms.
fn overflow_order(cluster: &Cluster, placement: &Placement, affinity_name: &str) -> i32 {
    if placement.cluster_affinity.is_some() || placement.cluster_affinities.is_empty() {
        return 0;
    }
    let Some(term) = placement
        .cluster_affinities
        .iter()
        .find(|t| t.affinity_name == affinity_name)
    else {
        return NO_OVERFLOW_MATCH;
    };
    if cluster_matches(cluster, &term.cluster_affinity) {
        return 0;
    }
    term.overflow_affinities
        .iter()
        .position(|o| cluster_matches(cluster, &o.cluster_affinity))
        .map_or(NO_OVERFLOW_MATCH, |i| {
            i32::try_from(i + 1).unwrap_or(NO_OVERFLOW_MATCH)
        })
}

/// One scheduling attempt with one placement (already defaulted) and term (`affinity_name`, empty without
/// terms), over a snapshot of every Cluster (`Cluster`s or `Arc<Cluster>`s). Unhealthy clusters stay in (their
/// taints say so); deleting ones are left out.
///
/// # Errors
/// [`ScheduleError`] with Karmada's message: a FitError, a selection or assignment failure.
pub fn schedule_once<C: Borrow<Cluster>>(
    spec: &ResourceBindingSpec,
    placement: &Placement,
    status: &ResourceBindingStatus,
    affinity_name: &str,
    clusters: &[C],
    options: ScheduleOptions<'_>,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    let mut diagnosis = BTreeMap::new();
    let mut feasible: Vec<&Cluster> = Vec::new();
    for cluster in clusters {
        let cluster: &Cluster = cluster.borrow();
        if cluster.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = cluster.metadata.name.as_deref().unwrap_or_default();
        let targeted = spec.clusters.iter().any(|t| t.name == name);
        let workload_rules = || {
            options
                .workload_rules
                .map_or(Ok(()), |rules| rules.check(name, targeted))
        };
        match filter(spec, placement, affinity_name, cluster).and_then(|()| workload_rules()) {
            Ok(()) => feasible.push(cluster),
            Err(reason) => {
                diagnosis.insert(cluster.metadata.name.clone().unwrap_or_default(), reason);
            }
        }
    }
    if feasible.is_empty() {
        let fit = FitError {
            num_all_clusters: clusters.len(),
            diagnosis,
        };
        return Err(ScheduleError {
            message: fit.to_string(),
            kind: ErrorKind::NoClusterFit(fit),
        });
    }

    let by_components = options.multiple_pod_templates && components::applicable(spec);
    let allocatable = if by_components {
        feasible
            .iter()
            .map(|c| components::component_sets(c, &spec.components))
            .collect()
    } else {
        allocatable_replicas(&feasible, spec)
    };
    let mut candidates: Vec<Candidate<'_>> = feasible
        .iter()
        .zip(allocatable)
        .map(|(cluster, allocatable)| {
            let name = cluster.metadata.name.as_deref().unwrap_or_default();
            let assigned = spec
                .clusters
                .iter()
                .find(|t| t.name == name)
                .map_or(0, |t| t.replicas);
            let score = if spec.clusters.iter().any(|t| t.name == name) {
                LOCALITY_SCORE
            } else {
                0
            };
            Candidate {
                cluster,
                name,
                score,
                overflow_order: overflow_order(cluster, placement, affinity_name),
                allocatable,
                available: i64::from(allocatable) + i64::from(assigned),
            }
        })
        .collect();
    candidates.sort_by(compare);

    let is_duplicated = placement
        .replica_scheduling
        .as_ref()
        .is_none_or(|s| s.replica_scheduling_type == ReplicaSchedulingType::Duplicated);
    // A multi-template workload is one indivisible unit: the cluster must hold one set of its components.
    let needed = if by_components { 1 } else { spec.replicas };
    let selected = select_clusters(candidates, placement, needed, is_duplicated)
        .map_err(|e| ScheduleError::other(format!("failed to select clusters: {e}")))?;

    let input = AssignInput {
        spec,
        placement,
        affinity_name,
        fresh: reschedule_requested(spec, status),
    };
    let mut result = assign(&selected, &input).map_err(|e| ScheduleError {
        kind: if e.unschedulable {
            ErrorKind::Unschedulable
        } else {
            ErrorKind::Other
        },
        message: format!("failed to assign replicas: {}", e.message),
    })?;
    if by_components && spec.components.len() > 1 {
        for target in &mut result {
            target.components = components::target_components(&spec.components);
        }
    }
    // Karmada gives a Duplicated workload scaled to zero an empty result, which removes its member objects;
    // Flotilla keeps it on its clusters at zero replicas, which is what empty-workload propagation does.
    let keep_zero =
        options.enable_empty_workload_propagation || (is_duplicated && spec.replicas == 0);
    if keep_zero {
        for c in &selected {
            if !result.iter().any(|t| t.name == c.name) {
                result.push(TargetCluster {
                    name: c.name.to_owned(),
                    replicas: 0,
                    components: Vec::new(),
                });
            }
        }
    }
    Ok(result)
}

/// How a binding names itself in scheduler messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindingRef<'a> {
    /// Namespace; empty for a ClusterResourceBinding.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
}

impl BindingRef<'_> {
    /// `ResourceBinding(ns/name)` or `ClusterResourceBinding(name)`.
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            format!("ClusterResourceBinding({})", self.name)
        } else {
            format!("ResourceBinding({}/{})", self.namespace, self.name)
        }
    }
}

/// The result of scheduling a binding, ready to be written back.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The placement used (defaulted), for the `policy.karmada.io/applied-placement` annotation.
    pub placement: Placement,
    /// The new `spec.clusters` to patch (empty for a FitError), or `None` to leave it untouched.
    pub clusters: Option<Vec<TargetCluster>>,
    /// The `clusterAffinities` term now in use, when the binding has terms.
    pub affinity_name: Option<String>,
    /// The final error (decides the `Scheduled` condition), or `None` on success.
    pub error: Option<ScheduleError>,
    /// One `ScheduleBindingFailed` event message per failed `clusterAffinities` term, in order.
    pub term_failures: Vec<String>,
}

/// Schedules a binding: defaults its placement in memory, then runs [`schedule_once`] with the inline
/// affinity, or with each `clusterAffinities` term from the observed one (the first after a reschedule request)
/// onwards until one succeeds; it never goes back to an earlier term by itself.
///
/// Guarantees: pure and deterministic. A FitError patches an empty result; with terms, only when every term
/// failed and the first failure was a FitError (the observed term name is then kept). Any other failure leaves
/// `spec.clusters` untouched.
pub fn schedule_binding<C: Borrow<Cluster>>(
    binding: BindingRef<'_>,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    clusters: &[C],
    options: ScheduleOptions<'_>,
) -> Outcome {
    let mut placement = spec.placement.clone().unwrap_or_default();
    default_placement(&mut placement);
    let mut outcome = Outcome {
        placement: placement.clone(),
        clusters: None,
        affinity_name: None,
        error: None,
        term_failures: Vec::new(),
    };
    if spec.placement.is_none() {
        outcome.error = Some(ScheduleError::other(format!(
            "failed to get placement from {}",
            lower_first(&binding.describe())
        )));
        return outcome;
    }
    if placement.cluster_affinities.is_empty() {
        match schedule_once(spec, &placement, status, "", clusters, options) {
            Ok(result) => outcome.clusters = Some(result),
            Err(e) => {
                if e.is_fit_error() {
                    outcome.clusters = Some(Vec::new());
                }
                outcome.error = Some(e);
            }
        }
        return outcome;
    }

    let terms = &placement.cluster_affinities;
    let observed = status.scheduler_observed_affinity_name.as_str();
    let mut index = if reschedule_requested(spec, status) {
        0
    } else {
        terms
            .iter()
            .position(|t| t.affinity_name == observed)
            .unwrap_or(0)
    };
    let mut first_error: Option<ScheduleError> = None;
    while index < terms.len() {
        let name = terms[index].affinity_name.as_str();
        match schedule_once(spec, &placement, status, name, clusters, options) {
            Ok(result) => {
                outcome.clusters = Some(result);
                outcome.affinity_name = Some(name.to_owned());
                return outcome;
            }
            Err(e) => {
                outcome.term_failures.push(format!(
                    "failed to schedule {} with clusterAffiliates index({index}): {}",
                    binding.describe(),
                    e.message
                ));
                first_error.get_or_insert(e);
            }
        }
        index += 1;
    }
    if first_error
        .as_ref()
        .is_some_and(ScheduleError::is_fit_error)
    {
        outcome.clusters = Some(Vec::new());
    }
    outcome.affinity_name = Some(observed.to_owned());
    outcome.error = first_error;
    outcome
}

/// `ResourceBinding(..)` → `resourceBinding(..)`, as Karmada's placement error spells it.
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}
