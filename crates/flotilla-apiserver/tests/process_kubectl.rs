//! The server as kubectl sees it (the PyPI 1.37 build and the machine's 1.32 dispatcher, each a separate
//! process): `apply`/`create -f` with default validation (OpenAPI), `get` with server-side Tables (built-in
//! printers, CRD printer columns, all namespaces), `get --watch`, and namespace deletion.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{Harness, kubectl, kubectl_bins, kubectl_namespaces, must, row};

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: boxes.example.io}
spec:
  group: example.io
  scope: Namespaced
  names: {plural: boxes, singular: box, kind: Box}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string, default: blue}
";

#[test]
fn apply_with_validation_and_server_side_tables() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (i, bin, ns) in &kubectl_namespaces(kc, "tables-") {
        // Default `--validate`: kubectl fetches /openapi/v3 (1.27+) or the protobuf /openapi/v2 (1.20) first.
        let deploy = h.file(
            &format!("deploy-{i}.yaml"),
            &format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  replicas: 2\n  \
                 selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    \
                 spec: {{containers: [{{name: c, image: nginx}}]}}\n"
            ),
        );
        must(bin, kc, &["apply", "-f", &deploy]);
        let out = must(bin, kc, &["get", "deployments", "-n", ns]);
        let header = row(&out, "NAME");
        assert_eq!(
            header,
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            "{bin}: {out}"
        );
        assert_eq!(row(&out, "web")[1], "0/2", "{bin}: {out}");

        let crd = h.file("crd.yaml", CRD);
        must(bin, kc, &["apply", "-f", &crd]);
        must(
            bin,
            kc,
            &[
                "wait",
                "--for=condition=established",
                "crd/boxes.example.io",
                "--timeout=20s",
            ],
        );
        let cr = h.file(
            &format!("box-{i}.yaml"),
            &format!(
                "apiVersion: example.io/v1\nkind: Box\nmetadata: {{name: b1, namespace: {ns}}}\nspec: {{size: 3}}\n"
            ),
        );
        must(bin, kc, &["create", "-f", &cr]);
        let out = must(bin, kc, &["get", "boxes", "-n", ns]);
        // Declared printer columns replace the implied Age column, as upstream.
        assert_eq!(row(&out, "NAME"), ["NAME", "SIZE", "COLOR"], "{out}");
        // The schema default shows in the printer column.
        assert_eq!(row(&out, "b1")[1..3], ["3", "blue"], "{bin}: {out}");

        let out = must(bin, kc, &["get", "deployments", "-A"]);
        assert_eq!(row(&out, "NAMESPACE")[..2], ["NAMESPACE", "NAME"], "{out}");
        assert_eq!(row(&out, ns)[1], "web", "{out}");
        let out = must(bin, kc, &["get", "namespace", ns]);
        assert_eq!(row(&out, ns)[1], "Active", "{out}");
    }
}

/// Runs `kubectl get <args> --watch` until a line starting with `expect` appears, calling `then` once the
/// first line is out (so the watch is established).
fn watch_until(bin: &str, kubeconfig: &Path, args: &[&str], expect: &str, then: impl FnOnce()) {
    let mut child = Command::new(bin)
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .arg("--watch")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(15));
    let mut then = Some(then);
    let mut seen = vec![first.clone().unwrap_or_default()];
    if first.is_ok()
        && let Some(f) = then.take()
    {
        f();
    }
    let found = seen[0].starts_with(expect)
        || loop {
            match rx.recv_timeout(Duration::from_secs(15)) {
                Ok(line) if line.starts_with(expect) => break true,
                Ok(line) => seen.push(line),
                Err(_) => break false,
            }
        };
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "{bin} get --watch never printed {expect}: {seen:?}");
}

#[test]
fn get_watch_prints_new_rows_and_namespace_deletion_completes() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (_i, bin, ns) in &kubectl_namespaces(kc, "watched-") {
        must(bin, kc, &["create", "configmap", "first", "-n", ns]);
        let create_second = || {
            must(bin, kc, &["create", "configmap", "second", "-n", ns]);
        };
        watch_until(
            bin,
            kc,
            &["get", "configmaps", "-n", ns],
            "second",
            create_second,
        );
        // `kubectl delete namespace` waits until the namespace and its content are gone.
        must(bin, kc, &["delete", "namespace", ns, "--timeout=20s"]);
        let (ok, text) = kubectl(bin, kc, &["get", "namespace", ns]);
        assert!(!ok && text.contains("NotFound"), "{text}");
    }
}

#[test]
fn field_validation_strict_warn_and_type_errors() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let name = format!("fv-{i}");
        let cm = h.file(
            &format!("{name}.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default, colour: red}}\ndata: {{k: v}}\nbogus: 1\n"
            ),
        );
        // kubectl's default --validate=strict: the real server refuses unknown fields.
        let (ok, text) = kubectl(bin, kc, &["apply", "-f", &cm]);
        assert!(!ok, "{bin}: {text}");
        assert!(
            text.contains("strict decoding error: unknown field \"bogus\"")
                && text.contains("unknown field \"metadata.colour\""),
            "{bin}: {text}"
        );
        // --validate=warn: stored without them, one warning each.
        let text = must(bin, kc, &["apply", "--validate=warn", "-f", &cm]);
        assert!(text.contains("unknown field \"bogus\""), "{bin}: {text}");
        let got = must(bin, kc, &["get", "configmap", &name, "-o", "json"]);
        let got: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert!(got.get("bogus").is_none() && got["metadata"].get("colour").is_none());
        assert_eq!(got["data"]["k"], "v");

        let bad = h.file(
            &format!("bad-{i}.yaml"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad, namespace: default}\nspec: {replicas: two}\n",
        );
        let (ok, text) = kubectl(bin, kc, &["apply", "--validate=false", "-f", &bad]);
        assert!(
            !ok && text.contains("cannot be handled as a Deployment"),
            "{bin}: {text}"
        );
    }
}

/// Both clients create objects that carry only `generateName` (issue 15): kubectl `create -f` (twice from one
/// manifest, two names) and the Python client, including a dry run and a core Event whose prefix ends in `.`.
#[test]
fn create_with_generate_name_from_kubectl_and_python() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    const ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";
    let generated = |name: &str, prefix: &str| {
        name.len() == prefix.len() + 5
            && name.starts_with(prefix)
            && name[prefix.len()..].chars().all(|c| ALPHABET.contains(c))
    };
    for (i, bin, ns) in &kubectl_namespaces(kc, "gen-") {
        let cm = h.file(
            &format!("gen-{i}.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{generateName: web-, namespace: {ns}, labels: {{gen: \"yes\"}}}}\ndata: {{k: v}}\n"
            ),
        );
        let first = must(bin, kc, &["create", "-f", &cm, "-o", "name"]);
        let second = must(bin, kc, &["create", "-f", &cm, "-o", "name"]);
        let names: Vec<&str> = [&first, &second]
            .iter()
            .map(|out| out.trim().trim_start_matches("configmap/"))
            .collect();
        assert!(
            names.iter().all(|n| generated(n, "web-")),
            "{bin}: {names:?}"
        );
        assert_ne!(names[0], names[1], "{bin}");
        let listed = must(
            bin,
            kc,
            &["get", "configmaps", "-n", ns, "-l", "gen", "-o", "name"],
        );
        assert_eq!(listed.lines().count(), 2, "{bin}: {listed}");
    }
    let script = r#"
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")
def generated(name, prefix):
    return name.startswith(prefix) and len(name) == len(prefix) + 5 and set(name[len(prefix):]) <= ALPHABET
body = client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="py-"), data={"k": "v"})
made = v1.create_namespaced_config_map("default", body)
assert generated(made.metadata.name, "py-"), made.metadata.name
assert v1.read_namespaced_config_map(made.metadata.name, "default").data == {"k": "v"}
dry = v1.create_namespaced_config_map("default", body, dry_run="All")
assert generated(dry.metadata.name, "py-"), dry.metadata.name
try:
    v1.read_namespaced_config_map(dry.metadata.name, "default")
    raise AssertionError("a dry run stored " + dry.metadata.name)
except client.ApiException as e:
    assert e.status == 404, e
long = "a" * 70 + "-"
made = v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name=long)))
assert generated(made.metadata.name, long[:58]), made.metadata.name
ev = client.CoreV1Event(metadata=client.V1ObjectMeta(generate_name="web."), reason="Tested", message="m", type="Normal",
    involved_object=client.V1ObjectReference(api_version="v1", kind="ConfigMap", name="x", namespace="default"))
made = v1.create_namespaced_event("default", ev)
assert generated(made.metadata.name, "web."), made.metadata.name
try:
    v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="Bad_")))
    raise AssertionError("an invalid prefix was accepted")
except client.ApiException as e:
    assert e.status == 422 and "metadata.generateName" in e.body, e
print("ok")
"#;
    support::run_python(script, kc);
}
