//! Fields Karmada types as plain strings keep a value this version does not know: it decodes as `Other`,
//! serialises back unchanged and equals no known value, while the known values read and write as before.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Debug;

use flotilla_api::cluster::v1alpha1::ClusterSyncMode;
use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::policy::v1alpha1::{
    ActivationPreference, ConflictResolution, DynamicWeightFactor, ImageComponent,
    OverriderOperator, PreemptionBehavior, PriorityClassSource, PropagationPolicy, PurgeMode,
    ReplicaDivisionPreference, ReplicaSchedulingType, SpreadFieldValue,
};
use flotilla_api::work::v1alpha2::ResourceHealth;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Checks one enum: every known value round-trips to its variant and spelling, and `unknown` is kept.
fn check<T>(known: &[(T, &str)], other: fn(String) -> T)
where
    T: Serialize + DeserializeOwned + Debug + PartialEq + std::fmt::Display,
{
    for (variant, wire) in known {
        assert_eq!(serde_json::to_value(variant).unwrap(), json!(wire));
        assert_eq!(&serde_json::from_value::<T>(json!(wire)).unwrap(), variant);
        assert_eq!(variant.to_string(), *wire);
    }
    for unknown in ["Future", "", "cluster ", "ADD"] {
        let decoded: T = serde_json::from_value(json!(unknown)).unwrap();
        assert_eq!(decoded, other(unknown.to_owned()));
        assert!(known.iter().all(|(variant, _)| *variant != decoded));
        assert_eq!(serde_json::to_value(&decoded).unwrap(), json!(unknown));
        assert_eq!(decoded.to_string(), unknown);
    }
    // Another type than a string is still refused, with serde's usual message.
    let error = serde_json::from_value::<T>(json!(7)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid type: integer `7`, expected a string"
    );
}

#[test]
fn every_open_enum_keeps_an_unknown_value_and_reads_the_known_ones_as_before() {
    use InterpreterOperation as Op;
    check(
        &[
            (Op::All, "*"),
            (Op::InterpretReplica, "InterpretReplica"),
            (Op::InterpretComponent, "InterpretComponent"),
            (Op::ReviseReplica, "ReviseReplica"),
            (Op::InterpretStatus, "InterpretStatus"),
            (Op::Prune, "Prune"),
            (Op::Retain, "Retain"),
            (Op::AggregateStatus, "AggregateStatus"),
            (Op::InterpretHealth, "InterpretHealth"),
            (Op::InterpretDependency, "InterpretDependency"),
        ],
        Op::Other,
    );
    check(
        &[
            (PurgeMode::Directly, "Directly"),
            (PurgeMode::Gracefully, "Gracefully"),
            (PurgeMode::Never, "Never"),
        ],
        PurgeMode::Other,
    );
    check(
        &[
            (SpreadFieldValue::Cluster, "cluster"),
            (SpreadFieldValue::Region, "region"),
            (SpreadFieldValue::Zone, "zone"),
            (SpreadFieldValue::Provider, "provider"),
        ],
        SpreadFieldValue::Other,
    );
    check(
        &[
            (ReplicaSchedulingType::Duplicated, "Duplicated"),
            (ReplicaSchedulingType::Divided, "Divided"),
        ],
        ReplicaSchedulingType::Other,
    );
    check(
        &[
            (ReplicaDivisionPreference::Aggregated, "Aggregated"),
            (ReplicaDivisionPreference::Weighted, "Weighted"),
        ],
        ReplicaDivisionPreference::Other,
    );
    check(
        &[(DynamicWeightFactor::AvailableReplicas, "AvailableReplicas")],
        DynamicWeightFactor::Other,
    );
    check(
        &[
            (PreemptionBehavior::Always, "Always"),
            (PreemptionBehavior::Never, "Never"),
        ],
        PreemptionBehavior::Other,
    );
    check(
        &[
            (ConflictResolution::Overwrite, "Overwrite"),
            (ConflictResolution::Abort, "Abort"),
        ],
        ConflictResolution::Other,
    );
    check(
        &[(ActivationPreference::Lazy, "Lazy")],
        ActivationPreference::Other,
    );
    check(
        &[
            (
                PriorityClassSource::FederatedPriorityClass,
                "FederatedPriorityClass",
            ),
            (PriorityClassSource::KubePriorityClass, "KubePriorityClass"),
            (PriorityClassSource::PodPriorityClass, "PodPriorityClass"),
        ],
        PriorityClassSource::Other,
    );
    check(
        &[
            (OverriderOperator::Add, "add"),
            (OverriderOperator::Remove, "remove"),
            (OverriderOperator::Replace, "replace"),
        ],
        OverriderOperator::Other,
    );
    check(
        &[
            (ImageComponent::Registry, "Registry"),
            (ImageComponent::Repository, "Repository"),
            (ImageComponent::Tag, "Tag"),
        ],
        ImageComponent::Other,
    );
    check(
        &[
            (ResourceHealth::Healthy, "Healthy"),
            (ResourceHealth::Unhealthy, "Unhealthy"),
            (ResourceHealth::Unknown, "Unknown"),
        ],
        ResourceHealth::Other,
    );
    check(
        &[
            (ClusterSyncMode::Push, "Push"),
            (ClusterSyncMode::Pull, "Pull"),
        ],
        ClusterSyncMode::Other,
    );
}

#[test]
fn a_policy_written_by_a_newer_karmada_decodes_and_serialises_back_unchanged() {
    let written = json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "future", "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "placement": {
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Future",
                    "weightPreference": {"dynamicWeight": "AvailableCPU"}
                },
                "spreadConstraints": [{"spreadByField": "rack", "maxGroups": 2, "minGroups": 1}]
            },
            "preemption": "Sometimes",
            "conflictResolution": "Merge",
            "activationPreference": "Eager",
            "schedulePriority": {"priorityClassSource": "NewPriorityClass", "priorityClassName": "high"},
            "failover": {"application": {
                "decisionConditions": {"tolerationSeconds": 300},
                "purgeMode": "Eventually"
            }}
        }
    });
    let policy: PropagationPolicy = serde_json::from_value(written.clone()).unwrap();
    let strategy = policy.spec.placement.replica_scheduling.as_ref().unwrap();
    assert_eq!(
        strategy.replica_division_preference,
        Some(ReplicaDivisionPreference::Other("Future".to_owned()))
    );
    assert_eq!(
        policy.spec.preemption,
        PreemptionBehavior::Other("Sometimes".to_owned())
    );
    let back = serde_json::to_value(&policy).unwrap();
    for pointer in [
        "/spec/placement/replicaScheduling/replicaDivisionPreference",
        "/spec/placement/replicaScheduling/weightPreference/dynamicWeight",
        "/spec/placement/spreadConstraints/0/spreadByField",
        "/spec/preemption",
        "/spec/conflictResolution",
        "/spec/activationPreference",
        "/spec/schedulePriority/priorityClassSource",
        "/spec/failover/application/purgeMode",
    ] {
        assert_eq!(back.pointer(pointer), written.pointer(pointer), "{pointer}");
    }
    // Read back, the object is the same.
    let again: PropagationPolicy = serde_json::from_value(back.clone()).unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), back);
    assert_eq!(
        back["spec"]["placement"]["spreadConstraints"][0]["spreadByField"],
        Value::from("rack")
    );
}
