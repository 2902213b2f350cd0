use std::sync::Arc;
use std::time::Duration;

use flotilla_api::apps::v1alpha1::{
    ObjectReference, ObservedWorkload, REBALANCE_FAILED, REBALANCE_OBJECT_NOT_FOUND,
    REBALANCE_SUCCESSFUL, WorkloadRebalancer, WorkloadRebalancerSpec, WorkloadRebalancerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::build::{
    Cleanup, Outcome, binding_of, cleanup, conclude, needs_trigger, pending, record, relevant,
    sync_workloads,
};
use crate::bindings::BindingRef;
use crate::runtime::Change;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).expect("a valid timestamp")
}

fn deployment(namespace: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: "apps/v1".to_owned(),
        kind: "Deployment".to_owned(),
        name: name.to_owned(),
        namespace: namespace.to_owned(),
    }
}

fn cluster_role(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: "rbac.authorization.k8s.io/v1".to_owned(),
        kind: "ClusterRole".to_owned(),
        name: name.to_owned(),
        namespace: String::new(),
    }
}

fn entry(workload: ObjectReference, result: &str) -> ObservedWorkload {
    ObservedWorkload {
        workload,
        result: result.to_owned(),
        reason: if result == REBALANCE_FAILED {
            REBALANCE_OBJECT_NOT_FOUND.to_owned()
        } else {
            String::new()
        },
    }
}

fn names(entries: &[ObservedWorkload]) -> Vec<(&str, &str)> {
    entries
        .iter()
        .map(|e| (e.workload.name.as_str(), e.result.as_str()))
        .collect()
}

#[test]
fn new_workloads_enter_the_status_pending_and_sorted() {
    let spec = [
        deployment("ns", "b"),
        cluster_role("admin"),
        deployment("ns", "a"),
        deployment("default", "z"),
    ];
    let entries = sync_workloads(&spec, &[]);
    // "apps/v1 Deployment default z" < "apps/v1 Deployment ns a" < ... < "rbac.authorization.k8s.io/v1 ...".
    assert_eq!(
        names(&entries),
        [("z", ""), ("a", ""), ("b", ""), ("admin", "")]
    );
    assert!(entries.iter().all(pending));
}

#[test]
fn the_status_keeps_what_the_spec_keeps_and_what_succeeded() {
    let observed = [
        entry(deployment("ns", "done"), REBALANCE_SUCCESSFUL),
        entry(deployment("ns", "missing"), REBALANCE_FAILED),
        entry(deployment("ns", "retrying"), ""),
        entry(deployment("ns", "kept"), REBALANCE_FAILED),
    ];
    // `done`, `missing` and `retrying` left the spec; `kept` stays; `new` came.
    let spec = [deployment("ns", "new"), deployment("ns", "kept")];
    let entries = sync_workloads(&spec, &observed);
    assert_eq!(
        names(&entries),
        [
            ("done", REBALANCE_SUCCESSFUL),
            ("kept", REBALANCE_FAILED),
            ("new", "")
        ]
    );
    // A kept entry keeps its reason too.
    assert_eq!(entries[1].reason, REBALANCE_OBJECT_NOT_FOUND);
}

#[test]
fn a_workload_changed_in_the_spec_is_one_gone_and_one_new() {
    let observed = [entry(deployment("ns", "web"), "")];
    let spec = [deployment("other", "web")];
    let entries = sync_workloads(&spec, &observed);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].workload.namespace, "other");
    assert!(pending(&entries[0]));
}

#[test]
fn a_reordered_or_repeated_spec_changes_nothing() {
    let observed = sync_workloads(&[deployment("ns", "a"), deployment("ns", "b")], &[]);
    let again = sync_workloads(
        &[
            deployment("ns", "b"),
            deployment("ns", "a"),
            deployment("ns", "b"),
        ],
        &observed,
    );
    assert_eq!(again, observed);
}

#[test]
fn only_entries_without_a_result_are_pending() {
    assert!(pending(&entry(deployment("ns", "a"), "")));
    assert!(!pending(&entry(
        deployment("ns", "a"),
        REBALANCE_SUCCESSFUL
    )));
    assert!(!pending(&entry(deployment("ns", "a"), REBALANCE_FAILED)));
}

#[test]
fn bindings_are_named_as_the_detector_names_them() {
    assert_eq!(
        binding_of(&deployment("ns", "web")),
        BindingRef::Namespaced {
            namespace: "ns".to_owned(),
            name: "web-deployment".to_owned()
        }
    );
    assert_eq!(
        binding_of(&cluster_role("system:admin")),
        BindingRef::Cluster {
            name: "system.admin-clusterrole".to_owned()
        }
    );
}

#[test]
fn a_binding_is_asked_unless_an_equal_or_later_request_covers_it() {
    let created = Time(at(100));
    assert!(needs_trigger(&created, None));
    assert!(needs_trigger(&created, Some(&Time(at(99)))));
    assert!(!needs_trigger(&created, Some(&Time(at(100)))));
    assert!(!needs_trigger(&created, Some(&Time(at(101)))));
}

#[test]
fn outcomes_become_results() {
    let mut ok = entry(deployment("ns", "a"), "");
    record(&mut ok, Outcome::Requested);
    assert_eq!((ok.result.as_str(), ok.reason.as_str()), ("Successful", ""));
    let mut missing = entry(deployment("ns", "b"), "");
    record(&mut missing, Outcome::BindingNotFound);
    assert_eq!(
        (missing.result.as_str(), missing.reason.as_str()),
        ("Failed", "ReferencedBindingNotFound")
    );
}

#[test]
fn a_finished_pass_writes_the_status_with_its_finish_time() {
    let old = WorkloadRebalancerStatus::default();
    let entries = vec![entry(deployment("ns", "a"), REBALANCE_SUCCESSFUL)];
    let status = conclude(&old, entries.clone(), 1, true, at(50)).expect("a change");
    assert_eq!(status.observed_workloads, entries);
    assert_eq!(status.observed_generation, 1);
    assert_eq!(status.finish_time, Some(Time(at(50))));
    // The same pass again: nothing to write, and the finish time stays the first.
    assert_eq!(conclude(&status, entries.clone(), 1, true, at(60)), None);
    // A new generation with the same entries (a spec change such as a TTL) is a new finish.
    let next = conclude(&status, entries, 2, true, at(70)).expect("a change");
    assert_eq!(next.finish_time, Some(Time(at(70))));
}

#[test]
fn an_unfinished_pass_writes_its_progress_without_a_new_finish_time() {
    let old = WorkloadRebalancerStatus {
        observed_workloads: vec![entry(deployment("ns", "a"), REBALANCE_SUCCESSFUL)],
        observed_generation: 1,
        finish_time: Some(Time(at(10))),
    };
    let entries = vec![
        entry(deployment("ns", "a"), REBALANCE_SUCCESSFUL),
        entry(deployment("ns", "b"), ""),
    ];
    let status = conclude(&old, entries.clone(), 2, false, at(20)).expect("a change");
    assert_eq!(status.observed_workloads, entries);
    assert_eq!(status.finish_time, Some(Time(at(10))));
    // Nothing new while a retry is pending: nothing to write.
    assert_eq!(conclude(&status, entries, 2, false, at(30)), None);
}

#[test]
fn a_finished_status_without_a_finish_time_gets_one() {
    let entries = vec![entry(deployment("ns", "a"), REBALANCE_SUCCESSFUL)];
    let old = WorkloadRebalancerStatus {
        observed_workloads: entries.clone(),
        observed_generation: 1,
        finish_time: None,
    };
    let status = conclude(&old, entries, 1, true, at(5)).expect("a change");
    assert_eq!(status.finish_time, Some(Time(at(5))));
}

#[test]
fn a_finished_rebalancer_goes_when_its_ttl_is_up() {
    let finished = Time(at(100));
    assert_eq!(cleanup(None, Some(&finished), at(1000)), Cleanup::Keep);
    assert_eq!(cleanup(Some(5), None, at(1000)), Cleanup::Keep);
    assert_eq!(
        cleanup(Some(5), Some(&finished), at(102)),
        Cleanup::After(Duration::from_secs(3))
    );
    assert_eq!(cleanup(Some(5), Some(&finished), at(105)), Cleanup::Delete);
    assert_eq!(cleanup(Some(0), Some(&finished), at(100)), Cleanup::Delete);
    assert_eq!(cleanup(Some(-1), Some(&finished), at(100)), Cleanup::Delete);
}

fn rebalancer(workloads: Vec<ObjectReference>, ttl: Option<i32>) -> Arc<WorkloadRebalancer> {
    let mut rebalancer = WorkloadRebalancer::new(
        "r",
        WorkloadRebalancerSpec {
            workloads,
            ttl_seconds_after_finished: ttl,
        },
    );
    rebalancer.status = Some(WorkloadRebalancerStatus::default());
    Arc::new(rebalancer)
}

#[test]
fn creations_and_spec_changes_are_reconciled_status_writes_are_not() {
    let a = rebalancer(vec![deployment("ns", "a")], None);
    assert!(relevant(&Change::Added(&a)));
    let mut written = (*a).clone();
    written.status = Some(WorkloadRebalancerStatus {
        observed_generation: 1,
        ..WorkloadRebalancerStatus::default()
    });
    assert!(!relevant(&Change::Updated {
        old: &a,
        new: &Arc::new(written)
    }));
    let ttl = rebalancer(vec![deployment("ns", "a")], Some(5));
    assert!(relevant(&Change::Updated { old: &a, new: &ttl }));
    let other = rebalancer(vec![deployment("ns", "b")], None);
    assert!(relevant(&Change::Updated {
        old: &a,
        new: &other
    }));
    assert!(!relevant(&Change::Deleted(&a)));
}
