//! Unit tests of the binding controller's pure steps.

use flotilla_api::policy::v1alpha1::{
    ConflictResolution, Placement, PurgeMode, ReplicaSchedulingStrategy, ReplicaSchedulingType,
    SuspendClusters, Suspension as PolicySuspension,
};
use flotilla_api::work::v1alpha2::{
    BindingSnapshot, GracefulEvictionTask, ResourceBindingSpec, Suspension, TargetCluster,
};
use flotilla_core::overrides::AppliedOverrides;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::build::{
    BindingInfo, Target, build_work, conflict_resolution, expected_clusters, job_completions,
    suspend_dispatching, targets,
};

fn mk_target(name: &str, replicas: i32) -> TargetCluster {
    TargetCluster {
        name: name.into(),
        replicas,
        ..TargetCluster::default()
    }
}

fn mk_divided(replicas: i32, clusters: Vec<TargetCluster>) -> ResourceBindingSpec {
    ResourceBindingSpec {
        replicas,
        clusters,
        placement: Some(Placement {
            replica_scheduling: Some(ReplicaSchedulingStrategy {
                replica_scheduling_type: ReplicaSchedulingType::Divided,
                ..ReplicaSchedulingStrategy::default()
            }),
            ..Placement::default()
        }),
        ..ResourceBindingSpec::default()
    }
}

fn mk_template() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "uid": "tpl-uid", "generation": 4,
                     "resourceVersion": "11",
                     "labels": {"app": "nginx", "propagationpolicy.karmada.io/permanent-id": "pp-id"},
                     "annotations": {"propagationpolicy.karmada.io/name": "pp1",
                                     "propagationpolicy.karmada.io/namespace": "default"}},
        "spec": {"replicas": 3}
    })
}

#[test]
fn targets_append_required_by_clusters_once() {
    let mut spec = mk_divided(3, vec![mk_target("m1", 2), mk_target("m2", 1)]);
    spec.required_by = vec![BindingSnapshot {
        namespace: "default".into(),
        name: "other".into(),
        clusters: vec![mk_target("m2", 5), mk_target("m3", 4)],
    }];
    assert_eq!(
        targets(&spec),
        vec![
            Target {
                cluster: "m1".into(),
                replicas: 2
            },
            Target {
                cluster: "m2".into(),
                replicas: 1
            },
            Target {
                cluster: "m3".into(),
                replicas: 4
            },
        ]
    );
}

#[test]
fn expected_clusters_include_gracefully_evicted_ones_only() {
    let mut spec = mk_divided(1, vec![mk_target("m1", 1)]);
    spec.graceful_eviction_tasks = vec![
        GracefulEvictionTask {
            from_cluster: "m2".into(),
            purge_mode: Some(PurgeMode::Gracefully),
            reason: "TaintUntolerated".into(),
            producer: "TaintManager".into(),
            ..GracefulEvictionTask::default()
        },
        GracefulEvictionTask {
            from_cluster: "m3".into(),
            purge_mode: Some(PurgeMode::Directly),
            reason: "TaintUntolerated".into(),
            producer: "TaintManager".into(),
            ..GracefulEvictionTask::default()
        },
    ];
    let expected: Vec<String> = expected_clusters(&spec).into_iter().collect();
    assert_eq!(expected, vec!["m1".to_owned(), "m2".to_owned()]);
}

#[test]
fn job_completions_are_divided_by_webster_over_replicas() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": ""},
        "spec": {"parallelism": 3, "completions": 10}});
    let spec = mk_divided(3, vec![mk_target("a", 2), mk_target("b", 1)]);
    let got = job_completions(&job, &spec, &targets(&spec)).unwrap();
    assert_eq!(got.get("a"), Some(&7));
    assert_eq!(got.get("b"), Some(&3));
    let mut duplicated = spec.clone();
    duplicated.placement = None;
    assert_eq!(
        job_completions(&job, &duplicated, &targets(&duplicated)),
        None
    );
    assert_eq!(
        job_completions(&mk_template(), &spec, &targets(&spec)),
        None
    );
}

#[test]
fn template_conflict_annotation_wins_when_valid() {
    let mut spec = ResourceBindingSpec::default();
    assert_eq!(conflict_resolution(&mk_template(), &spec), "abort");
    spec.conflict_resolution = ConflictResolution::Overwrite;
    assert_eq!(conflict_resolution(&mk_template(), &spec), "overwrite");
    let mut template = mk_template();
    template["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] = json!("abort");
    assert_eq!(conflict_resolution(&template, &spec), "abort");
    template["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] = json!("bogus");
    assert_eq!(conflict_resolution(&template, &spec), "overwrite");
}

#[test]
fn dispatching_is_suspended_globally_or_per_cluster() {
    let mut spec = ResourceBindingSpec::default();
    assert!(!suspend_dispatching(&spec, "m1"));
    spec.suspension = Some(Suspension {
        policy: PolicySuspension {
            dispatching_on_clusters: Some(SuspendClusters {
                cluster_names: vec!["m2".into()],
            }),
            ..PolicySuspension::default()
        },
        scheduling: None,
    });
    assert!(!suspend_dispatching(&spec, "m1"));
    assert!(suspend_dispatching(&spec, "m2"));
    spec.suspension = Some(Suspension {
        policy: PolicySuspension {
            dispatching: Some(true),
            ..PolicySuspension::default()
        },
        scheduling: None,
    });
    assert!(suspend_dispatching(&spec, "m1"));
}

#[test]
fn work_is_built_from_binding_with_karmada_names_labels_and_annotations() {
    let mut spec = mk_divided(3, vec![mk_target("member1", 2)]);
    spec.preserve_resources_on_deletion = Some(true);
    let info = BindingInfo {
        permanent_id: ("resourcebinding.karmada.io/permanent-id", "rb-id"),
        name_annotations: [
            (
                "resourcebinding.karmada.io/namespace".to_owned(),
                "default".to_owned(),
            ),
            (
                "resourcebinding.karmada.io/name".to_owned(),
                "nginx-deployment".to_owned(),
            ),
        ]
        .into(),
        spec: &spec,
        targets: 1,
    };
    let mut revised = mk_template();
    revised["spec"]["replicas"] = json!(2);
    let work = build_work(
        &info,
        &mk_template(),
        "member1",
        revised,
        &AppliedOverrides::default(),
    )
    .unwrap();
    assert_eq!(work.namespace, "karmada-es-member1");
    assert_eq!(work.name, "nginx-687f7fb96f");
    assert_eq!(
        serde_json::to_value(&work.labels).unwrap(),
        json!({"resourcebinding.karmada.io/permanent-id": "rb-id"})
    );
    assert_eq!(
        serde_json::to_value(&work.annotations).unwrap(),
        json!({
            "resourcebinding.karmada.io/namespace": "default",
            "resourcebinding.karmada.io/name": "nginx-deployment",
            "work.karmada.io/conflict-resolution": "abort"
        })
    );
    assert!(work.preserve_resources_on_deletion);
    assert!(!work.suspend_dispatching);
    let manifest = &work.manifest;
    assert_eq!(manifest["spec"]["replicas"], json!(2));
    assert_eq!(
        manifest["metadata"]["labels"],
        json!({
            "app": "nginx",
            "propagationpolicy.karmada.io/permanent-id": "pp-id",
            "resourcebinding.karmada.io/permanent-id": "rb-id",
            "karmada.io/managed": "true"
        })
    );
    assert_eq!(
        manifest["metadata"]["annotations"],
        json!({
            "propagationpolicy.karmada.io/name": "pp1",
            "propagationpolicy.karmada.io/namespace": "default",
            "resourcetemplate.karmada.io/generation": "4",
            "resourcebinding.karmada.io/namespace": "default",
            "resourcebinding.karmada.io/name": "nginx-deployment",
            "resourcetemplate.karmada.io/uid": "tpl-uid",
            "work.karmada.io/name": "nginx-687f7fb96f",
            "work.karmada.io/namespace": "karmada-es-member1",
            "work.karmada.io/conflict-resolution": "abort"
        })
    );
    assert!(manifest["metadata"].get("uid").is_none());
    assert!(manifest["metadata"].get("resourceVersion").is_none());
}
