//! Unit tests of the cluster status controller's pure steps.

use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{ResourceModel, ResourceModelRange};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use kube::api::ApiResource;
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::time::Instant;

use super::build::{
    Probe, Thresholds, api_enablements, api_enablements_condition, node_summary, pod_requests,
    ready_condition, resource_summary,
};
use crate::discovery::{Discovered, ServedResource};

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn probe_results_map_to_karmada_ready_conditions() {
    let offline = ready_condition(Probe::Offline);
    assert_eq!(
        (offline.status.as_str(), offline.reason.as_str()),
        ("False", "ClusterNotReachable")
    );
    assert_eq!(offline.message, "cluster is not reachable");
    let unhealthy = ready_condition(Probe::Unhealthy);
    assert_eq!(
        (unhealthy.status.as_str(), unhealthy.reason.as_str()),
        ("False", "ClusterNotReady")
    );
    let healthy = ready_condition(Probe::Healthy);
    assert_eq!(
        (healthy.status.as_str(), healthy.reason.as_str()),
        ("True", "ClusterReady")
    );
}

#[test]
fn flips_wait_for_the_threshold_but_first_observations_do_not() {
    let thresholds = Thresholds::default();
    let start = Instant::now();
    let threshold = 30 * SECOND;
    let ready = ready_condition(Probe::Healthy);
    let down = ready_condition(Probe::Offline);
    // First observation: used as is.
    assert_eq!(
        thresholds
            .adjust("m1", ready.clone(), None, start, threshold, threshold)
            .status,
        "True"
    );
    // Going down: held back until stable for the failure threshold.
    let held = thresholds.adjust(
        "m1",
        down.clone(),
        Some(&ready),
        start + SECOND,
        threshold,
        threshold,
    );
    assert_eq!(held.status, "True");
    let held = thresholds.adjust(
        "m1",
        down.clone(),
        Some(&ready),
        start + 20 * SECOND,
        threshold,
        threshold,
    );
    assert_eq!(held.status, "True");
    let flipped = thresholds.adjust(
        "m1",
        down.clone(),
        Some(&ready),
        start + 32 * SECOND,
        threshold,
        threshold,
    );
    assert_eq!(flipped.status, "False");
    // A blip back up restarts the clock.
    let held = thresholds.adjust(
        "m1",
        ready.clone(),
        Some(&down),
        start + 33 * SECOND,
        threshold,
        threshold,
    );
    assert_eq!(held.status, "False");
    // No stored condition: the observation wins.
    let fresh = thresholds.adjust(
        "m1",
        ready.clone(),
        None,
        start + 34 * SECOND,
        threshold,
        threshold,
    );
    assert_eq!(fresh.status, "True");
}

fn mk_served(api_version: &str, kind: &str, plural: &str) -> ServedResource {
    let (group, version) = crate::objects::split_api_version(api_version);
    ServedResource {
        resource: ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
        },
        namespaced: true,
        verbs: vec![],
        preferred: true,
        has_status: false,
    }
}

#[test]
fn api_enablements_are_sorted_and_classified() {
    let found = Discovered {
        resources: vec![
            mk_served("v1", "Pod", "pods"),
            mk_served("apps/v1", "Deployment", "deployments"),
            mk_served("v1", "ConfigMap", "configmaps"),
        ],
        failed: vec![],
    };
    let list = api_enablements(&found);
    assert_eq!(
        serde_json::to_value(&list).unwrap(),
        json!([
            {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
            {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}, {"name": "pods", "kind": "Pod"}]}
        ])
    );
    assert_eq!(api_enablements_condition(&list, false).reason, "Complete");
    let partial = api_enablements_condition(&list, true);
    assert_eq!(
        partial.message,
        "might collect partial APIEnablements(2) from the cluster"
    );
    assert_eq!(api_enablements_condition(&[], false).reason, "Empty");
}

fn mk_node(name: &str, cpu: &str, pods: &str, ready: bool) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods},
                   "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}
    }))
    .unwrap()
}

fn mk_pod(node: Option<&str>, phase: &str, cpu: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                 "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]},
        "status": {"phase": phase}
    }))
    .unwrap()
}

#[test]
fn summaries_count_nodes_and_split_pods_by_placement() {
    let nodes = vec![
        mk_node("n1", "4", "110", true),
        mk_node("n2", "4", "110", false),
    ];
    let summary = node_summary(&nodes);
    assert_eq!((summary.total_num, summary.ready_num), (2, 1));

    let requests = pod_requests(&mk_pod(None, "Pending", "500m"));
    assert_eq!(
        requests["cpu"].to_string(),
        "2",
        "init containers count as an element-wise maximum"
    );
    assert_eq!(requests["memory"].to_string(), "1Gi");

    let pods = vec![
        mk_pod(Some("n1"), "Running", "3"),
        mk_pod(Some("n1"), "Succeeded", "3"),
        mk_pod(None, "Pending", "1"),
    ];
    let resources = resource_summary(&nodes, &pods, &[]);
    let q = |list: &flotilla_api::cluster::v1alpha1::ResourceList, key: &str| list[key].0.clone();
    assert_eq!(q(&resources.allocatable, "cpu"), "8");
    assert_eq!(q(&resources.allocatable, "pods"), "220");
    assert_eq!(q(&resources.allocated, "cpu"), "3");
    assert_eq!(q(&resources.allocated, "pods"), "1");
    assert_eq!(q(&resources.allocating, "cpu"), "2");
    assert_eq!(q(&resources.allocating, "pods"), "1");
    assert!(resources.allocatable_modelings.is_empty());
}

#[test]
fn nodes_are_graded_by_free_resources() {
    let model = |grade: u32, min: &str, max: &str| ResourceModel {
        grade,
        ranges: vec![ResourceModelRange {
            name: "cpu".into(),
            min: K8sQuantity(min.into()),
            max: K8sQuantity(max.into()),
        }],
    };
    let models = vec![
        model(0, "0", "1"),
        model(1, "1", "2"),
        model(2, "2", "4"),
        model(3, "4", "8"),
    ];
    let nodes = vec![
        mk_node("n1", "4", "110", true),
        mk_node("n2", "4", "110", true),
    ];
    let pods = vec![mk_pod(Some("n1"), "Running", "3")];
    let resources = resource_summary(&nodes, &pods, &models);
    let counts: Vec<(u32, i64)> = resources
        .allocatable_modelings
        .iter()
        .map(|m| (m.grade, m.count))
        .collect();
    assert_eq!(counts, vec![(0, 0), (1, 1), (2, 0), (3, 1)]);
}
