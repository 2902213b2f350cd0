//! `metav1.Condition` lists as apimachinery's `meta.SetStatusCondition` keeps them: one condition per type,
//! `lastTransitionTime` changed only when the status changes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// A condition stamped now.
pub fn new_condition(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: Time(Timestamp::now()),
        observed_generation: None,
    }
}

/// Sets `condition` in `conditions`: a new type is appended; an existing one gets the new reason, message and
/// generation, and its transition time only when the status changed. Returns whether anything changed.
pub fn set_condition(conditions: &mut Vec<Condition>, condition: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        None => {
            conditions.push(condition);
            true
        }
        Some(existing) => {
            let mut changed = false;
            if existing.status != condition.status {
                existing.status = condition.status;
                existing.last_transition_time = condition.last_transition_time;
                changed = true;
            }
            if existing.reason != condition.reason {
                existing.reason = condition.reason;
                changed = true;
            }
            if existing.message != condition.message {
                existing.message = condition.message;
                changed = true;
            }
            if existing.observed_generation != condition.observed_generation {
                existing.observed_generation = condition.observed_generation;
                changed = true;
            }
            changed
        }
    }
}

/// The condition of `type_`, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == "True")
}

/// Whether a Cluster's `Ready` condition is `True`.
pub fn cluster_ready(cluster: &flotilla_api::cluster::v1alpha1::Cluster) -> bool {
    cluster.status.as_ref().is_some_and(|s| {
        is_true(
            &s.conditions,
            flotilla_api::names::conditions::CLUSTER_READY,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let mut list = Vec::new();
        let mut old = new_condition("Applied", "False", "AppliedFailed", "x");
        old.last_transition_time = Time(Timestamp::UNIX_EPOCH);
        assert!(set_condition(&mut list, old));
        let first = list[0].last_transition_time.clone();
        assert!(set_condition(
            &mut list,
            new_condition("Applied", "False", "AppliedFailed", "y")
        ));
        assert_eq!(list[0].last_transition_time, first);
        assert!(!set_condition(
            &mut list,
            new_condition("Applied", "False", "AppliedFailed", "y")
        ));
        assert!(set_condition(
            &mut list,
            new_condition("Applied", "True", "AppliedSuccessful", "ok")
        ));
        assert_ne!(list[0].last_transition_time, first);
        assert!(is_true(&list, "Applied"));
        assert_eq!(list.len(), 1);
    }
}
