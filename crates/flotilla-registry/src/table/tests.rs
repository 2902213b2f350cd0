use super::*;
use serde_json::json;

/// 2026-11-22T10:00:00Z
const NOW: i64 = 1_795_341_600;

fn opts(include: IncludeObject) -> TableOptions<'static> {
    TableOptions {
        api_version: "meta.k8s.io/v1",
        include_object: include,
        with_columns: true,
        now: NOW,
    }
}

fn builtin(group: &'static str, kind: &'static str) -> KindInfo<'static> {
    KindInfo::builtin(group, "v1", kind, true)
}

fn column_names(t: &Value) -> Vec<String> {
    t["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

fn cells(t: &Value, row: usize) -> Value {
    t["rows"][row]["cells"].clone()
}

fn first_cells(t: &Value, n: usize) -> Vec<Value> {
    t["rows"][0]["cells"]
        .as_array()
        .map(|c| c.iter().take(n).cloned().collect())
        .unwrap_or_default()
}

#[test]
fn configmap_table_and_row_objects() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "prod", "creationTimestamp": "2026-11-22T09:55:00Z", "labels": {"a": "b"}},
        "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
    let list_meta = json!({"resourceVersion": "42"});
    let t = table(
        &builtin("", "ConfigMap"),
        std::slice::from_ref(&cm),
        list_meta.clone(),
        &opts(IncludeObject::Metadata),
    );
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(t["metadata"], list_meta);
    assert_eq!(column_names(&t), ["Name", "Data", "Age"]);
    assert_eq!(t["columnDefinitions"][0]["format"], "name");
    assert_eq!(t["columnDefinitions"][1]["type"], "integer");
    assert_eq!(cells(&t, 0), json!(["settings", 3, "5m"]));
    assert_eq!(
        t["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": cm["metadata"]})
    );
    let none = table(
        &builtin("", "ConfigMap"),
        std::slice::from_ref(&cm),
        json!({}),
        &opts(IncludeObject::None),
    );
    assert!(none["rows"][0]["object"].is_null());
    let full = table(
        &builtin("", "ConfigMap"),
        std::slice::from_ref(&cm),
        json!({}),
        &opts(IncludeObject::Object),
    );
    assert_eq!(full["rows"][0]["object"], cm);
    let later = TableOptions {
        with_columns: false,
        api_version: "meta.k8s.io/v1beta1",
        ..opts(IncludeObject::Metadata)
    };
    let watch_row = table(&builtin("", "ConfigMap"), &[cm], json!({}), &later);
    assert!(watch_row["columnDefinitions"].is_null());
    assert_eq!(watch_row["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        watch_row["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    assert_eq!(IncludeObject::parse("Object"), Ok(IncludeObject::Object));
    assert!(IncludeObject::parse("All").is_err());
}

#[test]
fn workloads_print_replica_counts() {
    let deploy = json!({"kind": "Deployment", "metadata": {"name": "web", "creationTimestamp": "2026-11-22T07:00:00Z"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "side", "image": "busybox"}]}}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
    let t = table(
        &builtin("apps", "Deployment"),
        &[deploy],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    assert_eq!(t["columnDefinitions"][5]["priority"], 1);
    assert_eq!(
        cells(&t, 0),
        json!([
            "web",
            "2/3",
            3,
            2,
            "3h",
            "nginx,side",
            "nginx:1.27,busybox",
            "app=web"
        ])
    );

    let sts = json!({"kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {"template": {"spec": {}}}});
    let t = table(
        &builtin("apps", "StatefulSet"),
        &[sts],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(cells(&t, 0), json!(["db", "0/1", "<unknown>", "", ""]));

    let job = json!({"kind": "Job", "metadata": {"name": "j", "creationTimestamp": "2026-11-22T09:00:00Z"},
        "spec": {"completions": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {"succeeded": 2, "startTime": "2026-11-22T09:00:00Z", "completionTime": "2026-11-22T09:00:45Z",
            "conditions": [{"type": "Complete", "status": "True"}]}});
    let t = table(
        &builtin("batch", "Job"),
        &[job],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t)[..5],
        ["Name", "Status", "Completions", "Duration", "Age"]
    );
    assert_eq!(
        first_cells(&t, 5),
        [
            json!("j"),
            json!("Complete"),
            json!("2/2"),
            json!("45s"),
            json!("60m")
        ]
    );
}

#[test]
fn pods_derive_ready_status_and_restarts() {
    let pod = json!({"kind": "Pod", "metadata": {"name": "web-1", "creationTimestamp": "2026-11-22T09:00:00Z"},
        "spec": {"nodeName": "node-a", "containers": [{"name": "a"}, {"name": "b"}]},
        "status": {"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [
            {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
            {"name": "b", "ready": false, "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"finishedAt": "2026-11-22T09:58:00Z"}}}]}});
    let t = table(
        &builtin("", "Pod"),
        std::slice::from_ref(&pod),
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    assert_eq!(
        cells(&t, 0),
        json!([
            "web-1",
            "1/2",
            "CrashLoopBackOff",
            "3 (2m ago)",
            "60m",
            "10.0.0.5",
            "node-a",
            "<none>",
            "<none>"
        ])
    );
    let mut deleting = pod;
    deleting["metadata"]["deletionTimestamp"] = json!("2026-11-22T10:00:00Z");
    let t = table(
        &builtin("", "Pod"),
        &[deleting],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(cells(&t, 0)[2], "Terminating");
    let pending = json!({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}});
    let t = table(
        &builtin("", "Pod"),
        &[pending],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        first_cells(&t, 4),
        [json!("p"), json!("0/1"), json!("Pending"), json!("0")]
    );
}

#[test]
fn services_nodes_namespaces_secrets_leases() {
    let svc = json!({"kind": "Service", "metadata": {"name": "web"}, "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.10",
        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "nodePort": 30443}], "selector": {"app": "web"}}});
    let t = table(
        &builtin("", "Service"),
        &[svc],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        cells(&t, 0),
        json!([
            "web",
            "LoadBalancer",
            "10.96.0.10",
            "<pending>",
            "80/TCP,443:30443/TCP",
            "<unknown>",
            "app=web"
        ])
    );
    let node = json!({"kind": "Node", "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": ""}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.36.0"},
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}});
    let t = table(
        &KindInfo::builtin("", "v1", "Node", false),
        &[node],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        first_cells(&t, 6),
        [
            json!("n1"),
            json!("Ready,SchedulingDisabled"),
            json!("control-plane,worker"),
            json!("<unknown>"),
            json!("v1.36.0"),
            json!("172.18.0.2")
        ]
    );
    let ns = json!({"kind": "Namespace", "metadata": {"name": "prod", "creationTimestamp": "2026-11-20T10:00:00Z"}, "status": {"phase": "Active"}});
    let t = table(
        &KindInfo::builtin("", "v1", "Namespace", false),
        &[ns],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(cells(&t, 0), json!(["prod", "Active", "2d"]));
    let secret = json!({"kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
    let t = table(
        &builtin("", "Secret"),
        &[secret],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        cells(&t, 0),
        json!(["s", "kubernetes.io/tls", 2, "<unknown>"])
    );
    let lease =
        json!({"kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": "ctrl-1"}});
    let t = table(
        &builtin("coordination.k8s.io", "Lease"),
        &[lease],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(cells(&t, 0), json!(["l", "ctrl-1", "<unknown>"]));
}

#[test]
fn events_print_last_seen_and_object() {
    let ev = json!({"kind": "Event", "metadata": {"name": "web.1"}, "type": "Warning", "reason": "BackOff",
        "involvedObject": {"kind": "Pod", "name": "web"}, "message": "restarting", "count": 4,
        "source": {"component": "kubelet", "host": "n1"},
        "firstTimestamp": "2026-11-22T09:00:00Z", "lastTimestamp": "2026-11-22T09:59:30Z"});
    let t = table(
        &builtin("", "Event"),
        &[ev],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t),
        [
            "Last Seen",
            "Type",
            "Reason",
            "Object",
            "Subobject",
            "Source",
            "Message",
            "First Seen",
            "Count",
            "Name"
        ]
    );
    assert_eq!(
        cells(&t, 0),
        json!([
            "30s",
            "Warning",
            "BackOff",
            "pod/web",
            "",
            "kubelet, n1",
            "restarting",
            "60m",
            "4",
            "web.1"
        ])
    );
    let v1 = json!({"kind": "Event", "metadata": {"name": "e"}, "type": "Normal", "reason": "Scheduled", "note": "ok",
        "regarding": {"kind": "Deployment", "name": "web"}, "reportingController": "flotilla", "eventTime": "2026-11-22T09:59:00.000000Z"});
    let t = table(
        &builtin("events.k8s.io", "Event"),
        &[v1],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        cells(&t, 0),
        json!([
            "60s",
            "Normal",
            "Scheduled",
            "deployment/web",
            "",
            "flotilla",
            "ok",
            "60s",
            "0",
            "e"
        ])
    );
}

#[test]
fn custom_resources_use_printer_columns() {
    let version = json!({"name": "v1", "additionalPrinterColumns": [
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Clusters", "type": "string", "jsonPath": ".spec.clusters[*].name", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"}]});
    let foo = KindInfo::custom("x.io", "v1", "Foo", true, &version);
    let obj = json!({"apiVersion": "x.io/v1", "kind": "Foo", "metadata": {"name": "f", "creationTimestamp": "2026-11-22T06:00:00Z"},
        "spec": {"replicas": 2, "clusters": [{"name": "m1"}, {"name": "m2"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let t = table(
        &foo,
        std::slice::from_ref(&obj),
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t),
        ["Name", "Ready", "Replicas", "Clusters", "Age", "Missing"]
    );
    assert_eq!(t["columnDefinitions"][3]["priority"], 1);
    assert_eq!(t["columnDefinitions"][4]["type"], "date");
    assert_eq!(cells(&t, 0), json!(["f", "True", 2, "m1 m2", "4h", null]));
    // No printer columns: an Age column is implied.
    let bare = json!({"name": "v1"});
    let t = table(
        &KindInfo::custom("x.io", "v1", "Foo", true, &bare),
        &[obj],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(column_names(&t), ["Name", "Age"]);
    assert_eq!(cells(&t, 0), json!(["f", "4h"]));
}

#[test]
fn other_kinds_get_name_and_created_at() {
    let crd = json!({"kind": "CustomResourceDefinition", "metadata": {"name": "foos.x.io", "creationTimestamp": "2026-11-22T09:00:00Z"}});
    let kind = KindInfo::builtin(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        false,
    );
    let t = table(&kind, &[crd], json!({}), &opts(IncludeObject::None));
    assert_eq!(column_names(&t), ["Name", "Created At"]);
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
    assert_eq!(cells(&t, 0), json!(["foos.x.io", "2026-11-22T09:00:00Z"]));
    let role = json!({"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "karmada-system"}, {"kind": "User", "name": "alice"}]});
    let t = table(
        &builtin("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        &[role],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        cells(&t, 0),
        json!([
            "b",
            "ClusterRole/admin",
            "<unknown>",
            "alice",
            "",
            "karmada-system/agent"
        ])
    );
}

#[test]
fn endpoint_slices_list_three_ports_and_addresses_then_count_the_rest() {
    let slice = |ports: Value, endpoints: Value| {
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": "web-abc", "namespace": "prod", "creationTimestamp": "2026-11-22T09:55:00Z"},
            "ports": ports, "endpoints": endpoints})
    };
    let many = slice(
        json!([{"name": "http", "port": 80}, {"name": "named"}, {}]),
        json!([{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3"]}, {"addresses": ["10.0.0.4", "10.0.0.5"]}]),
    );
    let empty = slice(json!([]), json!([]));
    let t = table(
        &builtin("discovery.k8s.io", "EndpointSlice"),
        &[many, empty],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t),
        ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    );
    assert_eq!(
        cells(&t, 0),
        json!([
            "web-abc",
            "IPv4",
            "80,named,*",
            "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...",
            "5m"
        ])
    );
    assert_eq!(
        cells(&t, 1),
        json!(["web-abc", "IPv4", "<unset>", "<unset>", "5m"])
    );
}

#[test]
fn certificate_signing_requests_print_signer_requestor_duration_and_condition() {
    let kind = KindInfo::builtin(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        false,
    );
    let pending = json!({"metadata": {"name": "a", "creationTimestamp": "2026-11-22T09:00:00Z"},
        "spec": {"signerName": "example.com/s", "username": "alice", "expirationSeconds": 86400}});
    let issued = json!({"metadata": {"name": "b"}, "spec": {"username": "bob"},
        "status": {"conditions": [{"type": "Approved"}, {"type": "Failed"}], "certificate": "QUJD"}});
    let denied = json!({"metadata": {"name": "c"}, "spec": {},
        "status": {"conditions": [{"type": "Approved"}, {"type": "Denied"}]}});
    let t = table(
        &kind,
        &[pending, issued, denied],
        json!({}),
        &opts(IncludeObject::None),
    );
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Age",
            "SignerName",
            "Requestor",
            "RequestedDuration",
            "Condition"
        ]
    );
    assert_eq!(
        cells(&t, 0),
        json!(["a", "60m", "example.com/s", "alice", "24h", "Pending"])
    );
    assert_eq!(
        cells(&t, 1),
        json!([
            "b",
            "<unknown>",
            "<none>",
            "bob",
            "<none>",
            "Approved,Failed,Issued"
        ])
    );
    assert_eq!(cells(&t, 2)[5], "Denied");
}
