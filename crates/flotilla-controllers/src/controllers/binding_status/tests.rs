//! Unit tests of aggregated status items and FullyApplied.

use std::collections::BTreeSet;

use flotilla_api::work::v1alpha1::{
    Manifest, ManifestStatus, ResourceIdentifier, Work, WorkSpec, WorkStatus, WorkloadTemplate,
};
use flotilla_api::work::v1alpha2::{ObjectReference, ResourceHealth};
use flotilla_core::conditions::new_condition;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::build::{aggregated_items, fully_applied, reports_pending};

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

#[test]
fn aggregation_waits_for_young_works_first_reports_only() {
    let now: jiff::Timestamp = "2026-11-25T08:00:10Z".parse().unwrap();
    let patience = std::time::Duration::from_secs(3);
    let created = |mut work: Work, at: &str| {
        work.metadata.creation_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at.parse().unwrap()),
        );
        work
    };
    let expected: BTreeSet<String> = ["member1", "member2"].map(String::from).into();
    let reported = created(
        mk_work(
            "member1",
            Some(("True", "ok")),
            Some(json!({"readyReplicas": 1})),
        ),
        "2026-11-25T08:00:09Z",
    );
    let pending = |works: &[Work], scheduled: Option<&str>| {
        let refs: Vec<&Work> = works.iter().collect();
        reports_pending(
            &refs,
            &expected,
            scheduled.map(|s| s.parse().unwrap()),
            now,
            patience,
        )
    };
    let young = "2026-11-25T08:00:09Z";
    let old = "2026-11-25T08:00:01Z";
    // A young Work not applied yet, or applied without a manifest status yet: wait.
    let unapplied = created(mk_work("member2", None, None), young);
    assert!(pending(&[reported.clone(), unapplied], None));
    let unreflected = created(mk_work("member2", Some(("True", "ok")), None), young);
    assert!(pending(&[reported.clone(), unreflected], None));
    // A Work that failed to apply has reported.
    let failed = created(mk_work("member2", Some(("False", "conflict")), None), young);
    assert!(!pending(&[reported.clone(), failed], None));
    // An old silent Work no longer holds the binding back.
    let silent = created(mk_work("member2", None, None), old);
    assert!(!pending(&[reported.clone(), silent], None));
    // A missing Work: wait shortly after the schedule only.
    assert!(pending(std::slice::from_ref(&reported), Some(young)));
    assert!(!pending(std::slice::from_ref(&reported), Some(old)));
    // Every Work reported.
    let both = created(
        mk_work(
            "member2",
            Some(("True", "ok")),
            Some(json!({"readyReplicas": 1})),
        ),
        young,
    );
    assert!(!pending(&[reported, both], None));
}
