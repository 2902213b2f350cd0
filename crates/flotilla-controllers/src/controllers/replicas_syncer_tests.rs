use flotilla_api::work::v1alpha2::{
    AggregatedStatusItem, ResourceBinding, ResourceBindingSpec, ResourceBindingStatus,
    TargetCluster,
};
use k8s_openapi::api::apps::v1::Deployment;
use serde_json::json;

use super::{Step, relevant, step};
use crate::runtime::Change;

fn deployment(labelled: bool, spec: i32, status: i32) -> Deployment {
    let labels = if labelled {
        json!({"resourcetemplate.karmada.io/retain-replicas": "true"})
    } else {
        json!({})
    };
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "ns", "labels": labels},
        "spec": {"replicas": spec, "selector": {}, "template": {}},
        "status": {"replicas": status}
    }))
    .unwrap_or_default()
}

/// A binding of `replicas` over members with these collected status replicas, scheduled (generation observed).
fn binding(kind: &str, replicas: i32, members: &[i64]) -> ResourceBinding {
    let spec: ResourceBindingSpec = serde_json::from_value(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "web"},
        "replicas": replicas,
        "placement": {"replicaScheduling": {"replicaSchedulingType": kind}}
    }))
    .unwrap_or_default();
    let mut binding = ResourceBinding::new("web-deployment", spec);
    binding.metadata.generation = Some(3);
    binding.spec.clusters = (0..members.len())
        .map(|i| TargetCluster {
            name: format!("member{i}"),
            replicas: 1,
            components: Vec::new(),
        })
        .collect();
    binding.status = Some(ResourceBindingStatus {
        scheduler_observed_generation: 3,
        aggregated_status: members
            .iter()
            .enumerate()
            .map(|(i, r)| AggregatedStatusItem {
                cluster_name: format!("member{i}"),
                status: Some(json!({"replicas": r})),
                applied: true,
                applied_message: String::new(),
                health: None,
            })
            .collect(),
        ..Default::default()
    });
    binding
}

#[test]
fn divided_templates_take_the_members_total() {
    // Propagated 2 (1 each); each member's HPA keeps 3.
    let template = deployment(true, 2, 6);
    assert_eq!(
        step(&template, &binding("Divided", 2, &[3, 3])),
        Step::Set(6)
    );
}

#[test]
fn duplicated_templates_and_agreeing_ones_are_left_alone() {
    let template = deployment(true, 2, 6);
    assert_eq!(
        step(&template, &binding("Duplicated", 2, &[3, 3])),
        Step::Nothing
    );
    let template = deployment(true, 6, 6);
    assert_eq!(
        step(&template, &binding("Divided", 6, &[3, 3])),
        Step::Nothing
    );
}

#[test]
fn waits_until_the_last_change_is_collected() {
    let template = deployment(true, 4, 6);
    // The user's scale to 4 has not reached the binding.
    assert_eq!(step(&template, &binding("Divided", 2, &[3, 3])), Step::Wait);
    // The scheduler has not placed it.
    let mut unscheduled = binding("Divided", 4, &[3, 3]);
    unscheduled.metadata.generation = Some(4);
    assert_eq!(step(&template, &unscheduled), Step::Wait);
    // A member has not reported.
    let mut missing = binding("Divided", 4, &[3, 3]);
    if let Some(status) = missing.status.as_mut() {
        status.aggregated_status.pop();
    }
    assert_eq!(step(&template, &missing), Step::Wait);
    // A member reports no replicas yet.
    assert_eq!(step(&template, &binding("Divided", 4, &[3, 0])), Step::Wait);
    // The members' total (7) has not reached the template's status (6).
    assert_eq!(step(&template, &binding("Divided", 4, &[3, 4])), Step::Wait);
}

#[test]
fn only_labelled_replica_changes_are_relevant() {
    let (old, new) = (deployment(true, 2, 2), deployment(true, 2, 6));
    assert!(relevant(&Change::Updated {
        old: &old.into(),
        new: &new.into()
    }));
    let (old, new) = (deployment(false, 2, 6), deployment(true, 2, 6));
    assert!(relevant(&Change::Updated {
        old: &old.into(),
        new: &new.into()
    }));
    let (old, new) = (deployment(false, 2, 2), deployment(false, 2, 6));
    assert!(!relevant(&Change::Updated {
        old: &old.into(),
        new: &new.into()
    }));
    let same = deployment(true, 2, 6);
    assert!(!relevant(&Change::Updated {
        old: &same.clone().into(),
        new: &same.into()
    }));
    assert!(!relevant(&Change::Added(&deployment(true, 2, 6).into())));
}
