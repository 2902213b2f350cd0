//! Unit tests of the NoSchedule taints that follow the Ready condition.

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use pretty_assertions::assert_eq;

use super::build::{describe_taints, desired_taints, stamp_no_execute_taints};

fn mk_taint(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        effect: effect.into(),
        ..Taint::default()
    }
}

fn keys(list: &[Taint]) -> Vec<String> {
    list.iter()
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect()
}

#[test]
fn ready_condition_drives_no_schedule_taints() {
    let now = Timestamp::UNIX_EPOCH;
    let user = mk_taint("dedicated", "NoSchedule");

    let fresh = desired_taints(std::slice::from_ref(&user), None, now).unwrap();
    assert_eq!(
        keys(&fresh),
        [
            "dedicated:NoSchedule",
            "cluster.karmada.io/not-ready:NoSchedule"
        ]
    );
    assert!(fresh[1].time_added.is_some());

    let unreachable = vec![
        user.clone(),
        mk_taint("cluster.karmada.io/unreachable", "NoSchedule"),
    ];
    let not_ready = desired_taints(&unreachable, Some("False"), now).unwrap();
    assert_eq!(
        keys(&not_ready),
        [
            "dedicated:NoSchedule",
            "cluster.karmada.io/not-ready:NoSchedule"
        ]
    );

    let unknown = desired_taints(&not_ready, Some("Unknown"), now).unwrap();
    assert_eq!(
        keys(&unknown),
        [
            "dedicated:NoSchedule",
            "cluster.karmada.io/unreachable:NoSchedule"
        ]
    );

    let ready = desired_taints(&unknown, Some("True"), now).unwrap();
    assert_eq!(keys(&ready), ["dedicated:NoSchedule"]);
    assert_eq!(
        desired_taints(&ready, Some("True"), now),
        None,
        "no change, no update"
    );
}

#[test]
fn taints_match_by_key_and_effect() {
    let now = Timestamp::UNIX_EPOCH;
    let no_execute = vec![mk_taint("cluster.karmada.io/not-ready", "NoExecute")];
    let out = desired_taints(&no_execute, Some("True"), now);
    assert_eq!(out, None, "NoExecute taints are not this controller's");
    let out = desired_taints(&no_execute, Some("False"), now).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        describe_taints(&out),
        "[cluster.karmada.io/not-ready:NoExecute, cluster.karmada.io/not-ready:NoSchedule]"
    );
}

#[test]
fn default_models_have_nine_grades_with_karmada_bounds() {
    use super::build::{default_resource_models, normalise_resource_models};
    let mut models = default_resource_models();
    assert_eq!(models.len(), 9);
    let bounds = |grade: usize| {
        models[grade]
            .ranges
            .iter()
            .map(|r| (r.name.clone(), r.min.0.clone(), r.max.0.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bounds(0),
        [
            ("cpu".into(), "0".into(), "1".into()),
            ("memory".into(), "0".into(), "4Gi".into())
        ]
    );
    assert_eq!(
        bounds(2),
        [
            ("cpu".into(), "2".into(), "4".into()),
            ("memory".into(), "16Gi".into(), "32Gi".into())
        ]
    );
    assert_eq!(
        bounds(7),
        [
            ("cpu".into(), "64".into(), "128".into()),
            ("memory".into(), "512Gi".into(), "1Ti".into())
        ]
    );
    assert_eq!(bounds(8)[0].1, "128");
    assert_eq!(bounds(8)[1].2, "9223372036854775807");
    assert_eq!(bounds(8)[1].1, "1Ti", "canonical, as Karmada stores it");
    assert!(
        !normalise_resource_models(&mut models),
        "defaults are already normal"
    );
    models.swap(0, 8);
    models[0].ranges[0].min.0 = "5".into();
    assert!(normalise_resource_models(&mut models));
    assert_eq!(models[0].grade, 0);
    assert_eq!(models[8].ranges[0].max.0, "9223372036854775807");
}

#[test]
fn no_execute_taints_without_time_added_are_stamped_once() {
    let earlier = Timestamp::UNIX_EPOCH;
    let now = Timestamp::from_second(1_000).unwrap();
    let mut stamped = mk_taint("fail-test", "NoExecute");
    stamped.time_added = Some(Time(earlier));
    let mut list = vec![
        mk_taint("not-ready", "NoExecute"),
        mk_taint("dedicated", "NoSchedule"),
        stamped,
    ];

    assert!(stamp_no_execute_taints(&mut list, now));
    let times: Vec<Option<Timestamp>> = list
        .iter()
        .map(|t| t.time_added.as_ref().map(|t| t.0))
        .collect();
    // Only the unstamped NoExecute taint gets `now`; a NoSchedule taint and an existing time are left alone.
    assert_eq!(times, [Some(now), None, Some(earlier)]);
    assert!(!stamp_no_execute_taints(
        &mut list,
        Timestamp::from_second(2_000).unwrap()
    ));
    assert_eq!(list[0].time_added.as_ref().map(|t| t.0), Some(now));
}
