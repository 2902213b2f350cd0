use super::*;
use crate::kind_info::KindInfo;
use serde_json::json;

/// Defaults as the write path does: as the kind's entry says.
fn apply(object: &mut Value, kind: &KindInfo<'_>, allocations: &mut Allocations) {
    super::apply(object, crate::kinds::defaults(kind), allocations);
}

fn run(group: &'static str, kind: &'static str, mut obj: Value) -> Value {
    let info = KindInfo::builtin(group, "v1", kind, true);
    let mut alloc = Allocations::default();
    apply(&mut obj, &info, &mut alloc);
    if kind == "Pod" {
        initial_pod_status(&mut obj);
    }
    // Defaulting is idempotent.
    let again = {
        let mut o = obj.clone();
        apply(&mut o, &info, &mut alloc);
        if kind == "Pod" {
            initial_pod_status(&mut o);
        }
        o
    };
    assert_eq!(again, obj, "second pass changed {kind}");
    obj
}

#[test]
fn deployments_get_upstream_defaults() {
    let d = run(
        "apps",
        "Deployment",
        json!({"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
         "readinessProbe": {"httpGet": {"port": 80}}},
        {"name": "side", "image": "busybox"}]}}}}),
    );
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["securityContext"], json!({}));
    assert!(
        pod.get("enableServiceLinks").is_none(),
        "only Pods get service links by default"
    );
    let web = &pod["containers"][0];
    assert_eq!(web["imagePullPolicy"], "IfNotPresent");
    assert_eq!(web["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(web["terminationMessagePolicy"], "File");
    assert_eq!(
        web["resources"],
        json!({}),
        "Go always writes the requirements"
    );
    assert_eq!(
        web["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(
        web["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(
        pod["containers"][1]["imagePullPolicy"], "Always",
        "untagged images are pulled always"
    );
    // A Recreate strategy gets no rollingUpdate; explicit values are kept.
    let r = run(
        "apps",
        "Deployment",
        json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}}}),
    );
    assert_eq!(r["spec"]["strategy"], json!({"type": "Recreate"}));
    assert_eq!(r["spec"]["replicas"], 0);
}

#[test]
fn image_pull_policies() {
    let cases = [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry:5000/app", "Always"),
        ("registry:5000/app:v1", "IfNotPresent"),
        ("app@sha256:abc", "IfNotPresent"),
    ];
    for (image, want) in cases {
        let p = run(
            "",
            "Pod",
            json!({"spec": {"containers": [{"name": "c", "image": image}]}}),
        );
        assert_eq!(
            p["spec"]["containers"][0]["imagePullPolicy"], want,
            "{image}"
        );
    }
}

#[test]
fn pods_get_service_links_and_requests_from_limits() {
    let p = run(
        "",
        "Pod",
        json!({"spec": {"containers": [{"name": "c", "image": "x:1",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}],
        "volumes": [{"name": "v", "configMap": {"name": "cm"}}, {"name": "s", "secret": {"secretName": "s", "defaultMode": 256}}]}}),
    );
    assert_eq!(p["spec"]["enableServiceLinks"], true);
    assert_eq!(
        p["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
    assert_eq!(p["spec"]["volumes"][0]["configMap"]["defaultMode"], 420);
    assert_eq!(p["spec"]["volumes"][1]["secret"]["defaultMode"], 256);
    assert_eq!(
        p["status"],
        json!({"phase": "Pending", "qosClass": "Burstable"}),
        "cpu request below its limit"
    );
    let limits_only = run(
        "",
        "Pod",
        json!({"spec": {"containers": [{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}),
    );
    assert_eq!(
        limits_only["status"]["qosClass"], "Guaranteed",
        "requests defaulted from limits"
    );
    let best = run(
        "",
        "Pod",
        json!({"spec": {"containers": [{"name": "c", "image": "x:1"}]}}),
    );
    assert_eq!(best["status"]["qosClass"], "BestEffort");
    let burst = run(
        "",
        "Pod",
        json!({"spec": {"containers": [{"name": "c", "image": "x:1", "resources": {"requests": {"cpu": "1"}}}]}}),
    );
    assert_eq!(burst["status"]["qosClass"], "Burstable");
    let running = run(
        "",
        "Pod",
        json!({"spec": {"containers": []}, "status": {"phase": "Running", "qosClass": "BestEffort"}}),
    );
    assert_eq!(
        running["status"]["phase"], "Running",
        "an existing phase is kept"
    );
}

#[test]
fn other_workloads() {
    let sts = run(
        "apps",
        "StatefulSet",
        json!({"spec": {"template": {"spec": {}}}}),
    );
    assert_eq!(sts["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        sts["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "partition": 0}})
    );
    let claims = run(
        "apps",
        "StatefulSet",
        json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}),
    );
    assert_eq!(
        claims["spec"]["volumeClaimTemplates"][0],
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
            "spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}})
    );
    assert_eq!(
        sts["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    let ds = run("apps", "DaemonSet", json!({"spec": {}}));
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(
        ds["metadata"]["annotations"],
        json!({"deprecated.daemonset.template.generation": "0"}),
        "the template generation is the strategy's to set"
    );
    let job = run(
        "batch",
        "Job",
        json!({"spec": {"template": {"metadata": {"labels": {"app": "j"}}, "spec": {"restartPolicy": "Never"}}}}),
    );
    assert_eq!(
        (
            job["spec"]["completions"].clone(),
            job["spec"]["parallelism"].clone()
        ),
        (json!(1), json!(1))
    );
    assert_eq!(job["spec"]["backoffLimit"], 6);
    assert_eq!(job["spec"]["completionMode"], "NonIndexed");
    assert_eq!(job["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(job["metadata"]["labels"], json!({"app": "j"}));
    assert_eq!(job["spec"]["manualSelector"], false);
    let parallel = run("batch", "Job", json!({"spec": {"parallelism": 3}}));
    assert!(
        parallel["spec"].get("completions").is_none(),
        "work-queue jobs keep completions unset"
    );
    let cj = run(
        "batch",
        "CronJob",
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {}}}}}}),
    );
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(cj["spec"]["failedJobsHistoryLimit"], 1);
    assert_eq!(
        cj["spec"]["jobTemplate"],
        json!({"spec": {"template": {"spec": {
            "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "terminationGracePeriodSeconds": 30}}}}),
        "the Job defaults are the Job's, not its template's"
    );
}

#[test]
fn services_get_ips_ports_and_policies() {
    let info = KindInfo::builtin("", "v1", "Service", true);
    let mut alloc = Allocations::default();
    alloc.cluster_ips.insert("10.96.0.10".to_string());
    let mut svc = json!({"spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": "https"}], "selector": {"app": "web"}}});
    apply(&mut svc, &info, &mut alloc);
    assert_eq!(
        svc["spec"],
        json!({"type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 443, "targetPort": "https", "protocol": "TCP"}],
        "selector": {"app": "web"}, "clusterIP": "10.96.0.11", "clusterIPs": ["10.96.0.11"], "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack"})
    );
    let mut lb = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
    apply(&mut lb, &info, &mut alloc);
    assert_eq!(
        lb["spec"]["clusterIP"], "10.96.0.12",
        "allocations accumulate"
    );
    assert_eq!(lb["spec"]["ports"][0]["nodePort"], 30000);
    assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    let mut headless = json!({"spec": {"clusterIP": "None", "ports": [{"port": 80}]}});
    apply(&mut headless, &info, &mut alloc);
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    assert!(headless["spec"].get("ipFamilies").is_none());
    let mut ext = json!({"spec": {"type": "ExternalName", "externalName": "example.com"}});
    apply(&mut ext, &info, &mut alloc);
    assert!(ext["spec"].get("clusterIP").is_none());
}

#[test]
fn secrets_namespaces_rbac_and_custom_resources() {
    let s = run(
        "",
        "Secret",
        json!({"stringData": {"user": "admin"}, "data": {"old": "eA=="}}),
    );
    assert_eq!(
        s,
        json!({"data": {"old": "eA==", "user": "YWRtaW4="}, "type": "Opaque"})
    );
    let ns = run("", "Namespace", json!({"metadata": {"name": "prod"}}));
    assert_eq!(
        ns["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "prod"})
    );
    let rb = run(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        json!({"subjects": [{"kind": "User", "name": "a"}, {"kind": "ServiceAccount", "name": "b"}]}),
    );
    assert_eq!(
        rb["subjects"],
        json!([{"kind": "User", "name": "a", "apiGroup": "rbac.authorization.k8s.io"}, {"kind": "ServiceAccount", "name": "b"}])
    );
    let version = json!({"name": "v1"});
    let mut cr = json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}});
    apply(
        &mut cr,
        &KindInfo::custom("apps", "v1", "Deployment", true, &version),
        &mut Allocations::default(),
    );
    assert_eq!(
        cr,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}),
        "custom resources untouched"
    );
}

#[test]
fn limit_range_container_items_default_from_max_and_min() {
    let r = run(
        "",
        "LimitRange",
        json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "50m", "ephemeral-storage": "1Gi"}, "default": {"memory": "512Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}},
        ]}}),
    );
    let item = &r["spec"]["limits"][0];
    assert_eq!(item["default"], json!({"cpu": "2", "memory": "512Mi"}));
    assert_eq!(
        item["defaultRequest"],
        json!({"cpu": "2", "memory": "512Mi", "ephemeral-storage": "1Gi"})
    );
    assert!(r["spec"]["limits"][1].get("default").is_none());
}

#[test]
fn an_apiservice_service_listens_on_443_unless_told() {
    let mut svc = json!({"spec": {"group": "g", "version": "v1", "service": {"namespace": "ns", "name": "s"}}});
    apiservice(&mut svc);
    assert_eq!(svc["spec"]["service"]["port"], 443);
    let mut given = json!({"spec": {"service": {"namespace": "ns", "name": "s", "port": 8443}}});
    apiservice(&mut given);
    assert_eq!(given["spec"]["service"]["port"], 8443);
    let mut local = json!({"spec": {"group": "g", "version": "v1"}});
    apiservice(&mut local);
    assert!(local["spec"].get("service").is_none());
}

#[test]
fn replication_controllers_take_selector_and_labels_from_their_template() {
    let rc = run(
        "",
        "ReplicationController",
        json!({"spec": {"template": {"metadata": {"labels": {"app": "rc"}}, "spec": {}}}}),
    );
    assert_eq!(rc["spec"]["selector"], json!({"app": "rc"}));
    assert_eq!(rc["metadata"]["labels"], json!({"app": "rc"}));
    assert_eq!(rc["spec"]["replicas"], 1);
    let own = run(
        "",
        "ReplicationController",
        json!({"metadata": {"labels": {"mine": "1"}}, "spec": {"selector": {"app": "x"},
            "template": {"metadata": {"labels": {"app": "x", "tier": "t"}}, "spec": {}}}}),
    );
    assert_eq!(own["spec"]["selector"], json!({"app": "x"}));
    assert_eq!(own["metadata"]["labels"], json!({"mine": "1"}));
}

#[test]
fn claims_volumes_and_host_paths() {
    let pvc = run(
        "",
        "PersistentVolumeClaim",
        json!({"spec": {"volumeMode": "Block"}, "status": {}}),
    );
    assert_eq!(pvc["spec"]["volumeMode"], "Block", "a given mode is kept");
    assert_eq!(pvc["status"]["phase"], "Pending");
    let pv = run(
        "",
        "PersistentVolume",
        json!({"spec": {"hostPath": {"path": "/x"}}}),
    );
    assert_eq!(
        pv["spec"],
        json!({"hostPath": {"path": "/x", "type": ""}, "volumeMode": "Filesystem",
            "persistentVolumeReclaimPolicy": "Retain"})
    );
    let pod = run(
        "",
        "Pod",
        json!({"spec": {"volumes": [
            {"name": "h", "hostPath": {"path": "/x", "type": "Directory"}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]}}),
    );
    assert_eq!(pod["spec"]["volumes"][0]["hostPath"]["type"], "Directory");
    assert_eq!(
        pod["spec"]["volumes"][1]["ephemeral"]["volumeClaimTemplate"],
        json!({"metadata": {}, "spec": {"volumeMode": "Filesystem"}})
    );
}
