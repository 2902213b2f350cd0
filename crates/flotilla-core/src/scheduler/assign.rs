//! Replica assignment: Duplicated, StaticWeight, DynamicWeight and Aggregated over the selected clusters, with
//! Fresh/Steady modes and overflow tiers. Only workloads (replicas or replica requirements) take part; every
//! selected cluster of anything else is written without replicas.

use std::collections::BTreeMap;

use flotilla_api::policy::v1alpha1::{Placement, ReplicaDivisionPreference, ReplicaSchedulingType};
use flotilla_api::work::v1alpha2::{ResourceBindingSpec, TargetCluster};

use super::select::Candidate;
use super::webster;
use crate::selector::cluster_matches;

/// How replicas are divided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Every cluster gets all replicas (also when `replicaScheduling` is absent).
    Duplicated,
    /// Divided, packed into as few clusters as possible.
    Aggregated,
    /// Divided by static weights (equal weights when none are given).
    StaticWeight,
    /// Divided by the clusters' available replicas.
    DynamicWeight,
}

/// The strategy a placement asks for, or `None` when Karmada has none for it: Divided without a division
/// preference (which the defaults of [`super::defaults`] never leave), or a scheduling type or division
/// preference this version does not know.
pub fn strategy(placement: &Placement) -> Option<Strategy> {
    let Some(s) = &placement.replica_scheduling else {
        return Some(Strategy::Duplicated);
    };
    match (&s.replica_scheduling_type, &s.replica_division_preference) {
        (ReplicaSchedulingType::Duplicated, _) => Some(Strategy::Duplicated),
        (ReplicaSchedulingType::Divided, Some(ReplicaDivisionPreference::Aggregated)) => {
            Some(Strategy::Aggregated)
        }
        (ReplicaSchedulingType::Divided, Some(ReplicaDivisionPreference::Weighted)) => {
            if s.weight_preference
                .as_ref()
                .is_some_and(|w| w.dynamic_weight.is_some())
            {
                Some(Strategy::DynamicWeight)
            } else {
                Some(Strategy::StaticWeight)
            }
        }
        // Karmada has no assignment for these and refuses to schedule, naming both values.
        (ReplicaSchedulingType::Divided, None | Some(ReplicaDivisionPreference::Other(_)))
        | (ReplicaSchedulingType::Other(_), _) => None,
    }
}

/// Karmada's refusal of a placement [`strategy`] has no strategy for, naming its type and preference as
/// written.
fn unsupported_strategy(placement: &Placement) -> AssignError {
    let s = placement.replica_scheduling.as_ref();
    let scheduling_type = s.map_or("Duplicated", |s| s.replica_scheduling_type.as_str());
    let preference = s
        .and_then(|s| s.replica_division_preference.as_ref())
        .map_or("", ReplicaDivisionPreference::as_str);
    AssignError::other(format!(
        "unsupported replica scheduling strategy, replicaSchedulingType: {scheduling_type}, \
         replicaDivisionPreference: {preference}, please try another scheduling strategy"
    ))
}

/// Why replicas could not be assigned; `unschedulable` marks capacity shortfalls (retried, result kept).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AssignError {
    /// Karmada's `UnschedulableError`: not enough capacity.
    pub unschedulable: bool,
    /// The message, as Karmada words it.
    pub message: String,
}

impl AssignError {
    fn other(message: impl Into<String>) -> Self {
        Self {
            unschedulable: false,
            message: message.into(),
        }
    }

    fn insufficient(message: impl Into<String>) -> Self {
        Self {
            unschedulable: true,
            message: message.into(),
        }
    }

    fn wrap(self, context: &str) -> Self {
        Self {
            unschedulable: self.unschedulable,
            message: format!("{context}: {}", self.message),
        }
    }
}

/// What assignment needs besides the selected clusters.
pub struct AssignInput<'a> {
    /// The binding's spec (replicas, current result, template UID).
    pub spec: &'a ResourceBindingSpec,
    /// The placement, defaulted.
    pub placement: &'a Placement,
    /// The `clusterAffinities` term being tried; empty without terms.
    pub affinity_name: &'a str,
    /// A reschedule was requested (Fresh mode).
    pub fresh: bool,
}

/// Assigns replicas to the selected clusters.
///
/// Guarantees: non-workloads (and multi-component workloads) get every selected cluster without replicas,
/// in selection order; workloads never get a cluster with 0 replicas.
///
/// # Errors
/// [`AssignError`] when nothing was selected, the strategy is unsupported, or capacity is short.
pub fn assign(
    selected: &[Candidate<'_>],
    input: &AssignInput<'_>,
) -> Result<Vec<TargetCluster>, AssignError> {
    if selected.is_empty() {
        return Err(AssignError::other("no clusters available to schedule"));
    }
    let spec = input.spec;
    if !((spec.replicas > 0 || spec.replica_requirements.is_some()) && spec.components.len() <= 1) {
        return Ok(selected.iter().map(|c| target(c.name, 0)).collect());
    }
    if !overflow_enabled(input) {
        return assign_to(selected, spec.replicas, input);
    }
    let mut tiers: BTreeMap<i32, Vec<Candidate<'_>>> = BTreeMap::new();
    for c in selected {
        tiers.entry(c.overflow_order).or_default().push(c.clone());
    }
    let mut remaining = i64::from(spec.replicas);
    let mut results = Vec::new();
    for clusters in tiers.values() {
        let capacity: i64 = clusters.iter().map(|c| c.available).sum();
        let replicas = i32::try_from(remaining.min(capacity)).unwrap_or(i32::MAX);
        results.extend(assign_to(clusters, replicas, input)?);
        remaining -= i64::from(replicas);
        if remaining <= 0 {
            break;
        }
    }
    if remaining > 0 {
        return Err(AssignError::insufficient(
            "Clusters available replicas are not enough to schedule.",
        ));
    }
    Ok(results)
}

fn target(name: &str, replicas: i32) -> TargetCluster {
    TargetCluster {
        name: name.to_owned(),
        replicas,
        components: Vec::new(),
    }
}

/// Overflow tiers apply when the term being tried has `overflowAffinities` (and there is no inline
/// affinity).
fn overflow_enabled(input: &AssignInput<'_>) -> bool {
    let p = input.placement;
    p.cluster_affinity.is_none()
        && !input.affinity_name.is_empty()
        && p.cluster_affinities
            .iter()
            .any(|t| t.affinity_name == input.affinity_name && !t.overflow_affinities.is_empty())
}

/// One strategy over one set of clusters; zero-replica clusters are dropped.
fn assign_to(
    clusters: &[Candidate<'_>],
    replicas: i32,
    input: &AssignInput<'_>,
) -> Result<Vec<TargetCluster>, AssignError> {
    let Some(strategy) = strategy(input.placement) else {
        return Err(unsupported_strategy(input.placement));
    };
    let uid = input.spec.resource.uid.as_str();
    let result = match strategy {
        Strategy::Duplicated => clusters.iter().map(|c| target(c.name, replicas)).collect(),
        Strategy::StaticWeight => static_weight(clusters, replicas, input.placement, uid),
        Strategy::Aggregated | Strategy::DynamicWeight => {
            dynamic(clusters, replicas, input, strategy)?
        }
    };
    Ok(result.into_iter().filter(|c| c.replicas > 0).collect())
}

fn webster_targets(seats: i32, weights: &[(&str, i64)], uid: &str) -> Vec<TargetCluster> {
    // Karmada's dispenser gives nothing when every weight is zero.
    if weights.iter().map(|(_, w)| *w).sum::<i64>() == 0 {
        return Vec::new();
    }
    webster::allocate(seats, weights, &[], uid)
        .into_iter()
        .map(|(name, seats)| TargetCluster {
            name,
            replicas: seats,
            components: Vec::new(),
        })
        .collect()
}

/// Static weights: each cluster's weight is the largest matching `staticWeightList` entry; all clusters
/// weigh 1 when none has a positive weight. The previous result is not used.
fn static_weight(
    clusters: &[Candidate<'_>],
    replicas: i32,
    placement: &Placement,
    uid: &str,
) -> Vec<TargetCluster> {
    let list = placement
        .replica_scheduling
        .as_ref()
        .and_then(|s| s.weight_preference.as_ref())
        .map(|w| w.static_weight_list.as_slice());
    let mut weights: Vec<(&str, i64)> = match list {
        // No weightPreference: every cluster weighs 1 (Karmada's default preference).
        None => clusters.iter().map(|c| (c.name, 1)).collect(),
        Some(list) => clusters
            .iter()
            .map(|c| {
                let weight = list
                    .iter()
                    .filter(|w| cluster_matches(c.cluster, &w.target_cluster))
                    .map(|w| w.weight)
                    .fold(0, i64::max);
                (c.name, weight)
            })
            .filter(|(_, w)| *w > 0)
            .collect(),
    };
    if weights.iter().map(|(_, w)| *w).sum::<i64>() == 0 {
        weights = clusters.iter().map(|c| (c.name, 1)).collect();
    }
    webster_targets(replicas, &weights, uid)
}

/// Dynamic weights and Aggregated. Fresh (a reschedule was requested) divides all replicas by each cluster's
/// allocatable plus what it holds; Steady keeps what is scheduled and divides only a scale-up by allocatable
/// replicas, or a scale-down in proportion to the current result. Aggregated first keeps the shortest prefix of
/// clusters (those holding replicas first) whose weights cover the target.
fn dynamic(
    clusters: &[Candidate<'_>],
    replicas: i32,
    input: &AssignInput<'_>,
    strategy: Strategy,
) -> Result<Vec<TargetCluster>, AssignError> {
    let uid = input.spec.resource.uid.as_str();
    let scheduled: Vec<TargetCluster> = input
        .spec
        .clusters
        .iter()
        .filter(|t| clusters.iter().any(|c| c.name == t.name))
        .cloned()
        .collect();
    let assigned: i64 = scheduled.iter().map(|t| i64::from(t.replicas)).sum();
    let wanted = i64::from(replicas);
    let previous_of = |name: &str| {
        scheduled
            .iter()
            .find(|t| t.name == name)
            .map_or(0, |t| t.replicas)
    };

    let (phase, target, mut weights, previous): (&str, i64, Vec<(&str, i64)>, Vec<TargetCluster>) =
        if input.fresh {
            let weights = clusters
                .iter()
                .map(|c| {
                    (
                        c.name,
                        i64::from(c.allocatable) + i64::from(previous_of(c.name)),
                    )
                })
                .collect();
            ("failed to do fresh scale", wanted, weights, Vec::new())
        } else if assigned > wanted {
            let weights = scheduled
                .iter()
                .map(|t| (t.name.as_str(), i64::from(t.replicas)))
                .collect();
            ("failed to scale down", wanted, weights, Vec::new())
        } else if assigned < wanted {
            let weights = clusters
                .iter()
                .map(|c| (c.name, i64::from(c.allocatable)))
                .collect();
            (
                "failed to scale up",
                wanted - assigned,
                weights,
                scheduled.clone(),
            )
        } else {
            return Ok(scheduled);
        };
    // Go sorts with an unstable sort; a stable sort over the candidate order is its deterministic
    // equivalent (and identical for up to twelve clusters, where Go's sort is an insertion sort).
    weights.sort_by_key(|(_, w)| std::cmp::Reverse(*w));

    let available: i64 = weights.iter().map(|(_, w)| *w).sum();
    if available < target {
        return Err(AssignError::insufficient(format!(
            "Clusters available replicas {available} are not enough to schedule."
        ))
        .wrap(phase));
    }
    if strategy == Strategy::Aggregated {
        let holds = |name: &str| previous.iter().any(|t| t.name == name && t.replicas > 0);
        let (mut front, back): (Vec<_>, Vec<_>) = weights.into_iter().partition(|(n, _)| holds(n));
        front.extend(back);
        weights = front;
        let mut sum = 0;
        if let Some(end) = weights.iter().position(|(_, w)| {
            sum += *w;
            sum >= target
        }) {
            weights.truncate(end + 1);
        }
    }
    let seats = i32::try_from(target).unwrap_or(i32::MAX);
    Ok(merge(previous, webster_targets(seats, &weights, uid)))
}

/// Adds the previous assignment to the new one per cluster; clusters only in the previous assignment follow,
/// by name.
fn merge(previous: Vec<TargetCluster>, mut new: Vec<TargetCluster>) -> Vec<TargetCluster> {
    if previous.is_empty() {
        return new;
    }
    if new.is_empty() {
        return previous;
    }
    let mut rest: BTreeMap<String, i32> =
        previous.into_iter().map(|t| (t.name, t.replicas)).collect();
    for t in &mut new {
        if let Some(old) = rest.remove(&t.name) {
            t.replicas += old;
        }
    }
    new.extend(rest.into_iter().map(|(name, replicas)| TargetCluster {
        name,
        replicas,
        components: Vec::new(),
    }));
    new
}
