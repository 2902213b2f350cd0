use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use serde_json::{Value, json};

use super::{err, mk, object, ok};
use crate::layer::Request;

fn item(cluster: &str, status: Option<Value>) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.to_owned(),
        status,
        applied: true,
        ..AggregatedStatusItem::default()
    }
}

fn aggregate(object_in: Value, items: Vec<AggregatedStatusItem>) -> Value {
    object(ok(Request::AggregateStatus {
        object: object_in,
        items,
    }))
}

fn deployment(generation: i64, status: Value) -> Value {
    mk(
        "apps/v1",
        "Deployment",
        json!({"metadata": {"generation": generation}, "spec": {"replicas": 4}, "status": status}),
    )
}

#[test]
fn deployment_sums_and_advances_observed_generation() {
    let member = |replicas: i64, observed: i64, template: i64| {
        json!({"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas,
               "generation": 3, "observedGeneration": observed, "resourceTemplateGeneration": template})
    };
    let template = deployment(
        5,
        json!({"observedGeneration": 4, "conditions": [{"type": "Available"}]}),
    );
    let all_seen = aggregate(
        template.clone(),
        vec![
            item("m1", Some(member(1, 3, 5))),
            item("m2", Some(member(3, 3, 5))),
        ],
    );
    assert_eq!(
        all_seen["status"],
        json!({"observedGeneration": 5, "replicas": 4, "readyReplicas": 4, "availableReplicas": 4, "updatedReplicas": 4, "conditions": [{"type": "Available"}]})
    );
    let stale_template = aggregate(
        template.clone(),
        vec![
            item("m1", Some(member(1, 3, 4))),
            item("m2", Some(member(3, 3, 5))),
        ],
    );
    assert_eq!(stale_template["status"]["observedGeneration"], 4);
    let member_behind = aggregate(template.clone(), vec![item("m1", Some(member(1, 2, 5)))]);
    assert_eq!(member_behind["status"]["observedGeneration"], 4);
    let without_status = aggregate(
        template.clone(),
        vec![item("m1", Some(member(1, 3, 5))), item("m2", None)],
    );
    assert_eq!(
        without_status["status"]["observedGeneration"], 4,
        "members without status count in the denominator"
    );
    assert_eq!(without_status["status"]["replicas"], 1);
    let no_items = aggregate(template, vec![]);
    assert_eq!(
        no_items["status"],
        json!({"observedGeneration": 5, "conditions": [{"type": "Available"}]})
    );
}

#[test]
fn unchanged_status_returns_the_template_untouched() {
    let template = deployment(
        2,
        json!({"observedGeneration": 2, "replicas": 1, "extra": {"kept": true}}),
    );
    let member = json!({"replicas": 1, "generation": 1, "observedGeneration": 1, "resourceTemplateGeneration": 2});
    assert_eq!(
        aggregate(template.clone(), vec![item("m1", Some(member))]),
        template
    );
}

#[test]
fn workload_kinds_write_their_counters() {
    let rs = mk(
        "apps/v1",
        "ReplicaSet",
        json!({"metadata": {"generation": 1}}),
    );
    let out = aggregate(
        rs,
        vec![item(
            "m1",
            Some(json!({"replicas": 0, "readyReplicas": 0, "resourceTemplateGeneration": 1})),
        )],
    );
    assert_eq!(
        out["status"],
        json!({"replicas": 0, "observedGeneration": 1}),
        "replicas is written even when 0"
    );

    let ds = mk(
        "apps/v1",
        "DaemonSet",
        json!({"metadata": {"generation": 1}}),
    );
    let member = json!({"currentNumberScheduled": 2, "desiredNumberScheduled": 2, "numberReady": 1, "numberAvailable": 1, "resourceTemplateGeneration": 1});
    let out = aggregate(
        ds,
        vec![item("m1", Some(member.clone())), item("m2", Some(member))],
    );
    assert_eq!(
        out["status"],
        json!({"currentNumberScheduled": 4, "desiredNumberScheduled": 4, "numberMisscheduled": 0, "numberReady": 2, "numberAvailable": 2, "observedGeneration": 1})
    );

    let sts = mk(
        "apps/v1",
        "StatefulSet",
        json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 1}}),
    );
    let member = json!({"replicas": 2, "availableReplicas": 2, "readyReplicas": 2, "generation": 1, "observedGeneration": 1, "resourceTemplateGeneration": 2});
    let out = aggregate(sts, vec![item("m1", Some(member))]);
    assert_eq!(
        out["status"]["observedGeneration"], 2,
        "StatefulSet uses the Deployment generation rule"
    );
    assert_eq!(out["status"]["replicas"], 2);
}

#[test]
fn malformed_member_status_names_the_cluster() {
    let message = err(Request::AggregateStatus {
        object: deployment(1, json!({})),
        items: vec![item("member2", Some(json!({"replicas": "two"})))],
    });
    assert!(
        message.contains("member2") && message.contains("replicas"),
        "{message}"
    );
}

#[test]
fn job_completes_or_fails_across_members() {
    let job = mk("batch/v1", "Job", json!({"status": {"ready": 1}}));
    let complete = |start: &str, end: &str| {
        json!({"succeeded": 1, "startTime": start, "completionTime": end,
               "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]})
    };
    let out = aggregate(
        job.clone(),
        vec![
            item(
                "m1",
                Some(complete("2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z")),
            ),
            item(
                "m2",
                Some(complete("2026-01-01T00:00:01Z", "2026-01-01T00:02:00Z")),
            ),
        ],
    );
    let status = &out["status"];
    assert_eq!(status["succeeded"], 2);
    assert_eq!(status["startTime"], "2026-01-01T00:00:01Z");
    assert_eq!(status["completionTime"], "2026-01-01T00:02:00Z");
    let types: Vec<&str> = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(types, ["Complete", "SuccessCriteriaMet"]);
    assert!(
        status.get("ready").is_none(),
        "other JobStatus fields are dropped"
    );
    let time = status["conditions"][0]["lastTransitionTime"]
        .as_str()
        .unwrap_or_default();
    assert!(time.len() == 20 && time.ends_with('Z'), "{time}");

    let failed = json!({"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]});
    let running = json!({"active": 2, "startTime": "2026-01-01T00:00:00Z"});
    let out = aggregate(
        job.clone(),
        vec![
            item("m1", Some(failed.clone())),
            item("m2", Some(running)),
            item("m3", Some(failed)),
        ],
    );
    assert_eq!(
        out["status"]["conditions"][0]["message"],
        "Job executed failed in member clusters m1,m3"
    );
    assert_eq!(
        out["status"]["conditions"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(out["status"]["active"], 2);
    assert!(
        out["status"].get("startTime").is_none(),
        "not every member started"
    );

    let finished = mk(
        "batch/v1",
        "Job",
        json!({"status": {"conditions": [{"type": "Failed", "status": "True"}]}}),
    );
    assert_eq!(
        aggregate(
            finished.clone(),
            vec![item("m1", Some(json!({"active": 1})))]
        ),
        finished
    );
}

#[test]
fn cron_job_concatenates_active_and_takes_latest_times() {
    let cron = mk("batch/v1", "CronJob", json!({"status": {"other": 1}}));
    let out = aggregate(
        cron,
        vec![
            item(
                "m1",
                Some(
                    json!({"active": [{"name": "a"}], "lastScheduleTime": "2026-01-01T00:00:00Z"}),
                ),
            ),
            item(
                "m2",
                Some(
                    json!({"active": [{"name": "b"}], "lastScheduleTime": "2026-01-02T00:00:00Z", "lastSuccessfulTime": "2026-01-01T00:00:00Z"}),
                ),
            ),
        ],
    );
    assert_eq!(
        out["status"],
        json!({"other": 1, "active": [{"name": "a"}, {"name": "b"}], "lastScheduleTime": "2026-01-02T00:00:00Z", "lastSuccessfulTime": "2026-01-01T00:00:00Z"})
    );
}

#[test]
fn pod_phase_by_severity_and_container_summaries() {
    let pod = mk(
        "v1",
        "Pod",
        json!({"status": {"phase": "Running", "podIP": "10.0.0.1"}}),
    );
    let running = json!({"phase": "Running", "containerStatuses": [{"name": "c", "ready": true, "restartCount": 3, "state": {"running": {}}}]});
    let out = aggregate(
        pod.clone(),
        vec![
            item("m1", Some(running.clone())),
            item("m2", Some(json!({"phase": "Succeeded"}))),
        ],
    );
    assert_eq!(out["status"]["phase"], "Running");
    assert!(out["status"].get("podIP").is_none());
    assert_eq!(out["status"]["containerStatuses"][0]["ready"], true);
    assert_eq!(out["status"]["containerStatuses"][0]["restartCount"], 0);
    assert_eq!(
        out["status"]["containerStatuses"][0]["state"],
        json!({"running": {}})
    );
    let out = aggregate(
        pod.clone(),
        vec![item("m1", Some(running)), item("m2", None)],
    );
    assert_eq!(
        out["status"]["phase"], "Pending",
        "a member without status is pending"
    );
    assert_eq!(aggregate(pod.clone(), vec![]), pod);
}

#[test]
fn volume_claims_budgets_and_autoscalers() {
    let pv = mk(
        "v1",
        "PersistentVolume",
        json!({"status": {"phase": "Bound", "message": "x"}}),
    );
    let out = aggregate(
        pv,
        vec![
            item("m1", Some(json!({"phase": "Bound"}))),
            item("m2", Some(json!({"phase": "Available"}))),
        ],
    );
    assert_eq!(out["status"], json!({"phase": "Available"}));

    let pvc = mk("v1", "PersistentVolumeClaim", json!({}));
    let out = aggregate(
        pvc.clone(),
        vec![
            item("m1", Some(json!({"phase": "Pending"}))),
            item("m2", Some(json!({"phase": "Bound"}))),
        ],
    );
    assert_eq!(out["status"], json!({"phase": "Pending"}));
    let out = aggregate(
        pvc,
        vec![
            item("m1", Some(json!({"phase": "Lost"}))),
            item("m2", Some(json!({"phase": "Pending"}))),
        ],
    );
    assert_eq!(out["status"], json!({"phase": "Lost"}));

    let pdb = mk(
        "policy/v1",
        "PodDisruptionBudget",
        json!({"status": {"observedGeneration": 3}}),
    );
    let member = |n: i64, pod: &str| json!({"currentHealthy": n, "desiredHealthy": 1, "expectedPods": n, "disruptionsAllowed": n - 1, "disruptedPods": {pod: "2026-01-01T00:00:00Z"}});
    let out = aggregate(
        pdb,
        vec![
            item("m1", Some(member(2, "p1"))),
            item("m2", Some(member(3, "p2"))),
        ],
    );
    assert_eq!(
        out["status"],
        json!({"currentHealthy": 5, "desiredHealthy": 2, "expectedPods": 5, "disruptionsAllowed": 3,
               "disruptedPods": {"m1/p1": "2026-01-01T00:00:00Z", "m2/p2": "2026-01-01T00:00:00Z"}})
    );

    let hpa = mk(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        json!({"status": {"currentMetrics": []}}),
    );
    let out = aggregate(
        hpa,
        vec![
            item(
                "m1",
                Some(json!({"currentReplicas": 2, "desiredReplicas": 3})),
            ),
            item("m2", Some(json!({"desiredReplicas": 1}))),
        ],
    );
    assert_eq!(
        out["status"],
        json!({"currentReplicas": 2, "desiredReplicas": 4})
    );
}

#[test]
fn load_balancer_ingress_is_merged_deduplicated_and_sorted() {
    let svc = mk(
        "v1",
        "Service",
        json!({"spec": {"type": "LoadBalancer"}, "status": {"conditions": []}}),
    );
    let m1 = json!({"loadBalancer": {"ingress": [
        {"ip": "10.0.0.2", "ports": [{"port": 443, "protocol": "TCP"}]},
        {"hostname": "b.example.com"},
        {"ip": "10.0.0.1", "ipMode": "VIP"}
    ]}});
    let m2 = json!({"loadBalancer": {"ingress": [
        {"ip": "10.0.0.2", "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]},
        {"hostname": "a.example.com"},
        {"ip": "10.0.0.1"}
    ]}});
    let out = aggregate(
        svc,
        vec![item("m1", Some(m1.clone())), item("m2", Some(m2.clone()))],
    );
    assert_eq!(
        out["status"],
        json!({"loadBalancer": {"ingress": [
            {"hostname": "a.example.com"},
            {"hostname": "b.example.com"},
            {"ip": "10.0.0.1", "ipMode": "VIP"},
            {"ip": "10.0.0.1"},
            {"ip": "10.0.0.2", "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]}
        ]}})
    );
    let cluster_ip = mk("v1", "Service", json!({"spec": {"type": "ClusterIP"}}));
    assert_eq!(
        aggregate(cluster_ip.clone(), vec![item("m1", Some(m1))]),
        cluster_ip
    );

    let ingress = mk("networking.k8s.io/v1", "Ingress", json!({}));
    let out = aggregate(
        ingress,
        vec![
            item(
                "m1",
                Some(json!({"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}})),
            ),
            item(
                "m2",
                Some(json!({"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}})),
            ),
        ],
    );
    assert_eq!(
        out["status"],
        json!({"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}})
    );
}
