//! What kubectl (the PyPI 1.37 build and the machine's 1.32 dispatcher) does beyond CRUD: `get events` and
//! `describe` reading Events written through either Event API, `describe` of built-in and custom kinds without
//! errors, `get all` through the `all` category, and `diff`/`apply --dry-run=server` (dry-run updates).
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{
    Harness, get_json, kubectl_bins, kubectl_namespaces, kubectl_split, must, must_quiet,
    run_python,
};

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.example.io"},
"spec":{"group":"example.io","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{
  "spec":{"type":"object","properties":{"size":{"type":"integer"},"color":{"type":"string"}}}}}}}]}}"#;

fn now_micro() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.000000Z")
        .to_string()
}

fn names(list: &Value) -> Vec<String> {
    let mut out: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

#[test]
fn events_of_both_apis_show_in_get_events_and_describe() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (i, bin, ns) in &kubectl_namespaces(kc, "ev") {
        must(
            bin,
            kc,
            &["-n", ns, "create", "deployment", "web", "--image=nginx"],
        );
        let uid = get_json(bin, kc, &["-n", ns, "get", "deployment", "web"])["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_string();
        let regarding = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": ns, "uid": uid});
        // What kube-runtime's Recorder writes: an events.k8s.io Event.
        let new_style = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "web.new", "namespace": ns}, "eventTime": now_micro(),
            "reportingController": "flotilla-test", "reportingInstance": "test-1", "action": "Scale",
            "reason": "ScaledUp", "note": "scaled web up", "type": "Normal", "regarding": regarding});
        // What client-go's legacy recorder writes: a core Event.
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let old_style = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web.old", "namespace": ns}, "involvedObject": regarding,
            "reason": "LegacyReason", "message": "from the core api", "type": "Warning", "count": 2,
            "source": {"component": "old-controller"}, "firstTimestamp": now, "lastTimestamp": now});
        let f_new = h.file(&format!("new{i}.json"), &new_style.to_string());
        let f_old = h.file(&format!("old{i}.json"), &old_style.to_string());
        must(bin, kc, &["create", "-f", &f_new]);
        must(bin, kc, &["create", "-f", &f_old]);

        let table = must_quiet(bin, kc, &["-n", ns, "get", "events"]);
        for want in [
            "ScaledUp",
            "scaled web up",
            "LegacyReason",
            "deployment/web",
        ] {
            assert!(
                table.contains(want),
                "{bin} get events lacks {want}:\n{table}"
            );
        }
        let core = get_json(bin, kc, &["-n", ns, "get", "events"]);
        let newer = get_json(bin, kc, &["-n", ns, "get", "events.events.k8s.io"]);
        assert_eq!(names(&core), ["web.new", "web.old"]);
        assert_eq!(names(&newer), ["web.new", "web.old"]);
        let pick = |list: &Value, name: &str| {
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["metadata"]["name"] == name)
                .cloned()
                .unwrap()
        };
        let (a, b) = (pick(&core, "web.new"), pick(&newer, "web.new"));
        assert_eq!(a["metadata"]["uid"], b["metadata"]["uid"]);
        assert_eq!(
            a["metadata"]["resourceVersion"],
            b["metadata"]["resourceVersion"]
        );
        assert_eq!(a["message"], "scaled web up");
        assert_eq!(a["reportingComponent"], "flotilla-test");
        let old_new = pick(&newer, "web.old");
        assert_eq!(old_new["note"], "from the core api");
        assert_eq!(old_new["deprecatedCount"], 2);
        assert_eq!(old_new["deprecatedSource"]["component"], "old-controller");

        let for_web = must_quiet(bin, kc, &["-n", ns, "events", "--for", "deployment/web"]);
        assert!(
            for_web.contains("ScaledUp") && for_web.contains("LegacyReason"),
            "{bin} events --for:\n{for_web}"
        );
        let described = must_quiet(bin, kc, &["-n", ns, "describe", "deployment", "web"]);
        let events = described
            .split_once("Events:")
            .map(|(_, e)| e)
            .unwrap_or_else(|| panic!("{bin} describe has no Events section:\n{described}"));
        for want in [
            "ScaledUp",
            "scaled web up",
            "LegacyReason",
            "from the core api",
        ] {
            assert!(
                events.contains(want),
                "{bin} describe events lack {want}:\n{described}"
            );
        }
    }
}

#[test]
fn describe_works_for_pods_namespaces_and_custom_resources() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let crd = h.file("crd.json", CRD);
    for (i, bin, ns) in &kubectl_namespaces(kc, "desc") {
        if *i == 0 {
            must(bin, kc, &["apply", "-f", &crd]);
            must(
                bin,
                kc,
                &[
                    "wait",
                    "--for=condition=established",
                    "crd/gadgets.example.io",
                    "--timeout=20s",
                ],
            );
        }
        must(
            bin,
            kc,
            &[
                "-n",
                ns,
                "run",
                "solo",
                "--image=nginx",
                "--labels=app=solo",
            ],
        );
        let pod = must_quiet(bin, kc, &["-n", ns, "describe", "pod", "solo"]);
        assert!(
            pod.contains("solo") && pod.contains("nginx") && pod.contains("app=solo"),
            "{pod}"
        );
        let namespace = must_quiet(bin, kc, &["describe", "namespace", ns]);
        assert!(namespace.contains("Active"), "{namespace}");
        let gadget = json!({"apiVersion": "example.io/v1", "kind": "Gadget",
            "metadata": {"name": "g1", "namespace": ns}, "spec": {"size": 3, "color": "red"}});
        let f = h.file(&format!("gadget{i}.json"), &gadget.to_string());
        must(bin, kc, &["apply", "-f", &f]);
        let custom = must_quiet(bin, kc, &["-n", ns, "describe", "gadget", "g1"]);
        assert!(
            custom.contains("g1") && custom.contains("Gadget") && custom.contains("red"),
            "{custom}"
        );
    }
}

#[test]
fn get_all_lists_the_all_category() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (_, bin, ns) in &kubectl_namespaces(kc, "all") {
        must(
            bin,
            kc,
            &["-n", ns, "create", "deployment", "web", "--image=nginx"],
        );
        must(
            bin,
            kc,
            &[
                "-n",
                ns,
                "create",
                "service",
                "clusterip",
                "front",
                "--tcp=80:80",
            ],
        );
        must(
            bin,
            kc,
            &[
                "-n",
                ns,
                "create",
                "cronjob",
                "tick",
                "--image=busybox",
                "--schedule=*/5 * * * *",
            ],
        );
        must(
            bin,
            kc,
            &[
                "-n",
                ns,
                "create",
                "configmap",
                "settings",
                "--from-literal=a=b",
            ],
        );
        let out = must_quiet(bin, kc, &["-n", ns, "get", "all"]);
        for want in ["deployment.apps/web", "service/front", "cronjob.batch/tick"] {
            assert!(out.contains(want), "{bin} get all lacks {want}:\n{out}");
        }
        assert!(
            !out.contains("settings"),
            "a ConfigMap is not in `all`:\n{out}"
        );
    }
    // Legacy discovery names the same category for exactly the kinds kube-apiserver puts in it.
    let bin = &kubectl_bins()[0];
    let expected = [
        (
            "/api/v1",
            &["pods", "replicationcontrollers", "services"][..],
        ),
        (
            "/apis/apps/v1",
            &["daemonsets", "deployments", "replicasets", "statefulsets"][..],
        ),
        ("/apis/batch/v1", &["cronjobs", "jobs"][..]),
        ("/apis/autoscaling/v2", &["horizontalpodautoscalers"][..]),
    ];
    for (path, want) in expected {
        let doc: Value = serde_json::from_str(&must(bin, kc, &["get", "--raw", path])).unwrap();
        let mut in_all: Vec<&str> = doc["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["categories"]
                    .as_array()
                    .is_some_and(|c| c.contains(&json!("all")))
            })
            .filter_map(|r| r["name"].as_str())
            .collect();
        in_all.sort_unstable();
        assert_eq!(in_all, want, "{path}");
    }
}

fn cm(ns: &str, value: &str) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf", "namespace": ns},
        "data": {"a": value}})
    .to_string()
}

#[test]
fn diff_and_server_dry_run_change_nothing() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (i, bin, ns) in &kubectl_namespaces(kc, "dry") {
        let same = h.file(&format!("same{i}.json"), &cm(ns, "1"));
        let changed = h.file(&format!("changed{i}.json"), &cm(ns, "2"));
        must(bin, kc, &["apply", "-f", &same]);
        let stored = get_json(bin, kc, &["-n", ns, "get", "configmap", "conf"]);
        let rv = stored["metadata"]["resourceVersion"].clone();

        for extra in [&[][..], &["--server-side", "--force-conflicts"][..]] {
            let mut args = vec!["diff", "-f", &same];
            args.extend(extra);
            let (code, out, err) = kubectl_split(bin, kc, &args);
            assert_eq!(
                code,
                Some(0),
                "{bin} {args:?} on an unchanged object: {out}{err}"
            );
            assert!(out.is_empty(), "{out}");
            let mut args = vec!["diff", "-f", &changed];
            args.extend(extra);
            let (code, out, err) = kubectl_split(bin, kc, &args);
            assert_eq!(
                code,
                Some(1),
                "{bin} {args:?} on a changed object: {out}{err}"
            );
            assert!(
                out.contains("-  a: \"1\"") && out.contains("+  a: \"2\""),
                "{out}"
            );
            // The dry-run answer carries the live resourceVersion, so it is not part of the diff.
            assert!(!out.contains("resourceVersion"), "{out}");
        }

        let dry = get_json(bin, kc, &["apply", "--dry-run=server", "-f", &changed]);
        assert_eq!(dry["data"]["a"], "2");
        assert_eq!(dry["metadata"]["resourceVersion"], rv);
        let after = get_json(bin, kc, &["-n", ns, "get", "configmap", "conf"]);
        assert_eq!(after["data"]["a"], "1", "a dry run persisted: {after}");
        assert_eq!(after["metadata"]["resourceVersion"], rv);
    }
}

#[test]
fn python_client_reads_and_watches_events_across_both_apis() {
    let h = Harness::start();
    let script = r#"
import sys, datetime
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1, ev = client.CoreV1Api(), client.EventsV1Api()
ns = "default"
now = datetime.datetime.now(datetime.timezone.utc)
ref = client.V1ObjectReference(api_version="v1", kind="ConfigMap", name="cfg", namespace=ns, uid="u-1")
created = ev.create_namespaced_event(ns, client.EventsV1Event(metadata=client.V1ObjectMeta(name="py.new"),
    event_time=now, reporting_controller="py", reporting_instance="py-1", action="Act", reason="PyReason",
    note="from python", type="Normal", regarding=ref))
# kubectl describe's selector on the core API finds it.
sel = "involvedObject.name=cfg,involvedObject.namespace=default,involvedObject.kind=ConfigMap,involvedObject.uid=u-1"
items = v1.list_namespaced_event(ns, field_selector=sel).items
assert [e.metadata.name for e in items] == ["py.new"], items
assert items[0].message == "from python" and items[0].reporting_component == "py", items[0]
assert items[0].metadata.uid == created.metadata.uid, (items[0].metadata, created.metadata)
assert items[0].metadata.resource_version == created.metadata.resource_version
assert v1.list_namespaced_event(ns, field_selector="involvedObject.uid=other").items == []
# A core Event written during an events.k8s.io watch arrives there, renamed.
rv = ev.list_namespaced_event(ns).metadata.resource_version
w = watch.Watch()
v1.create_namespaced_event(ns, client.CoreV1Event(metadata=client.V1ObjectMeta(name="py.old"), involved_object=ref,
    reason="Core", message="from core", type="Warning", event_time=now, count=4, action="Act",
    reporting_component="py", reporting_instance="py-1"))
for e in w.stream(ev.list_namespaced_event, ns, resource_version=rv, timeout_seconds=5):
    o = e["object"]
    assert e["type"] == "ADDED" and o.metadata.name == "py.old", e
    assert o.note == "from core" and o.deprecated_count == 4 and o.regarding.name == "cfg", o
    w.stop()
    break
else:
    raise SystemExit("no watch event for the core Event")
print("ok")
"#;
    run_python(script, &h.kubeconfig);
}
