//! Cluster selection with spread constraints: ordering feasible clusters (overflow tier, score, available
//! replicas, name), then the cluster and region algorithms.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::{
    Placement, ReplicaDivisionPreference, ReplicaSchedulingType, SpreadConstraint, SpreadFieldValue,
};

use super::region::{Group, select_groups};

/// Overflow order of clusters matching no tier.
pub const NO_OVERFLOW_MATCH: i32 = 1000;

/// A feasible cluster with what ordering, selection and assignment need.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    /// The cluster.
    pub cluster: &'a Cluster,
    /// Its name.
    pub name: &'a str,
    /// Sum of plugin scores (100 when already targeted, else 0).
    pub score: i64,
    /// 0 for the primary affinity, 1.. for overflow tiers, [`NO_OVERFLOW_MATCH`] otherwise.
    pub overflow_order: i32,
    /// Replicas the estimator says the cluster can still hold.
    pub allocatable: i32,
    /// `allocatable` plus the replicas already assigned to the cluster.
    pub available: i64,
}

/// Karmada's candidate order: overflow order ascending, score descending, available descending, name
/// ascending.
pub fn compare(a: &Candidate<'_>, b: &Candidate<'_>) -> Ordering {
    a.overflow_order
        .cmp(&b.overflow_order)
        .then(b.score.cmp(&a.score))
        .then(b.available.cmp(&a.available))
        .then_with(|| a.name.cmp(b.name))
}

/// Why cluster selection failed; the texts are Karmada's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// Fewer feasible clusters than the cluster constraint's `minGroups`.
    #[error("the number of feasible clusters is less than spreadConstraint.MinGroups")]
    TooFewClusters,
    /// The first `n` clusters cannot hold the replicas, even after swapping in larger ones.
    #[error("no enough resource when selecting {0} clusters")]
    NotEnoughResource(usize),
    /// Fewer regions than the region constraint's `minGroups`.
    #[error("the number of feasible region is less than spreadConstraint.MinGroups")]
    TooFewRegions,
    /// No set of regions satisfies both constraints.
    #[error("the number of clusters is less than the cluster spreadConstraint.MinGroups")]
    NoRegionSet,
    /// Only zone, provider or label constraints.
    #[error("just support cluster and region spread constraint")]
    Unsupported,
}

/// Whether the placement is static-weighted, which makes the scheduler ignore spread constraints.
pub fn is_static_weighted(placement: &Placement) -> bool {
    placement.replica_scheduling.as_ref().is_some_and(|s| {
        s.replica_scheduling_type == ReplicaSchedulingType::Divided
            && s.replica_division_preference == Some(ReplicaDivisionPreference::Weighted)
            && s.weight_preference
                .as_ref()
                .is_none_or(|w| !w.static_weight_list.is_empty() && w.dynamic_weight.is_none())
    })
}

/// Whether resource sufficiency is irrelevant to selection (Duplicated, or no replica scheduling).
fn ignores_resources(placement: &Placement) -> bool {
    placement
        .replica_scheduling
        .as_ref()
        .is_none_or(|s| s.replica_scheduling_type == ReplicaSchedulingType::Duplicated)
}

/// Selects clusters among the ordered candidates: all of them without spread constraints or with static
/// weights, else by the region algorithm when a `region` constraint exists, else by the `cluster` one.
///
/// # Errors
/// [`SelectError`] when the spread constraints cannot be met.
pub fn select_clusters<'a>(
    candidates: Vec<Candidate<'a>>,
    placement: &Placement,
    replicas: i32,
    is_duplicated: bool,
) -> Result<Vec<Candidate<'a>>, SelectError> {
    if placement.spread_constraints.is_empty() || is_static_weighted(placement) {
        return Ok(candidates);
    }
    let need = (!ignores_resources(placement)).then_some(i64::from(replicas));
    // A later constraint on the same field replaces an earlier one, as Karmada's map by field does.
    let by_field: BTreeMap<Option<SpreadFieldValue>, &SpreadConstraint> = placement
        .spread_constraints
        .iter()
        .map(|c| (c.spread_by_field.clone(), c))
        .collect();
    let cluster = by_field.get(&Some(SpreadFieldValue::Cluster)).copied();
    if let Some(region) = by_field.get(&Some(SpreadFieldValue::Region)) {
        let default = SpreadConstraint::default();
        return by_region(
            candidates,
            region,
            cluster.unwrap_or(&default),
            replicas,
            is_duplicated,
        );
    }
    match cluster {
        Some(constraint) => by_cluster(candidates, constraint, need),
        None => Err(SelectError::Unsupported),
    }
}

fn group_limit(n: i64) -> usize {
    usize::try_from(n.max(0)).unwrap_or(usize::MAX)
}

/// The cluster algorithm: the first `min(#feasible, maxGroups)` clusters, swapping in clusters with more
/// available replicas from the back when they cannot hold `need`.
fn by_cluster<'a>(
    mut candidates: Vec<Candidate<'a>>,
    constraint: &SpreadConstraint,
    need: Option<i64>,
) -> Result<Vec<Candidate<'a>>, SelectError> {
    if (candidates.len() as u64) < u64::try_from(constraint.min_groups.max(0)).unwrap_or(u64::MAX) {
        return Err(SelectError::TooFewClusters);
    }
    let count = candidates.len().min(group_limit(constraint.max_groups));
    let Some(need) = need else {
        candidates.truncate(count);
        return Ok(candidates);
    };
    let mut rest = candidates.split_off(count);
    let mut selected = candidates;
    let sum = |s: &[Candidate<'_>]| s.iter().map(|c| c.available).sum::<i64>();
    let mut position = selected.len();
    while sum(&selected) < need && position > 0 {
        position -= 1;
        let mut best: Option<usize> = None;
        let mut best_available = selected[position].available;
        for (i, c) in rest.iter().enumerate() {
            if c.available > best_available {
                best = Some(i);
                best_available = c.available;
            }
        }
        if let Some(i) = best {
            std::mem::swap(&mut selected[position], &mut rest[i]);
        }
    }
    if sum(&selected) < need {
        return Err(SelectError::NotEnoughResource(count));
    }
    Ok(selected)
}

/// Karmada's `calcGroupScore` for a region's clusters (in candidate order).
fn group_score(
    clusters: &[Candidate<'_>],
    replicas: i32,
    is_duplicated: bool,
    region_min: i64,
    cluster_min: i64,
) -> i64 {
    const UNIT: i64 = 1000;
    let replicas = i64::from(replicas);
    if is_duplicated {
        let valid: Vec<_> = clusters
            .iter()
            .filter(|c| c.available >= replicas)
            .collect();
        if valid.is_empty() {
            return 0;
        }
        let n = valid.len() as i64;
        return n * UNIT + valid.iter().map(|c| c.score).sum::<i64>() / n;
    }
    // Defaulting keeps minGroups at least 1; guard anyway rather than divide by zero.
    let target = if region_min > 0 {
        (replicas + region_min - 1).div_euclid(region_min)
    } else {
        replicas
    };
    let wanted = cluster_min.max(region_min);
    let (mut sum_available, mut sum_score, mut taken) = (0i64, 0i64, 0i64);
    for c in clusters {
        sum_available += c.available;
        sum_score += c.score;
        taken += 1;
        if taken >= wanted && sum_available >= target {
            break;
        }
    }
    if sum_available < target {
        return sum_available * UNIT + sum_score / clusters.len().max(1) as i64;
    }
    target * UNIT + sum_score / taken.max(1)
}

/// The region algorithm: choose regions with the group search, take each region's best cluster, then fill
/// up to the cluster constraint's `maxGroups` from the rest in candidate order.
fn by_region<'a>(
    candidates: Vec<Candidate<'a>>,
    region: &SpreadConstraint,
    cluster: &SpreadConstraint,
    replicas: i32,
    is_duplicated: bool,
) -> Result<Vec<Candidate<'a>>, SelectError> {
    let mut regions: BTreeMap<&str, Vec<Candidate<'a>>> = BTreeMap::new();
    for c in candidates {
        if !c.cluster.spec.region.is_empty() {
            regions
                .entry(c.cluster.spec.region.as_str())
                .or_default()
                .push(c);
        }
    }
    if (regions.len() as i64) < region.min_groups {
        return Err(SelectError::TooFewRegions);
    }
    let groups: Vec<Group> = regions
        .iter()
        .map(|(name, clusters)| Group {
            name: (*name).to_owned(),
            value: clusters.len() as i64,
            weight: group_score(
                clusters,
                replicas,
                is_duplicated,
                region.min_groups,
                cluster.min_groups,
            ),
        })
        .collect();
    let chosen = select_groups(
        groups,
        region.min_groups,
        region.max_groups,
        cluster.min_groups,
    );
    if chosen.is_empty() {
        return Err(SelectError::NoRegionSet);
    }
    let mut selected = Vec::new();
    let mut rest = Vec::new();
    for name in &chosen {
        if let Some(mut clusters) = regions.remove(name.as_str()) {
            let others = clusters.split_off(1.min(clusters.len()));
            selected.extend(clusters);
            rest.extend(others);
        }
    }
    let total = selected.len() + rest.len();
    let wanted = total.min(group_limit(cluster.max_groups));
    if wanted > selected.len() {
        rest.sort_by(compare);
        let extra = wanted - selected.len();
        selected.extend(rest.into_iter().take(extra));
    }
    Ok(selected)
}
