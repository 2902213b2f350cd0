//! Pure steps of the ClusterTaintPolicy controller: which taints a Cluster should carry given its conditions and
//! the policies targeting it (in creation order: a policy's taints added when its `addOnConditions` match, then
//! removed when its `removeOnConditions` match; taints compared by key and effect).

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::{
    ClusterTaintPolicy, MATCH_CONDITION_OP_IN, MATCH_CONDITION_OP_NOT_IN, MatchCondition,
    PolicyTaint,
};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use flotilla_core::selector::cluster_matches;

/// Whether every entry of `wanted` matches `conditions`. An empty list never matches (a policy without
/// `addOnConditions` adds nothing); an entry matches when a condition of its type has a status `In` (or
/// `NotIn`) its values; a missing condition or an unknown operator never matches.
pub(crate) fn conditions_match(conditions: &[Condition], wanted: &[MatchCondition]) -> bool {
    !wanted.is_empty()
        && wanted.iter().all(|entry| {
            let listed = |c: &Condition| entry.status_values.contains(&c.status);
            let of_type = || {
                conditions
                    .iter()
                    .filter(|c| c.type_ == entry.condition_type)
            };
            match entry.operator.as_str() {
                MATCH_CONDITION_OP_IN => of_type().any(listed),
                // Karmada reads the last condition of the type; a cluster has at most one per type.
                MATCH_CONDITION_OP_NOT_IN => of_type().next_back().is_some_and(|c| !listed(c)),
                _ => false,
            }
        })
}

fn same(taint: &Taint, wanted: &PolicyTaint) -> bool {
    taint.key == wanted.key && taint.effect == wanted.effect
}

/// The Cluster's taints after every policy, in `creationTimestamp` order, has been applied: for each policy
/// whose `targetClusters` match (every cluster when absent), its taints are added (when missing by key and
/// effect, with `timeAdded = now`) if `addOnConditions` match, then removed if `removeOnConditions` match.
pub(crate) fn policy_taints(
    cluster: &Cluster,
    policies: &[&ClusterTaintPolicy],
    now: Timestamp,
) -> Vec<Taint> {
    let mut ordered: Vec<&ClusterTaintPolicy> = policies.to_vec();
    ordered.sort_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| t.0));
    let conditions = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let mut taints = cluster.spec.taints.clone();
    for policy in ordered {
        let spec = &policy.spec;
        if spec
            .target_clusters
            .as_ref()
            .is_some_and(|target| !cluster_matches(cluster, target))
        {
            continue;
        }
        if conditions_match(conditions, &spec.add_on_conditions) {
            for wanted in &spec.taints {
                if !taints.iter().any(|t| same(t, wanted)) {
                    taints.push(Taint {
                        key: wanted.key.clone(),
                        value: Some(wanted.value.clone()).filter(|v| !v.is_empty()),
                        effect: wanted.effect.clone(),
                        time_added: Some(Time(now)),
                    });
                }
            }
        }
        if conditions_match(conditions, &spec.remove_on_conditions) {
            taints.retain(|t| !spec.taints.iter().any(|wanted| same(t, wanted)));
        }
    }
    taints
}

/// Karmada's description of a taint list in events: `{Key:k,Effect:e}` (with `Value:v,` when set), joined
/// by commas, or `cluster now does not have taints`.
pub(crate) fn taints_message(taints: &[Taint]) -> String {
    if taints.is_empty() {
        return "cluster now does not have taints".to_owned();
    }
    let parts: Vec<String> = taints
        .iter()
        .map(|t| match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(value) => format!("{{Key:{},Value:{value},Effect:{}}}", t.key, t.effect),
            None => format!("{{Key:{},Effect:{}}}", t.key, t.effect),
        })
        .collect();
    parts.join(",")
}
