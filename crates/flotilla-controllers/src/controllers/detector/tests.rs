//! Unit tests of the detector's pure steps: filters, claims, building and merging bindings.

use flotilla_api::names::{annotations, finalizers, labels};
use flotilla_api::policy::v1alpha1::{
    ConflictResolution, Placement, PropagationSpec, ReplicaSchedulingStrategy, ResourceSelector,
    Suspension as PolicySuspension,
};
use flotilla_api::work::v1alpha2::{ResourceBindingSpec, Suspension, TargetCluster};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ApiResource, DynamicObject};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::build::{
    ReplicaInfo, build_binding, claim_template, merge_binding, remove_claim,
    workload_affinity_groups,
};
use super::filter::{
    Claim, SkippedApis, changed_by_karmada, claim_of, namespace_skipped, template_event_passes,
    update_is_significant, watchable,
};
use crate::discovery::ServedResource;
use crate::options::Options;

fn mk_deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "uid": "uid-1", "resourceVersion": "7",
                     "labels": {"app": "nginx"}},
        "spec": {"replicas": 2}
    })
}

fn mk_pp_claim() -> Claim {
    Claim::Namespaced {
        namespace: "default".into(),
        name: "pp1".into(),
        id: "pp-id".into(),
    }
}

fn mk_spec() -> PropagationSpec {
    PropagationSpec {
        resource_selectors: vec![ResourceSelector {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "nginx".into(),
            ..ResourceSelector::default()
        }],
        placement: Placement {
            replica_scheduling: Some(ReplicaSchedulingStrategy::default()),
            ..Placement::default()
        },
        conflict_resolution: ConflictResolution::Overwrite,
        preserve_resources_on_deletion: Some(true),
        suspension: Some(PolicySuspension {
            dispatching: Some(true),
            ..PolicySuspension::default()
        }),
        ..PropagationSpec::default()
    }
}

fn mk_served(api_version: &str, kind: &str, preferred: bool, verbs: &[&str]) -> ServedResource {
    let (group, version) = crate::objects::split_api_version(api_version);
    ServedResource {
        resource: ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        },
        namespaced: true,
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        preferred,
        has_status: false,
    }
}

const ALL_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

#[test]
fn only_preferred_listable_non_karmada_resources_are_watched() {
    let none = SkippedApis::default();
    assert!(watchable(
        &mk_served("apps/v1", "Deployment", true, ALL_VERBS),
        &none
    ));
    assert!(!watchable(
        &mk_served("apps/v1beta1", "Deployment", false, ALL_VERBS),
        &none
    ));
    assert!(!watchable(
        &mk_served("apps/v1", "Deployment", true, &["get", "list"]),
        &none
    ));
    assert!(!watchable(
        &mk_served(
            "work.karmada.io/v1alpha2",
            "ResourceBinding",
            true,
            ALL_VERBS
        ),
        &none
    ));
    assert!(!watchable(
        &mk_served("v1", "Event", true, ALL_VERBS),
        &none
    ));
    assert!(!watchable(
        &mk_served("events.k8s.io/v1", "Event", true, ALL_VERBS),
        &none
    ));
    assert!(!watchable(
        &mk_served("coordination.k8s.io/v1", "Lease", true, ALL_VERBS),
        &none
    ));
    assert!(watchable(
        &mk_served("v1", "ConfigMap", true, ALL_VERBS),
        &none
    ));

    let skipped =
        SkippedApis::parse("example.io; batch/v1 ;apps/v1/deployment,StatefulSet;/v1/Secret");
    assert!(!watchable(
        &mk_served("example.io/v1", "Thing", true, ALL_VERBS),
        &skipped
    ));
    assert!(!watchable(
        &mk_served("batch/v1", "Job", true, ALL_VERBS),
        &skipped
    ));
    assert!(!watchable(
        &mk_served("apps/v1", "Deployment", true, ALL_VERBS),
        &skipped
    ));
    assert!(!watchable(
        &mk_served("apps/v1", "StatefulSet", true, ALL_VERBS),
        &skipped
    ));
    assert!(watchable(
        &mk_served("apps/v1", "DaemonSet", true, ALL_VERBS),
        &skipped
    ));
    assert!(!watchable(
        &mk_served("v1", "Secret", true, ALL_VERBS),
        &skipped
    ));
}

#[test]
fn default_skips_kube_namespaces_and_reserved_ones_only() {
    let options = Options::default();
    for ns in [
        "kube-system",
        "kube-public",
        "karmada-system",
        "karmada-cluster",
        "karmada-es-m1",
    ] {
        assert!(
            namespace_skipped(&options.skipped_propagating_namespaces, ns),
            "{ns}"
        );
    }
    for ns in ["", "default", "app", "my-kube-x"] {
        assert!(
            !namespace_skipped(&options.skipped_propagating_namespaces, ns),
            "{ns}"
        );
    }
}

#[test]
fn event_filter_drops_reserved_and_skipped_namespaces() {
    let options = Options::default();
    assert!(template_event_passes(
        &options.skipped_propagating_namespaces,
        "Deployment",
        "default",
        "nginx"
    ));
    assert!(template_event_passes(
        &options.skipped_propagating_namespaces,
        "Namespace",
        "",
        "kube-system"
    ));
    assert!(!template_event_passes(
        &options.skipped_propagating_namespaces,
        "Deployment",
        "kube-system",
        "coredns"
    ));
    assert!(!template_event_passes(
        &options.skipped_propagating_namespaces,
        "Work",
        "karmada-es-member1",
        "w"
    ));
    assert!(!template_event_passes(
        &options.skipped_propagating_namespaces,
        "Secret",
        "karmada-cluster",
        "member1"
    ));
}

fn mk_dynamic(value: Value) -> DynamicObject {
    serde_json::from_value(value).unwrap()
}

#[test]
fn status_and_bookkeeping_updates_are_not_significant() {
    let old = mk_dynamic(mk_deployment("nginx"));
    let mut status_only = mk_deployment("nginx");
    status_only["status"] = json!({"readyReplicas": 2});
    status_only["metadata"]["resourceVersion"] = json!("8");
    status_only["metadata"]["managedFields"] = json!([{"manager": "x"}]);
    assert!(!update_is_significant(&old, &mk_dynamic(status_only)));

    let mut labelled = mk_deployment("nginx");
    labelled["metadata"]["labels"]["tier"] = json!("web");
    assert!(update_is_significant(&old, &mk_dynamic(labelled)));
}

#[test]
fn lazy_flag_is_set_only_for_karmada_written_changes() {
    let old = mk_dynamic(mk_deployment("nginx"));
    let mut claimed = mk_deployment("nginx");
    claimed["metadata"]["labels"][labels::PROPAGATION_POLICY_PERMANENT_ID] = json!("id");
    claimed["metadata"]["annotations"] = json!({(annotations::PROPAGATION_POLICY_NAME): "pp1"});
    claimed["metadata"]["generation"] = json!(3);
    assert!(changed_by_karmada(&old, &mk_dynamic(claimed)));

    let mut user = mk_deployment("nginx");
    user["spec"]["replicas"] = json!(5);
    assert!(!changed_by_karmada(&old, &mk_dynamic(user)));

    let mut opt_out = mk_deployment("nginx");
    opt_out["metadata"]["labels"][labels::SKIP_AUTO_PROPAGATION] = json!("true");
    assert!(!changed_by_karmada(&old, &mk_dynamic(opt_out)));
}

#[test]
fn claims_are_read_only_when_complete() {
    let mut template = mk_deployment("nginx");
    assert_eq!(claim_of(&template), None);
    template["metadata"]["labels"][labels::PROPAGATION_POLICY_PERMANENT_ID] = json!("pp-id");
    assert_eq!(
        claim_of(&template),
        None,
        "a PP claim needs both annotations"
    );
    template["metadata"]["annotations"] = json!({
        (annotations::PROPAGATION_POLICY_NAMESPACE): "default",
        (annotations::PROPAGATION_POLICY_NAME): "pp1"
    });
    assert_eq!(claim_of(&template), Some(mk_pp_claim()));

    let mut cluster = json!({"kind": "Namespace", "metadata": {"name": "n",
        "labels": {(labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID): "cpp-id"},
        "annotations": {(annotations::CLUSTER_PROPAGATION_POLICY_NAME): "cpp1"}}});
    assert_eq!(
        claim_of(&cluster),
        Some(Claim::Cluster {
            name: "cpp1".into(),
            id: "cpp-id".into()
        })
    );
    cluster["metadata"]["labels"][labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID] = json!("");
    assert_eq!(claim_of(&cluster), None);
}

#[test]
fn pp_claim_replaces_a_cpp_claim_and_is_idempotent() {
    let mut template = mk_deployment("nginx");
    template["metadata"]["labels"][labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID] =
        json!("cpp-id");
    template["metadata"]["annotations"] =
        json!({(annotations::CLUSTER_PROPAGATION_POLICY_NAME): "cpp1"});
    assert!(claim_template(&mut template, &mk_pp_claim()));
    assert_eq!(
        template["metadata"]["labels"],
        json!({
            "app": "nginx", (labels::PROPAGATION_POLICY_PERMANENT_ID): "pp-id"
        })
    );
    assert_eq!(
        template["metadata"]["annotations"],
        json!({
            (annotations::PROPAGATION_POLICY_NAMESPACE): "default",
            (annotations::PROPAGATION_POLICY_NAME): "pp1"
        })
    );
    assert!(!claim_template(&mut template, &mk_pp_claim()));

    let cpp = Claim::Cluster {
        name: "cpp1".into(),
        id: "cpp-id".into(),
    };
    assert!(claim_template(&mut template, &cpp));
    assert!(!claim_template(&mut template, &cpp));
}

#[test]
fn claims_are_removed_only_for_the_same_policy_id() {
    let mut template = mk_deployment("nginx");
    claim_template(&mut template, &mk_pp_claim());
    let other = Claim::Namespaced {
        namespace: "default".into(),
        name: "pp1".into(),
        id: "newer".into(),
    };
    assert!(!remove_claim(&mut template, &other));
    assert!(remove_claim(&mut template, &mk_pp_claim()));
    assert_eq!(template["metadata"]["labels"], json!({"app": "nginx"}));
    assert!(template["metadata"].get("annotations").is_none());
}

#[test]
fn binding_is_built_from_template_and_policy() {
    let mut template = mk_deployment("nginx");
    claim_template(&mut template, &mk_pp_claim());
    let replicas = ReplicaInfo {
        replicas: 2,
        requirements: None,
        components: Vec::new(),
    };
    let (meta, spec) = build_binding(
        &template,
        &mk_pp_claim(),
        &mk_spec(),
        Some(replicas),
        Some(7),
        false,
    );
    assert_eq!(meta.name.as_deref(), Some("nginx-deployment"));
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert_eq!(meta.finalizers, Some(vec![finalizers::BINDING.to_owned()]));
    assert_eq!(
        serde_json::to_value(&meta.owner_references).unwrap(),
        json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx", "uid": "uid-1",
                "controller": true, "blockOwnerDeletion": true}])
    );
    assert_eq!(
        meta.labels
            .unwrap()
            .get(labels::PROPAGATION_POLICY_PERMANENT_ID)
            .map(String::as_str),
        Some("pp-id")
    );
    let spec_json = serde_json::to_value(&spec).unwrap();
    assert_eq!(
        spec_json["resource"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "namespace": "default", "name": "nginx", "uid": "uid-1", "resourceVersion": "7"})
    );
    assert_eq!(spec_json["replicas"], json!(2));
    assert_eq!(spec_json["conflictResolution"], json!("Overwrite"));
    assert_eq!(spec_json["preserveResourcesOnDeletion"], json!(true));
    assert_eq!(spec_json["suspension"], json!({"dispatching": true}));
    assert_eq!(spec_json["schedulePriority"], json!({"priority": 7}));
    assert_eq!(spec_json["schedulerName"], json!("default-scheduler"));
    assert!(spec.placement.is_some());

    let cluster = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "workloads.workload.example.io", "uid": "u2", "resourceVersion": "1"}});
    let cpp = Claim::Cluster {
        name: "cpp1".into(),
        id: "cpp-id".into(),
    };
    let (meta, spec) = build_binding(&cluster, &cpp, &mk_spec(), None, Some(7), true);
    assert_eq!(
        meta.name.as_deref(),
        Some("workloads.workload.example.io-customresourcedefinition")
    );
    assert_eq!(meta.namespace, None);
    assert_eq!(
        meta.finalizers,
        Some(vec![finalizers::CLUSTER_RESOURCE_BINDING.to_owned()])
    );
    assert_eq!(spec.resource.namespace, "");
    assert_eq!(spec.schedule_priority, None);
    assert_eq!(spec.replicas, 0);
}

#[test]
fn merge_keeps_scheduler_results_and_foreign_metadata() {
    let mut template = mk_deployment("nginx");
    claim_template(&mut template, &mk_pp_claim());
    let desired = build_binding(&template, &mk_pp_claim(), &mk_spec(), None, None, false);

    let mut meta = ObjectMeta {
        labels: Some(
            [
                ("keep".to_owned(), "me".to_owned()),
                (
                    labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID.to_owned(),
                    "cpp-id".to_owned(),
                ),
                (
                    labels::RESOURCE_BINDING_PERMANENT_ID.to_owned(),
                    "rb-id".to_owned(),
                ),
            ]
            .into(),
        ),
        finalizers: Some(vec!["other".to_owned()]),
        ..ObjectMeta::default()
    };
    let mut spec = ResourceBindingSpec {
        clusters: vec![TargetCluster {
            name: "member1".into(),
            replicas: 2,
            ..TargetCluster::default()
        }],
        suspension: Some(Suspension {
            scheduling: Some(true),
            ..Suspension::default()
        }),
        ..ResourceBindingSpec::default()
    };
    assert!(merge_binding(
        (&mut meta, &mut spec),
        (&desired.0, &desired.1),
        &mk_pp_claim(),
        false
    ));
    let labels_map = meta.labels.clone().unwrap();
    assert_eq!(labels_map.get("keep").map(String::as_str), Some("me"));
    assert_eq!(
        labels_map
            .get(labels::RESOURCE_BINDING_PERMANENT_ID)
            .map(String::as_str),
        Some("rb-id")
    );
    assert!(!labels_map.contains_key(labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID));
    assert_eq!(
        meta.finalizers,
        Some(vec!["other".to_owned(), finalizers::BINDING.to_owned()])
    );
    assert_eq!(
        spec.clusters.len(),
        1,
        "the scheduling result is never touched"
    );
    let suspension = spec.suspension.clone().unwrap();
    assert_eq!(suspension.scheduling, Some(true));
    assert_eq!(suspension.policy.dispatching, Some(true));
    assert_eq!(spec.resource.resource_version, "7");

    // A second merge of the same desired state changes nothing.
    assert!(!merge_binding(
        (&mut meta, &mut spec),
        (&desired.0, &desired.1),
        &mk_pp_claim(),
        false
    ));
}

#[test]
fn suspension_disappears_when_both_parts_are_empty() {
    let template = mk_deployment("nginx");
    let mut spec_without = mk_spec();
    spec_without.suspension = None;
    let desired = build_binding(&template, &mk_pp_claim(), &spec_without, None, None, false);
    let mut meta = ObjectMeta::default();
    let mut spec = ResourceBindingSpec {
        suspension: Some(Suspension {
            policy: PolicySuspension {
                dispatching: Some(true),
                ..PolicySuspension::default()
            },
            scheduling: None,
        }),
        ..ResourceBindingSpec::default()
    };
    merge_binding(
        (&mut meta, &mut spec),
        (&desired.0, &desired.1),
        &mk_pp_claim(),
        false,
    );
    assert_eq!(spec.suspension, None);
}

#[test]
fn workload_affinity_groups_come_from_the_template_labels() {
    let placement = |rule: Value| -> flotilla_api::policy::v1alpha1::Placement {
        serde_json::from_value(json!({"workloadAffinity": rule})).unwrap_or_default()
    };
    let mut template = mk_deployment("web");
    template["metadata"]["labels"] = json!({"app.group": "frontend", "tier": "web"});
    let both = placement(json!({
        "affinity": {"groupByLabelKey": "app.group"},
        "antiAffinity": {"groupByLabelKey": "tier"}
    }));
    let groups = workload_affinity_groups(&template, &both).unwrap_or_default();
    assert_eq!(groups.affinity_group, "app.group=frontend");
    assert_eq!(groups.anti_affinity_group, "tier=web");
    // A label the template lacks gives no group; no group at all gives none.
    let missing = placement(json!({"affinity": {"groupByLabelKey": "absent"}}));
    assert_eq!(workload_affinity_groups(&template, &missing), None);
    assert_eq!(
        workload_affinity_groups(&template, &Default::default()),
        None
    );
}
