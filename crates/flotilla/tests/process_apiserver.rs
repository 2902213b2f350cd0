//! Starts real `flotilla apiserver` processes and drives them with kubectl, kube-rs and the Python client.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use flotilla_testing::kubectl::{kubectl, kubectl_bins, must, run_python};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use common::{Proc, free_port, start_apiserver};

/// A `flotilla apiserver` process and the kubeconfig it wrote.
struct Apiserver {
    proc: Proc,
    kubeconfig: PathBuf,
}

fn start(dir: &Path, port: u16) -> Apiserver {
    Apiserver {
        proc: start_apiserver(dir, port, &["--nodes", "2"]),
        kubeconfig: dir.join("kubeconfig"),
    }
}

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.io"},
"spec":{"group":"example.io","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget","shortNames":["wd"]},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;

#[test]
fn kubectl_crd_lifecycle_patch_status_and_wait() {
    let dir = tempfile::tempdir().unwrap();
    let p = start(dir.path(), free_port());
    let crd = dir.path().join("crd.json");
    std::fs::write(&crd, CRD).unwrap();
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let kc = &p.kubeconfig;
        must(bin, kc, &["apply", "-f", crd.to_str().unwrap()]);
        must(
            bin,
            kc,
            &[
                "wait",
                "--for=condition=established",
                "crd/widgets.example.io",
                "--timeout=20s",
            ],
        );
        let name = format!("w{i}");
        let cr = dir.path().join(format!("{name}.json"));
        std::fs::write(&cr, json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default"}, "spec": {"size": 1}}).to_string()).unwrap();
        must(bin, kc, &["apply", "-f", cr.to_str().unwrap()]);
        assert!(must(bin, kc, &["get", "wd"]).contains(&name));
        must(
            bin,
            kc,
            &[
                "patch",
                "widget",
                &name,
                "--type=merge",
                "-p",
                r#"{"spec":{"size":3}}"#,
            ],
        );
        must(
            bin,
            kc,
            &[
                "patch",
                "widget",
                &name,
                "--type=json",
                "-p",
                r#"[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]"#,
            ],
        );
        must(
            bin,
            kc,
            &[
                "patch",
                "widget",
                &name,
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"ready":true}}"#,
            ],
        );
        let got = must(bin, kc, &["get", "widget", &name, "-o", "json"]);
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v["spec"]["size"], 3);
        assert_eq!(v["status"]["ready"], true);
        assert_eq!(v["metadata"]["generation"], 2);
        assert_eq!(v["metadata"]["labels"]["a"], "b");
        must(bin, kc, &["delete", "widget", &name]);
        let (ok, text) = kubectl(bin, kc, &["get", "widget", &name]);
        assert!(!ok && text.contains("NotFound"), "{text}");
    }
    must(
        &kubectl_bins()[0],
        &p.kubeconfig,
        &["delete", "crd", "widgets.example.io"],
    );
    let (ok, text) = kubectl(&kubectl_bins()[0], &p.kubeconfig, &["get", "widgets"]);
    assert!(!ok, "widgets still served after CRD deletion: {text}");
}

async fn client(kubeconfig: &Path) -> Client {
    flotilla_testing::client_from_file(kubeconfig, None).await
}

#[test]
fn kill_9_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut p = start(dir.path(), port);
    let cms: Api<ConfigMap> =
        rt.block_on(async { Api::namespaced(client(&p.kubeconfig).await, "default") });
    // Eight writers create ConfigMaps as fast as they are acknowledged; the server is killed while they run,
    // so some writes are in flight at that moment. Only acknowledged ones must survive.
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, u64)>::new()));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (cms, acked) = (cms.clone(), acked.clone());
            rt.spawn(async move {
                for i in 0.. {
                    let name = format!("cm-{w}-{i}");
                    let cm: ConfigMap = serde_json::from_value(
                        json!({"metadata": {"name": name}, "data": {"i": i.to_string()}}),
                    )
                    .unwrap();
                    match cms.create(&PostParams::default(), &cm).await {
                        Ok(c) => {
                            let rv = c.metadata.resource_version.unwrap().parse().unwrap();
                            acked.lock().unwrap().push((name, rv));
                        }
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.lock().unwrap().len() < 200 {
        assert!(Instant::now() < deadline, "writers stalled");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SIGKILL: no chance to flush anything.
    p.proc.0.kill().unwrap();
    p.proc.0.wait().unwrap();
    for w in writers {
        rt.block_on(w).unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let last_rv = acked.iter().map(|(_, rv)| *rv).max().unwrap();
    let p = start(dir.path(), port);
    rt.block_on(async {
        let cms: Api<ConfigMap> = Api::namespaced(client(&p.kubeconfig).await, "default");
        let list = cms.list(&ListParams::default()).await.unwrap();
        let names: std::collections::HashSet<String> = list
            .items
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        for (name, _) in &acked {
            assert!(names.contains(name), "{name} was acknowledged but lost");
        }
        let rv: u64 = list.metadata.resource_version.unwrap().parse().unwrap();
        assert!(
            rv >= last_rv,
            "resourceVersion went backwards: {rv} < {last_rv}"
        );
        // New writes continue above every acknowledged resourceVersion.
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": "after-restart"}})).unwrap();
        let created = cms.create(&PostParams::default(), &cm).await.unwrap();
        let new_rv: u64 = created.metadata.resource_version.unwrap().parse().unwrap();
        assert!(new_rv > last_rv, "{new_rv} <= {last_rv}");
    });
}

#[test]
fn sigterm_shuts_down_cleanly_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut p = start(dir.path(), port);
    rt.block_on(async {
        let cms: Api<ConfigMap> = Api::namespaced(client(&p.kubeconfig).await, "default");
        let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "kept"}})).unwrap();
        cms.create(&PostParams::default(), &cm).await.unwrap();
    });
    let pid = p.proc.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = p.proc.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "no exit within 10 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    let p = start(dir.path(), port);
    rt.block_on(async {
        let cms: Api<ConfigMap> = Api::namespaced(client(&p.kubeconfig).await, "default");
        assert!(cms.get_opt("kept").await.unwrap().is_some());
    });
}

#[test]
fn python_client_crud_watch_and_paging() {
    let dir = tempfile::tempdir().unwrap();
    let p = start(dir.path(), free_port());
    let script = r#"
import sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
assert v1.get_api_resources().resources
for i in range(5):
    v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"p{i}", labels={"t": "py"}), data={"i": str(i)}))
page = v1.list_namespaced_config_map("default", limit=2, label_selector="t=py")
assert len(page.items) == 2 and page.metadata._continue, page.metadata
seen = [c.metadata.name for c in page.items]
while page.metadata._continue:
    page = v1.list_namespaced_config_map("default", limit=2, label_selector="t=py", _continue=page.metadata._continue)
    seen += [c.metadata.name for c in page.items]
assert seen == [f"p{i}" for i in range(5)], seen
rv = v1.list_namespaced_config_map("default").metadata.resource_version
v1.patch_namespaced_config_map("p0", "default", {"data": {"x": "y"}})
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=10):
    assert ev["type"] == "MODIFIED" and ev["object"].metadata.name == "p0", ev["type"]
    w.stop()
v1.delete_namespaced_config_map("p1", "default")
try:
    v1.read_namespaced_config_map("p1", "default")
    raise SystemExit("p1 still exists")
except client.exceptions.ApiException as e:
    assert e.status == 404
print("ok")
"#;
    run_python(script, &p.kubeconfig);
}
