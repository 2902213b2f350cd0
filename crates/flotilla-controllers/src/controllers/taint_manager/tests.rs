use std::collections::BTreeMap;

use flotilla_api::names::annotations;
use flotilla_api::policy::v1alpha1::{ClusterFailoverBehavior, FailoverBehavior, PurgeMode};
use flotilla_api::work::v1alpha2::{GracefulEvictionTask, ResourceBindingSpec, TargetCluster};
use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::build::{Verdict, applied_tolerations, evict, no_execute_taints, purge_mode, verdict};

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).expect("a valid timestamp")
}

fn taint(key: &str, effect: &str, added: Option<i64>) -> Taint {
    Taint {
        key: key.to_owned(),
        effect: effect.to_owned(),
        time_added: added.map(|s| Time(at(s))),
        value: None,
    }
}

fn toleration(key: &str, seconds: Option<i64>) -> Toleration {
    Toleration {
        key: Some(key.to_owned()),
        operator: Some("Exists".to_owned()),
        effect: Some("NoExecute".to_owned()),
        toleration_seconds: seconds,
        value: None,
    }
}

#[test]
fn only_no_execute_taints_count() {
    let taints = [
        taint("a", "NoSchedule", None),
        taint("b", "NoExecute", None),
    ];
    let found = no_execute_taints(&taints);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].key, "b");
    assert_eq!(
        verdict(&no_execute_taints(&taints[..1]), &[], at(0)),
        Verdict::Stay
    );
}

#[test]
fn untolerated_evicts_now_and_bounded_tolerations_delay() {
    let a = taint("a", "NoExecute", Some(100));
    let b = taint("b", "NoExecute", Some(200));
    // No toleration for b.
    assert_eq!(
        verdict(&[&a, &b], &[toleration("a", None)], at(0)),
        Verdict::EvictNow
    );
    // Both tolerated forever.
    assert_eq!(
        verdict(
            &[&a, &b],
            &[toleration("a", None), toleration("b", None)],
            at(0)
        ),
        Verdict::Stay
    );
    // The earliest timeAdded + tolerationSeconds decides.
    let tolerations = [toleration("a", Some(300)), toleration("b", Some(60))];
    assert_eq!(
        verdict(&[&a, &b], &tolerations, at(150)),
        Verdict::EvictAt(at(260))
    );
    assert_eq!(verdict(&[&a, &b], &tolerations, at(260)), Verdict::EvictNow);
    // A taint without timeAdded gives no trigger time.
    let undated = taint("a", "NoExecute", None);
    assert_eq!(
        verdict(&[&undated], &[toleration("a", Some(1))], at(1_000)),
        Verdict::Stay
    );
}

#[test]
fn tolerations_come_from_the_applied_placement() {
    let mut notes = BTreeMap::new();
    assert!(applied_tolerations(&notes).is_none());
    notes.insert(
        annotations::APPLIED_PLACEMENT.to_owned(),
        r#"{"clusterTolerations":[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]}"#
            .to_owned(),
    );
    let found = applied_tolerations(&notes)
        .expect("present")
        .expect("decodes");
    assert_eq!(found, vec![toleration("a", Some(30))]);
    notes.insert(annotations::APPLIED_PLACEMENT.to_owned(), "{".to_owned());
    assert!(applied_tolerations(&notes).expect("present").is_err());
}

#[test]
fn purge_mode_prefers_the_policy() {
    assert_eq!(purge_mode(None, PurgeMode::Directly), PurgeMode::Directly);
    let app_only = FailoverBehavior::default();
    assert_eq!(
        purge_mode(Some(&app_only), PurgeMode::Directly),
        PurgeMode::Directly
    );
    let cluster = FailoverBehavior {
        cluster: Some(ClusterFailoverBehavior {
            purge_mode: PurgeMode::Gracefully,
            state_preservation: None,
        }),
        ..FailoverBehavior::default()
    };
    assert_eq!(
        purge_mode(Some(&cluster), PurgeMode::Directly),
        PurgeMode::Gracefully
    );
}

#[test]
fn eviction_moves_the_cluster_into_one_task() {
    let target = |name: &str, replicas| TargetCluster {
        name: name.to_owned(),
        replicas,
        ..TargetCluster::default()
    };
    let mut spec = ResourceBindingSpec {
        clusters: vec![target("m1", 2), target("m2", 0)],
        ..ResourceBindingSpec::default()
    };
    let preserved = BTreeMap::from([("failover.example.com/replicas".to_owned(), "2".to_owned())]);
    assert!(evict(
        &mut spec,
        "m1",
        PurgeMode::Gracefully,
        preserved.clone()
    ));
    assert_eq!(spec.clusters, vec![target("m2", 0)]);
    assert_eq!(
        spec.graceful_eviction_tasks,
        vec![GracefulEvictionTask {
            from_cluster: "m1".to_owned(),
            purge_mode: Some(PurgeMode::Gracefully),
            replicas: Some(2),
            reason: "TaintUntolerated".to_owned(),
            producer: "TaintManager".to_owned(),
            preserved_label_state: preserved,
            ..GracefulEvictionTask::default()
        }]
    );
    // A cluster not listed: nothing happens.
    assert!(!evict(
        &mut spec,
        "m1",
        PurgeMode::Gracefully,
        BTreeMap::new()
    ));
    // No replicas: the task says none; an existing task is not duplicated.
    spec.clusters.push(target("m1", 0));
    assert!(evict(&mut spec, "m2", PurgeMode::Directly, BTreeMap::new()));
    assert_eq!(spec.graceful_eviction_tasks[1].replicas, None);
    assert!(evict(
        &mut spec,
        "m1",
        PurgeMode::Gracefully,
        BTreeMap::new()
    ));
    assert_eq!(spec.graceful_eviction_tasks.len(), 2);
    assert!(spec.clusters.is_empty());
}
