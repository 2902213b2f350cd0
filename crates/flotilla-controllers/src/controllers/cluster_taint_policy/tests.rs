use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSpec, ClusterStatus};
use flotilla_api::policy::v1alpha1::{
    ClusterAffinity, ClusterTaintPolicy, ClusterTaintPolicySpec, MatchCondition, PolicyTaint,
};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use super::build::{conditions_match, policy_taints, taints_message};

fn condition(type_: &str, status: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: "R".to_owned(),
        message: String::new(),
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }
}

fn wanted(type_: &str, operator: &str, values: &[&str]) -> MatchCondition {
    MatchCondition {
        condition_type: type_.to_owned(),
        operator: operator.to_owned(),
        status_values: values.iter().map(|&v| v.to_owned()).collect(),
    }
}

fn cluster(name: &str, conditions: Vec<Condition>, taints: Vec<Taint>) -> Cluster {
    let mut c = Cluster::new(
        name,
        ClusterSpec {
            taints,
            ..ClusterSpec::default()
        },
    );
    c.status = Some(ClusterStatus {
        conditions,
        ..ClusterStatus::default()
    });
    c
}

fn policy(
    name: &str,
    created: i64,
    add: Vec<MatchCondition>,
    remove: Vec<MatchCondition>,
    taints: &[(&str, &str)],
) -> ClusterTaintPolicy {
    let mut p = ClusterTaintPolicy::new(
        name,
        ClusterTaintPolicySpec {
            target_clusters: None,
            add_on_conditions: add,
            remove_on_conditions: remove,
            taints: taints
                .iter()
                .map(|&(key, effect)| PolicyTaint {
                    key: key.to_owned(),
                    effect: effect.to_owned(),
                    value: String::new(),
                })
                .collect(),
        },
    );
    p.metadata.creation_timestamp = Some(Time(
        Timestamp::from_second(created).expect("a valid timestamp"),
    ));
    p
}

fn keys(taints: &[Taint]) -> Vec<String> {
    taints
        .iter()
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect()
}

#[test]
fn condition_matching() {
    let conds = [condition("Ready", "False"), condition("Lab", "True")];
    assert!(conditions_match(
        &conds,
        &[wanted("Ready", "In", &["False", "Unknown"])]
    ));
    assert!(!conditions_match(
        &conds,
        &[wanted("Ready", "In", &["True"])]
    ));
    assert!(conditions_match(
        &conds,
        &[wanted("Ready", "NotIn", &["True"])]
    ));
    assert!(!conditions_match(
        &conds,
        &[wanted("Ready", "NotIn", &["False"])]
    ));
    // Every entry must match.
    assert!(!conditions_match(
        &conds,
        &[
            wanted("Ready", "In", &["False"]),
            wanted("Lab", "In", &["False"])
        ]
    ));
    assert!(conditions_match(
        &conds,
        &[
            wanted("Ready", "In", &["False"]),
            wanted("Lab", "In", &["True"])
        ]
    ));
    // A missing condition, an empty list and an unknown operator never match.
    assert!(!conditions_match(
        &conds,
        &[wanted("Absent", "NotIn", &["True"])]
    ));
    assert!(!conditions_match(&conds, &[]));
    assert!(!conditions_match(
        &conds,
        &[wanted("Ready", "Exists", &["False"])]
    ));
}

#[test]
fn adds_then_removes_by_key_and_effect() {
    let now = Timestamp::from_second(1_000).expect("a valid timestamp");
    let add = policy(
        "add",
        1,
        vec![wanted("Ready", "In", &["False"])],
        vec![wanted("Ready", "In", &["True"])],
        &[("cluster.karmada.io/not-ready", "NoExecute")],
    );
    let existing = Taint {
        key: "cluster.karmada.io/not-ready".to_owned(),
        effect: "NoSchedule".to_owned(),
        time_added: None,
        value: None,
    };
    let down = cluster(
        "a",
        vec![condition("Ready", "False")],
        vec![existing.clone()],
    );
    let taints = policy_taints(&down, &[&add], now);
    assert_eq!(
        keys(&taints),
        [
            "cluster.karmada.io/not-ready:NoSchedule",
            "cluster.karmada.io/not-ready:NoExecute"
        ]
    );
    assert_eq!(taints[1].time_added, Some(Time(now)));
    // Already present: kept as it is (its timeAdded too).
    let later = Timestamp::from_second(2_000).expect("a valid timestamp");
    let tainted = cluster("a", vec![condition("Ready", "False")], taints.clone());
    assert_eq!(policy_taints(&tainted, &[&add], later), taints);
    // Recovered: only the policy's taint goes.
    let up = cluster("a", vec![condition("Ready", "True")], taints);
    assert_eq!(policy_taints(&up, &[&add], later), vec![existing]);
}

#[test]
fn policies_apply_in_creation_order_and_only_to_their_targets() {
    let now = Timestamp::from_second(1_000).expect("a valid timestamp");
    let lab = [condition("Lab", "True")];
    let adder = policy(
        "adder",
        2,
        vec![wanted("Lab", "In", &["True"])],
        vec![],
        &[("k", "NoExecute")],
    );
    let remover = policy(
        "remover",
        1,
        vec![],
        vec![wanted("Lab", "In", &["True"])],
        &[("k", "NoExecute")],
    );
    // The remover is older, so it runs first and the adder's taint stays.
    let c = cluster("a", lab.to_vec(), vec![]);
    assert_eq!(
        keys(&policy_taints(&c, &[&adder, &remover], now)),
        ["k:NoExecute"]
    );
    let mut newer_remover = remover.clone();
    newer_remover.metadata.creation_timestamp =
        Some(Time(Timestamp::from_second(3).expect("a valid timestamp")));
    assert!(policy_taints(&c, &[&adder, &newer_remover], now).is_empty());
    // A policy targeting other clusters leaves this one alone.
    let mut elsewhere = adder.clone();
    elsewhere.spec.target_clusters = Some(ClusterAffinity {
        cluster_names: vec!["b".to_owned()],
        ..ClusterAffinity::default()
    });
    assert!(policy_taints(&c, &[&elsewhere], now).is_empty());
}

#[test]
fn taints_are_described_as_karmada_does() {
    assert_eq!(taints_message(&[]), "cluster now does not have taints");
    let taints = [
        Taint {
            key: "a".to_owned(),
            effect: "NoExecute".to_owned(),
            time_added: None,
            value: Some("v".to_owned()),
        },
        Taint {
            key: "b".to_owned(),
            effect: "NoSchedule".to_owned(),
            time_added: None,
            value: None,
        },
    ];
    assert_eq!(
        taints_message(&taints),
        "{Key:a,Value:v,Effect:NoExecute},{Key:b,Effect:NoSchedule}"
    );
}
