//! What kubectl shows and checks through the documents and shapes the server derives: Table output of
//! `kubectl get` (built-in printers and CRD printer columns), OpenAPI-backed client-side validation and
//! `--dry-run=server`, CRD schema pruning, defaulting and validation, and built-in defaults.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

use crate::support;

use support::*;

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.io"},
"spec":{"group":"example.io","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget","shortNames":["wd"]},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
"additionalPrinterColumns":[
  {"name":"Size","type":"integer","jsonPath":".spec.size"},
  {"name":"Mode","type":"string","jsonPath":".spec.mode"},
  {"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"},
  {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}],
"schema":{"openAPIV3Schema":{"type":"object","properties":{
  "spec":{"type":"object","required":["size"],"properties":{
    "size":{"type":"integer","minimum":1,"maximum":10},
    "mode":{"type":"string","enum":["fast","safe"],"default":"safe"},
    "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
  "status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}"#;

fn install_crd(h: &Harness, bin: &str) {
    let crd = h.file("crd.json", CRD);
    must(bin, &h.kubeconfig, &["apply", "-f", &crd]);
    must(
        bin,
        &h.kubeconfig,
        &[
            "wait",
            "--for=condition=established",
            "crd/widgets.example.io",
            "--timeout=20s",
        ],
    );
}

#[test]
fn kubectl_get_prints_the_servers_columns() {
    let h = Harness::start();
    let bins = kubectl_bins();
    let kc = &h.kubeconfig;
    must(
        &bins[0],
        kc,
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=2",
        ],
    );
    must(
        &bins[0],
        kc,
        &[
            "create",
            "configmap",
            "settings",
            "--from-literal=a=1",
            "--from-literal=b=2",
        ],
    );
    must(&bins[0], kc, &["create", "namespace", "team-a"]);
    install_crd(&h, &bins[0]);
    let w = h.file("w.json", &json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default"}, "spec": {"size": 3}}).to_string());
    must(&bins[0], kc, &["apply", "-f", &w]);
    for bin in &bins {
        let deploy = must(bin, kc, &["get", "deployment", "web"]);
        assert_eq!(
            header(&deploy),
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            "{bin}: {deploy}"
        );
        assert!(
            deploy
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("web") && l.contains("0/2")),
            "{deploy}"
        );
        let wide = must(bin, kc, &["get", "deployment", "web", "-o", "wide"]);
        assert_eq!(
            header(&wide)[5..],
            ["CONTAINERS", "IMAGES", "SELECTOR"],
            "{wide}"
        );
        assert!(
            wide.contains("nginx:1.27") && wide.contains("app=web"),
            "{wide}"
        );
        let cm = must(bin, kc, &["get", "configmap", "settings"]);
        assert_eq!(header(&cm), ["NAME", "DATA", "AGE"]);
        assert!(
            cm.lines()
                .nth(1)
                .is_some_and(|l| l.split_whitespace().nth(1) == Some("2")),
            "{cm}"
        );
        let ns = must(bin, kc, &["get", "namespace", "team-a"]);
        assert_eq!(header(&ns), ["NAME", "STATUS", "AGE"]);
        assert!(ns.contains("Active"), "{ns}");
        let all = must(bin, kc, &["get", "configmaps", "-A"]);
        assert_eq!(header(&all)[..2], ["NAMESPACE", "NAME"], "{all}");
        assert!(
            all.lines()
                .any(|l| l.starts_with("default") && l.contains("settings")),
            "{all}"
        );
        let crd = must(bin, kc, &["get", "crd"]);
        assert_eq!(header(&crd), ["NAME", "CREATED AT"], "{crd}");
        let widgets = must(bin, kc, &["get", "widgets"]);
        assert_eq!(
            header(&widgets),
            ["NAME", "SIZE", "MODE", "READY", "AGE"],
            "{widgets}"
        );
        let row: Vec<&str> = widgets
            .lines()
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(row[..3], ["w1", "3", "safe"], "{widgets}");
        let nodes = must(bin, kc, &["get", "nodes"]);
        assert_eq!(
            header(&nodes),
            ["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
            "{nodes}"
        );
    }
}

#[test]
fn kubectl_validates_with_the_openapi_documents_and_dry_runs_on_the_server() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (i, bin) in kubectl_bins().iter().enumerate() {
        // Client-side validation on (the default): kubectl must be able to fetch and decode the documents.
        let cm = h.file(&format!("cm{i}.json"), &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("v{i}"), "namespace": "default"}, "data": {"a": "1"}}).to_string());
        must(bin, kc, &["apply", "-f", &cm]);
        // --dry-run=server needs the PATCH operation with dryRun in the documents, and must store nothing.
        let dry = h.file(&format!("dry{i}.json"), &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("dry{i}"), "namespace": "default"}}).to_string());
        let out = must(bin, kc, &["apply", "--dry-run=server", "-f", &dry]);
        assert!(out.contains("(server dry run)"), "{out}");
        let (ok, text) = kubectl(bin, kc, &["get", "configmap", &format!("dry{i}")]);
        assert!(
            !ok && text.contains("NotFound"),
            "dry run stored the object: {text}"
        );
    }
    // kubectl 1.27 (if the machine has it) still reads OpenAPI v2 for its checks.
    let old = "/usr/lib/google-cloud-sdk/bin/kubectl.1.27";
    if Path::new(old).exists() {
        let cm = h.file("old.json", &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old", "namespace": "default"}}).to_string());
        must(old, kc, &["apply", "-f", &cm]);
        must(old, kc, &["apply", "--dry-run=server", "-f", &cm]);
    }
}

#[test]
fn crd_schemas_prune_default_and_validate() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let bins = kubectl_bins();
    install_crd(&h, &bins[0]);
    for (i, bin) in bins.iter().enumerate() {
        let name = format!("w{i}");
        let obj = json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"size": 2, "unknown": "dropped", "free": {"any": {"thing": 1}}}});
        let f = h.file(&format!("{name}.json"), &obj.to_string());
        // kubectl's default --validate=strict makes a real server refuse the unknown field; warn lets it prune.
        let out = must(bin, kc, &["apply", "--validate=warn", "-f", &f]);
        assert!(out.contains("unknown field \"spec.unknown\""), "{out}");
        let got: Value =
            serde_json::from_str(&must(bin, kc, &["get", "widget", &name, "-o", "json"])).unwrap();
        assert_eq!(
            got["spec"],
            json!({"size": 2, "mode": "safe", "free": {"any": {"thing": 1}}}),
            "{bin}"
        );
        let bad = json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": format!("bad{i}"), "namespace": "default"},
            "spec": {"size": 11, "mode": "slow"}});
        let f = h.file(&format!("bad{i}.json"), &bad.to_string());
        let (ok, text) = kubectl(bin, kc, &["apply", "-f", &f]);
        assert!(!ok, "invalid widget accepted: {text}");
        assert!(
            text.contains(
                "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\""
            ),
            "{text}"
        );
    }
}

#[test]
fn built_in_defaults_show_on_created_objects() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let bin = &kubectl_bins()[0];
    must(
        bin,
        kc,
        &["create", "deployment", "web", "--image=nginx:1.27"],
    );
    must(
        bin,
        kc,
        &["create", "service", "clusterip", "web", "--tcp=80:8080"],
    );
    let deploy: Value =
        serde_json::from_str(&must(bin, kc, &["get", "deployment", "web", "-o", "json"])).unwrap();
    let spec = &deploy["spec"];
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(
        (pod["restartPolicy"].clone(), pod["dnsPolicy"].clone()),
        (json!("Always"), json!("ClusterFirst"))
    );
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        pod["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
    let svc: Value =
        serde_json::from_str(&must(bin, kc, &["get", "service", "web", "-o", "json"])).unwrap();
    let ip = svc["spec"]["clusterIP"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(ip.starts_with("10.9"), "cluster IP allocated: {svc}");
    assert_eq!(svc["spec"]["sessionAffinity"], "None");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    // A new Pod starts Pending, so kubectl's STATUS column is filled before anything runs it.
    must(bin, kc, &["run", "p", "--image=nginx:1.27"]);
    let pods = must(bin, kc, &["get", "pod", "p"]);
    assert!(
        pods.lines()
            .nth(1)
            .is_some_and(|l| l.split_whitespace().nth(2) == Some("Pending")),
        "{pods}"
    );
    let table = must(bin, kc, &["get", "service", "web"]);
    assert!(table.contains(&ip) && table.contains("80/TCP"), "{table}");
}
