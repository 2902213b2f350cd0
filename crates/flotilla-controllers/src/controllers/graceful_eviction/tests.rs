use std::time::Duration;

use flotilla_api::work::v1alpha2::{
    AggregatedStatusItem, GracefulEvictionTask, ResourceBindingSpec, ResourceBindingStatus,
    ResourceHealth, TargetCluster,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::build::{assess, next_check};

const TIMEOUT: Duration = Duration::from_secs(600);

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).expect("a valid timestamp")
}

fn task(cluster: &str, created: Option<i64>) -> GracefulEvictionTask {
    GracefulEvictionTask {
        from_cluster: cluster.to_owned(),
        reason: "TaintUntolerated".to_owned(),
        producer: "TaintManager".to_owned(),
        creation_timestamp: created.map(|s| Time(at(s))),
        ..GracefulEvictionTask::default()
    }
}

fn spec(tasks: Vec<GracefulEvictionTask>) -> ResourceBindingSpec {
    ResourceBindingSpec {
        clusters: vec![TargetCluster {
            name: "m2".to_owned(),
            replicas: 2,
            ..TargetCluster::default()
        }],
        graceful_eviction_tasks: tasks,
        ..ResourceBindingSpec::default()
    }
}

fn status(observed: i64, health: Option<ResourceHealth>) -> ResourceBindingStatus {
    ResourceBindingStatus {
        scheduler_observed_generation: observed,
        aggregated_status: health
            .map(|h| AggregatedStatusItem {
                cluster_name: "m2".to_owned(),
                health: Some(h),
                ..AggregatedStatusItem::default()
            })
            .into_iter()
            .collect(),
        ..ResourceBindingStatus::default()
    }
}

#[test]
fn a_new_task_is_stamped_and_kept() {
    let healthy = status(3, Some(ResourceHealth::Healthy));
    let kept = assess(&spec(vec![task("m1", None)]), &healthy, 3, at(50), TIMEOUT);
    assert_eq!(kept, vec![task("m1", Some(50))]);
}

#[test]
fn a_task_goes_when_the_new_placement_is_healthy_for_this_generation() {
    let s = spec(vec![task("m1", Some(0))]);
    let kept = |st: &ResourceBindingStatus, generation| assess(&s, st, generation, at(10), TIMEOUT);
    assert!(kept(&status(3, Some(ResourceHealth::Healthy)), 3).is_empty());
    // Not yet scheduled for this generation, unhealthy, or not reported: kept.
    assert_eq!(kept(&status(2, Some(ResourceHealth::Healthy)), 3).len(), 1);
    assert_eq!(
        kept(&status(3, Some(ResourceHealth::Unhealthy)), 3).len(),
        1
    );
    assert_eq!(kept(&status(3, None), 3).len(), 1);
}

#[test]
fn a_task_goes_after_its_timeout() {
    let unhealthy = status(3, Some(ResourceHealth::Unhealthy));
    let s = spec(vec![task("m1", Some(0))]);
    assert_eq!(assess(&s, &unhealthy, 3, at(600), TIMEOUT).len(), 1);
    assert!(assess(&s, &unhealthy, 3, at(601), TIMEOUT).is_empty());
    // gracePeriodSeconds wins over the flag.
    let mut short = task("m1", Some(0));
    short.grace_period_seconds = Some(30);
    assert!(assess(&spec(vec![short.clone()]), &unhealthy, 3, at(31), TIMEOUT).is_empty());
    assert_eq!(
        next_check(&[short, task("m3", Some(5))], at(10), TIMEOUT),
        Some(Duration::from_secs(20))
    );
}

#[test]
fn suppress_deletion_keeps_a_task_until_it_turns_false() {
    let healthy = status(3, Some(ResourceHealth::Healthy));
    let mut held = task("m1", Some(0));
    held.suppress_deletion = Some(true);
    assert_eq!(
        assess(&spec(vec![held.clone()]), &healthy, 3, at(10_000), TIMEOUT).len(),
        1
    );
    assert_eq!(
        next_check(std::slice::from_ref(&held), at(0), TIMEOUT),
        None
    );
    held.suppress_deletion = Some(false);
    assert!(assess(&spec(vec![held]), &status(1, None), 3, at(1), TIMEOUT).is_empty());
}
