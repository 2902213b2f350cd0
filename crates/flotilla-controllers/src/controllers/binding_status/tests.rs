//! Unit tests of aggregated status items and FullyApplied.

use std::collections::BTreeSet;

use flotilla_api::work::v1alpha1::{
    Manifest, ManifestStatus, ResourceIdentifier, Work, WorkSpec, WorkStatus, WorkloadTemplate,
};
use flotilla_api::work::v1alpha2::{ObjectReference, ResourceHealth};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::build::{aggregated_items, fully_applied};
use crate::conditions::new_condition;

fn mk_resource() -> ObjectReference {
    ObjectReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: "default".into(),
        name: "nginx".into(),
        ..ObjectReference::default()
    }
}

fn mk_work(
    cluster: &str,
    applied: Option<(&str, &str)>,
    status: Option<serde_json::Value>,
) -> Work {
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default"}});
    let mut work = Work::new(
        "nginx-687f7fb96f",
        WorkSpec {
            workload: WorkloadTemplate {
                manifests: vec![Manifest(manifest)],
            },
            ..WorkSpec::default()
        },
    );
    work.metadata.namespace = Some(format!("karmada-es-{cluster}"));
    let mut work_status = WorkStatus::default();
    if let Some((state, message)) = applied {
        work_status
            .conditions
            .push(new_condition("Applied", state, "r", message));
    }
    if let Some(status) = status {
        work_status.manifest_statuses.push(ManifestStatus {
            identifier: ResourceIdentifier {
                ordinal: 0,
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
                resource: String::new(),
                namespace: "default".into(),
                name: "nginx".into(),
            },
            status: Some(status),
            health: Some(ResourceHealth::Healthy),
        });
    }
    work.status = Some(work_status);
    work
}

#[test]
fn items_follow_applied_state_and_manifest_statuses() {
    let works = [
        mk_work("member2", Some(("False", "conflict!")), None),
        mk_work(
            "member1",
            Some(("True", "ok")),
            Some(json!({"readyReplicas": 2})),
        ),
        mk_work("member3", None, None),
        mk_work("member4", Some(("True", "ok")), None),
    ];
    let refs: Vec<&Work> = works.iter().collect();
    let items = aggregated_items(&refs, &mk_resource(), "default").unwrap();
    assert_eq!(
        serde_json::to_value(&items).unwrap(),
        json!([
            {"clusterName": "member1", "status": {"readyReplicas": 2}, "applied": true, "health": "Healthy"},
            {"clusterName": "member2", "appliedMessage": "conflict!", "health": "Unknown"},
            {"clusterName": "member3", "health": "Unknown"},
            {"clusterName": "member4", "applied": true, "health": "Unknown"}
        ])
    );
}

#[test]
fn works_without_the_template_are_an_error() {
    let works = [mk_work("member1", None, None)];
    let refs: Vec<&Work> = works.iter().collect();
    let mut other = mk_resource();
    other.name = "other".into();
    assert!(aggregated_items(&refs, &other, "default").is_err());
}

#[test]
fn fully_applied_needs_one_applied_item_per_expected_cluster() {
    let works = [
        mk_work("member1", Some(("True", "")), None),
        mk_work("member2", Some(("True", "")), None),
    ];
    let refs: Vec<&Work> = works.iter().collect();
    let items = aggregated_items(&refs, &mk_resource(), "default").unwrap();
    let expected = |names: &[&str]| {
        names
            .iter()
            .map(|n| (*n).to_owned())
            .collect::<BTreeSet<_>>()
    };
    let ok = fully_applied(&items, &expected(&["member1", "member2"]));
    assert_eq!(
        (ok.status.as_str(), ok.reason.as_str()),
        ("True", "FullyAppliedSuccess")
    );
    assert_eq!(
        fully_applied(&items, &expected(&["member1"])).status,
        "False"
    );
    assert_eq!(
        fully_applied(&items, &expected(&["member1", "member3"])).status,
        "False"
    );
    assert_eq!(
        fully_applied(&[], &expected(&[])).reason,
        "FullyAppliedFailed"
    );
}
