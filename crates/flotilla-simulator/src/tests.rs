#![allow(clippy::unwrap_used, clippy::panic)]

use serde_json::{Value, json};

use super::*;

const T0: &str = "2026-01-01T00:00:00Z";
const T1: &str = "2026-01-01T00:05:00Z";

fn mk_deployment(replicas: Option<i64>, generation: i64) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "generation": generation, "uid": "u1"},
        "spec": {"selector": {"matchLabels": {"app": "nginx"}},
                 "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}},
    });
    if let Some(r) = replicas {
        d["spec"]["replicas"] = json!(r);
    }
    d
}

/// Applies the simulator's pending status (at `now`) the way the status write would.
fn settle(kind: Kind, obj: &mut Value, member: &MemberView, now: &str) -> bool {
    match pending_status(kind, obj, member, now) {
        Some(status) => {
            obj["status"] = status;
            true
        }
        None => false,
    }
}

#[test]
fn deployment_reports_every_replica_ready_and_available() {
    let mut d = mk_deployment(Some(2), 3);
    assert!(settle(Kind::Deployment, &mut d, &MemberView::default(), T0));
    let s = &d["status"];
    assert_eq!(s["observedGeneration"], 3);
    for key in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(s[key], 2, "{key}");
    }
    assert!(s.get("unavailableReplicas").is_none());
    let conds = s["conditions"].as_array().unwrap();
    assert_eq!(conds[0]["type"], "Available");
    assert_eq!(conds[0]["status"], "True");
    assert_eq!(conds[0]["reason"], "MinimumReplicasAvailable");
    assert_eq!(conds[1]["type"], "Progressing");
    assert_eq!(conds[1]["reason"], "NewReplicaSetAvailable");
    assert!(
        conds[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("ReplicaSet \"nginx-")
    );
    assert_eq!(conds[1]["lastTransitionTime"], T0);
}

#[test]
fn settled_deployment_is_not_rewritten_later() {
    let mut d = mk_deployment(Some(2), 1);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T0);
    assert_eq!(
        pending_status(Kind::Deployment, &d, &MemberView::default(), T1),
        None
    );
}

#[test]
fn deployment_scale_keeps_condition_times_and_follows_generation() {
    let mut d = mk_deployment(Some(2), 1);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T0);
    d["spec"]["replicas"] = json!(5);
    d["metadata"]["generation"] = json!(2);
    assert!(settle(Kind::Deployment, &mut d, &MemberView::default(), T1));
    assert_eq!(d["status"]["readyReplicas"], 5);
    assert_eq!(d["status"]["observedGeneration"], 2);
    assert_eq!(d["status"]["conditions"][0]["lastTransitionTime"], T0);
    assert_eq!(d["status"]["conditions"][0]["lastUpdateTime"], T0);
}

#[test]
fn deployment_template_change_moves_progressing_update_time_only() {
    let mut d = mk_deployment(Some(1), 1);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T0);
    let before = d["status"]["conditions"][1]["message"].clone();
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    d["metadata"]["generation"] = json!(2);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T1);
    let progressing = &d["status"]["conditions"][1];
    assert_ne!(progressing["message"], before);
    assert_eq!(progressing["lastUpdateTime"], T1);
    assert_eq!(progressing["lastTransitionTime"], T0);
}

#[test]
fn deployment_without_replicas_defaults_to_one_and_zero_omits_counters() {
    let mut d = mk_deployment(None, 1);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T0);
    assert_eq!(d["status"]["replicas"], 1);
    d["spec"]["replicas"] = json!(0);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T0);
    assert!(d["status"].get("replicas").is_none());
    assert!(d["status"].get("readyReplicas").is_none());
}

#[test]
fn paused_deployment_reports_progressing_unknown() {
    let mut d = mk_deployment(Some(1), 1);
    d["spec"]["paused"] = json!(true);
    settle(Kind::Deployment, &mut d, &MemberView::default(), T0);
    assert_eq!(d["status"]["conditions"][1]["status"], "Unknown");
    assert_eq!(d["status"]["conditions"][1]["reason"], "DeploymentPaused");
}

#[test]
fn stateful_set_reports_revision_and_counters() {
    let mut s = mk_deployment(Some(3), 4);
    s["kind"] = json!("StatefulSet");
    settle(Kind::StatefulSet, &mut s, &MemberView::default(), T0);
    let st = &s["status"];
    for key in [
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        assert_eq!(st[key], 3, "{key}");
    }
    assert_eq!(st["observedGeneration"], 4);
    assert_eq!(st["currentRevision"], st["updateRevision"]);
    assert_eq!(
        pending_status(Kind::StatefulSet, &s, &MemberView::default(), T1),
        None
    );
}

#[test]
fn replica_set_reports_counters() {
    let mut r = mk_deployment(Some(2), 1);
    settle(Kind::ReplicaSet, &mut r, &MemberView::default(), T0);
    assert_eq!(r["status"]["replicas"], 2);
    assert_eq!(r["status"]["fullyLabeledReplicas"], 2);
    assert_eq!(r["status"]["availableReplicas"], 2);
    assert_eq!(r["status"]["observedGeneration"], 1);
}

fn node(labels: &[(&str, &str)], taints: &[(&str, &str)]) -> NodeView {
    NodeView {
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        taints: taints
            .iter()
            .map(|(key, effect)| Taint {
                key: key.to_string(),
                value: String::new(),
                effect: effect.to_string(),
            })
            .collect(),
        ..NodeView::default()
    }
}

fn with_nodes(nodes: &[NodeView]) -> MemberView {
    MemberView {
        nodes: nodes.to_vec(),
        ..MemberView::default()
    }
}

#[test]
fn daemon_set_counts_nodes_its_selector_matches() {
    let nodes = with_nodes(&[
        node(&[("disk", "ssd")], &[]),
        node(&[("disk", "hdd")], &[]),
        // Cordoned: the controller tolerates the cordon taint, so the daemon stays.
        node(
            &[("disk", "ssd")],
            &[("node.kubernetes.io/unschedulable", "NoSchedule")],
        ),
        node(&[], &[]),
    ]);
    let mut ds = mk_deployment(None, 2);
    settle(Kind::DaemonSet, &mut ds, &nodes, T0);
    assert_eq!(ds["status"]["desiredNumberScheduled"], 4);
    assert_eq!(ds["status"]["currentNumberScheduled"], 4);
    assert_eq!(ds["status"]["numberReady"], 4);
    assert_eq!(ds["status"]["updatedNumberScheduled"], 4);
    assert_eq!(ds["status"]["numberAvailable"], 4);
    assert_eq!(ds["status"]["numberMisscheduled"], 0);
    assert_eq!(ds["status"]["observedGeneration"], 2);
    ds["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    settle(Kind::DaemonSet, &mut ds, &nodes, T0);
    assert_eq!(ds["status"]["desiredNumberScheduled"], 2);
    // A node added later changes the answer.
    let mut more = nodes.clone();
    more.nodes.push(node(&[("disk", "ssd")], &[]));
    assert!(pending_status(Kind::DaemonSet, &ds, &more, T1).is_some());
}

#[test]
fn daemon_set_skips_nodes_whose_taints_it_does_not_tolerate() {
    let nodes = with_nodes(&[
        node(&[], &[("dedicated", "NoSchedule")]),
        node(&[], &[("dedicated", "NoExecute")]),
        // Only a preference: the daemon runs there.
        node(&[], &[("dedicated", "PreferNoSchedule")]),
        node(&[], &[]),
    ]);
    let mut ds = mk_deployment(None, 1);
    settle(Kind::DaemonSet, &mut ds, &nodes, T0);
    assert_eq!(ds["status"]["desiredNumberScheduled"], 2);
    ds["spec"]["template"]["spec"]["tolerations"] =
        json!([{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]);
    settle(Kind::DaemonSet, &mut ds, &nodes, T0);
    assert_eq!(ds["status"]["desiredNumberScheduled"], 3);
    ds["spec"]["template"]["spec"]["tolerations"] = json!([{"operator": "Exists"}]);
    settle(Kind::DaemonSet, &mut ds, &nodes, T0);
    assert_eq!(ds["status"]["desiredNumberScheduled"], 4);
}

fn mk_job(completions: Option<i64>, parallelism: Option<i64>) -> Value {
    let mut j = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "generation": 1},
        "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}}},
    });
    if let Some(c) = completions {
        j["spec"]["completions"] = json!(c);
    }
    if let Some(p) = parallelism {
        j["spec"]["parallelism"] = json!(p);
    }
    j
}

#[test]
fn job_starts_then_completes_then_stays_complete() {
    let mut j = mk_job(Some(3), Some(2));
    assert!(settle(Kind::Job, &mut j, &MemberView::default(), T0));
    assert_eq!(j["status"]["startTime"], T0);
    assert_eq!(j["status"]["active"], 2);
    assert!(j["status"].get("conditions").is_none());
    assert!(settle(Kind::Job, &mut j, &MemberView::default(), T1));
    let s = &j["status"];
    assert_eq!(s["succeeded"], 3);
    assert!(s.get("active").is_none());
    assert_eq!(s["startTime"], T0);
    assert_eq!(s["completionTime"], T1);
    let types: Vec<&str> = s["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["SuccessCriteriaMet", "Complete"]);
    assert_eq!(s["conditions"][1]["status"], "True");
    assert_eq!(s["conditions"][1]["reason"], "CompletionsReached");
    assert_eq!(
        pending_status(
            Kind::Job,
            &j,
            &MemberView::default(),
            "2027-01-01T00:00:00Z"
        ),
        None
    );
}

#[test]
fn job_defaults_and_indexed_completion() {
    let mut j = mk_job(None, None);
    settle(Kind::Job, &mut j, &MemberView::default(), T0);
    assert_eq!(j["status"]["active"], 1);
    settle(Kind::Job, &mut j, &MemberView::default(), T0);
    assert_eq!(j["status"]["succeeded"], 1);
    let mut indexed = mk_job(Some(4), None);
    indexed["spec"]["completionMode"] = json!("Indexed");
    settle(Kind::Job, &mut indexed, &MemberView::default(), T0);
    settle(Kind::Job, &mut indexed, &MemberView::default(), T0);
    assert_eq!(indexed["status"]["completedIndexes"], "0-3");
}

#[test]
fn suspended_and_failed_jobs_are_left_alone() {
    let mut j = mk_job(None, None);
    j["spec"]["suspend"] = json!(true);
    assert_eq!(
        pending_status(Kind::Job, &j, &MemberView::default(), T0),
        None
    );
    let mut failed = mk_job(None, None);
    failed["status"] = json!({"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]});
    assert_eq!(
        pending_status(Kind::Job, &failed, &MemberView::default(), T0),
        None
    );
}

/// A member with one Ready Node, `node-1`, which the simulated kubelet reaches on 127.0.0.1.
fn pod_member() -> MemberView {
    with_nodes(&[NodeView {
        name: "node-1".into(),
        ready: true,
        internal_ip: Some("127.0.0.1".into()),
        ..NodeView::default()
    }])
}

fn mk_pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "uid": "0b5c7e1a"},
        "spec": {
            "nodeName": "node-1",
            "initContainers": [{"name": "init", "image": "busybox", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
            "containers": [{"name": "app", "image": "nginx", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
        },
        "status": {"phase": "Pending"},
    })
}

#[test]
fn pod_runs_ready_with_an_ip_and_container_statuses() {
    let mut p = mk_pod();
    assert!(settle(Kind::Pod, &mut p, &pod_member(), T0));
    let s = &p["status"];
    assert_eq!(s["phase"], "Running");
    let ready = s["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(ready["status"], "True");
    let ip = s["podIP"].as_str().unwrap();
    assert!(ip.starts_with("10.244."), "{ip}");
    assert_eq!(s["podIPs"][0]["ip"], ip);
    assert_eq!(s["containerStatuses"][0]["name"], "app");
    assert_eq!(s["containerStatuses"][0]["ready"], true);
    assert_eq!(
        s["containerStatuses"][0]["state"]["running"]["startedAt"],
        T0
    );
    assert_eq!(
        s["initContainerStatuses"][0]["state"]["terminated"]["reason"],
        "Completed"
    );
    assert_eq!(pending_status(Kind::Pod, &p, &pod_member(), T1), None);
}

#[test]
fn pod_ip_is_stable_and_finished_pods_stay_finished() {
    let mut a = mk_pod();
    let mut b = mk_pod();
    settle(Kind::Pod, &mut a, &pod_member(), T0);
    settle(Kind::Pod, &mut b, &pod_member(), T1);
    assert_eq!(a["status"]["podIP"], b["status"]["podIP"]);
    let mut done = mk_pod();
    done["status"] = json!({"phase": "Succeeded"});
    assert_eq!(pending_status(Kind::Pod, &done, &pod_member(), T0), None);
}

/// `qosClass` is the API server's (it sets it when the Pod is created); the kubelet, and so the simulator, keeps it.
#[test]
fn pod_keeps_the_qos_class_the_server_set() {
    let mut p = mk_pod();
    p["status"] = json!({"qosClass": "Burstable"});
    settle(Kind::Pod, &mut p, &pod_member(), T0);
    assert_eq!(p["status"]["qosClass"], "Burstable");
    assert_eq!(p["status"]["phase"], "Running");
}

#[test]
fn objects_being_deleted_are_left_alone() {
    let mut d = mk_deployment(Some(1), 1);
    d["metadata"]["deletionTimestamp"] = json!(T0);
    assert_eq!(
        pending_status(Kind::Deployment, &d, &MemberView::default(), T0),
        None
    );
}

#[test]
fn template_hash_follows_the_template() {
    let a = mk_deployment(Some(1), 1);
    let mut b = a.clone();
    b["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    assert_eq!(common::template_hash(&a), common::template_hash(&a.clone()));
    assert_ne!(common::template_hash(&a), common::template_hash(&b));
}

/// Fields a real v1.37 member (kube-controller-manager with KWOK nodes) always reports, seen side by side with
/// the simulator's: Deployment `terminatingReplicas`, Job `terminating` and `uncountedTerminatedPods`, Pod
/// conditions' null `lastProbeTime` and containers' empty `lastState`, and revision hashes spelled as theirs.
#[test]
fn statuses_carry_what_real_controllers_always_set() {
    let mut d = mk_deployment(Some(2), 1);
    assert!(settle(Kind::Deployment, &mut d, &MemberView::default(), T0));
    assert_eq!(d["status"]["terminatingReplicas"], 0);
    let message = d["status"]["conditions"][1]["message"].as_str().unwrap();
    let hash = message
        .strip_prefix("ReplicaSet \"nginx-")
        .and_then(|m| m.strip_suffix("\" has successfully progressed."))
        .unwrap();
    assert!(
        (1..=10).contains(&hash.len()) && hash.chars().all(|c| "456789bcdf".contains(c)),
        "{hash}"
    );

    let mut job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "generation": 1},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    assert!(settle(Kind::Job, &mut job, &MemberView::default(), T0));
    assert!(settle(Kind::Job, &mut job, &MemberView::default(), T1));
    assert_eq!(job["status"]["succeeded"], 1);
    assert_eq!(job["status"]["terminating"], 0);
    assert_eq!(job["status"]["uncountedTerminatedPods"], json!({}));

    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}});
    assert!(settle(Kind::Pod, &mut pod, &pod_member(), T0));
    for condition in pod["status"]["conditions"].as_array().unwrap() {
        assert_eq!(
            condition.get("lastProbeTime"),
            Some(&Value::Null),
            "{condition}"
        );
    }
    assert_eq!(
        pod["status"]["containerStatuses"][0]["lastState"],
        json!({})
    );
}

#[test]
fn deployment_with_an_image_that_cannot_be_pulled_is_never_available() {
    let mut d = mk_deployment(Some(2), 1);
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("fake/nginx:1.19.0");
    assert!(settle(Kind::Deployment, &mut d, &MemberView::default(), T0));
    let s = &d["status"];
    assert_eq!(s["replicas"], 2);
    assert_eq!(s["updatedReplicas"], 2);
    assert_eq!(s["unavailableReplicas"], 2);
    assert!(s.get("readyReplicas").is_none());
    assert!(s.get("availableReplicas").is_none());
    let conds = s["conditions"].as_array().unwrap();
    assert_eq!(conds[0]["status"], "False");
    assert_eq!(conds[0]["reason"], "MinimumReplicasUnavailable");
    assert_eq!(conds[1]["reason"], "ReplicaSetUpdated");
    assert!(!settle(
        Kind::Deployment,
        &mut d,
        &MemberView::default(),
        T1
    ));

    // Pointed back at an image that exists, it becomes available, as a real rollout ends.
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.19.0");
    d["metadata"]["generation"] = json!(2);
    assert!(settle(Kind::Deployment, &mut d, &MemberView::default(), T1));
    let s = &d["status"];
    assert_eq!(s["availableReplicas"], 2);
    assert!(s.get("unavailableReplicas").is_none());
    assert_eq!(s["conditions"][0]["status"], "True");
    assert_eq!(s["conditions"][0]["lastTransitionTime"], T1);
}

#[test]
fn replica_set_and_stateful_set_with_an_image_that_cannot_be_pulled_have_no_ready_pods() {
    let mut rs = mk_deployment(Some(3), 1);
    rs["kind"] = json!("ReplicaSet");
    rs["spec"]["template"]["spec"]["containers"][0]["image"] = json!("docker.io/fake/nginx");
    assert!(settle(
        Kind::ReplicaSet,
        &mut rs,
        &MemberView::default(),
        T0
    ));
    assert_eq!(rs["status"]["replicas"], 3);
    assert_eq!(rs["status"]["fullyLabeledReplicas"], 3);
    assert!(rs["status"].get("readyReplicas").is_none());
    assert!(rs["status"].get("availableReplicas").is_none());

    let mut sts = rs.clone();
    sts["kind"] = json!("StatefulSet");
    assert!(settle(
        Kind::StatefulSet,
        &mut sts,
        &MemberView::default(),
        T0
    ));
    // OrderedReady: the first pod waits for its image, the others are not created.
    assert_eq!(sts["status"]["replicas"], 1);
    assert_eq!(sts["status"]["availableReplicas"], 0);
    assert!(sts["status"].get("readyReplicas").is_none());
    sts["spec"]["podManagementPolicy"] = json!("Parallel");
    assert!(settle(
        Kind::StatefulSet,
        &mut sts,
        &MemberView::default(),
        T0
    ));
    assert_eq!(sts["status"]["replicas"], 3);
}

#[test]
fn pod_with_an_image_that_cannot_be_pulled_stays_pending_in_image_pull_back_off() {
    let mut p = mk_pod();
    p["spec"]["containers"][0]["image"] = json!("fake/nginx:1.19.0");
    assert!(settle(Kind::Pod, &mut p, &pod_member(), T0));
    let s = &p["status"];
    assert_eq!(s["phase"], "Pending");
    let container = &s["containerStatuses"][0];
    assert_eq!(container["ready"], false);
    assert_eq!(container["state"]["waiting"]["reason"], "ImagePullBackOff");
    let ready = s["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert!(!settle(Kind::Pod, &mut p, &pod_member(), T1));
}

fn ready_node(name: &str) -> NodeView {
    NodeView {
        name: name.into(),
        ready: true,
        internal_ip: Some("127.0.0.1".into()),
        ..NodeView::default()
    }
}

#[test]
fn a_running_pod_reports_its_nodes_internal_ip_as_host_ip() {
    let mut p = mk_pod();
    settle(Kind::Pod, &mut p, &pod_member(), T0);
    assert_eq!(p["status"]["hostIP"], "127.0.0.1");
    assert_eq!(p["status"]["hostIPs"], json!([{"ip": "127.0.0.1"}]));
    // Bound to a Node the member does not have, no kubelet starts it.
    let mut stray = mk_pod();
    stray["spec"]["nodeName"] = json!("elsewhere");
    assert_eq!(pending_status(Kind::Pod, &stray, &pod_member(), T0), None);
}

#[test]
fn the_scheduler_spreads_pods_over_the_nodes_that_fit() {
    use crate::scheduler::{Placement, place};
    let mut pod = mk_pod();
    pod["spec"]["nodeName"] = json!(null);
    let nodes = [
        ready_node("node-1"),
        ready_node("node-2"),
        ready_node("node-3"),
    ];
    let load: std::collections::BTreeMap<String, usize> =
        [("node-1".to_string(), 2), ("node-2".to_string(), 1)].into();
    assert_eq!(place(&pod, &nodes, &load), Placement::Bind("node-3".into()));
    let load: std::collections::BTreeMap<String, usize> =
        [("node-1".to_string(), 1), ("node-3".to_string(), 1)].into();
    assert_eq!(place(&pod, &nodes, &load), Placement::Bind("node-2".into()));

    let mut cordoned = ready_node("node-1");
    cordoned.unschedulable = true;
    let mut tainted = ready_node("node-2");
    tainted.taints = vec![Taint {
        key: "dedicated".into(),
        value: "gpu".into(),
        effect: "NoSchedule".into(),
    }];
    let mut labelled = ready_node("node-3");
    labelled.labels.insert("disk".into(), "ssd".into());
    let not_ready = NodeView {
        ready: false,
        ..ready_node("node-4")
    };
    let nodes = [cordoned, tainted, labelled, not_ready];
    let none = std::collections::BTreeMap::new();
    assert_eq!(place(&pod, &nodes, &none), Placement::Bind("node-3".into()));
    pod["spec"]["nodeSelector"] = json!({"disk": "hdd"});
    assert_eq!(
        place(&pod, &nodes, &none),
        Placement::Unschedulable(
            "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, \
             1 node(s) had untolerated taint {dedicated: gpu}, \
             1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, \
             1 node(s) were unschedulable. \
             preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
                .into()
        )
    );
    pod["spec"]["nodeSelector"] = json!(null);
    pod["spec"]["tolerations"] =
        json!([{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]);
    let tolerated = place(&pod, &nodes, &[("node-3".to_string(), 5)].into());
    assert_eq!(tolerated, Placement::Bind("node-2".into()));
    assert_eq!(
        place(&pod, &[], &none),
        Placement::Unschedulable("no nodes available to schedule pods".into())
    );
    pod["spec"]["schedulerName"] = json!("my-scheduler");
    assert_eq!(place(&pod, &nodes, &none), Placement::Leave);
}

#[test]
fn an_unbound_pod_waits_for_its_binding_or_reports_that_nothing_fits() {
    let mut pod = mk_pod();
    pod["spec"]["nodeName"] = json!(null);
    assert_eq!(
        pending_status(Kind::Pod, &pod, &pod_member(), T0),
        None,
        "the scheduler binds it first"
    );
    pod["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    assert!(settle(Kind::Pod, &mut pod, &pod_member(), T0));
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(
        pod["status"]["conditions"],
        json!([{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": null,
                "lastTransitionTime": T0,
                "message": "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}])
    );
    assert!(pod["status"].get("hostIP").is_none());
    assert!(!settle(Kind::Pod, &mut pod, &pod_member(), T1));
}
