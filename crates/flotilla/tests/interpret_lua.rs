//! `flotilla interpret` with customizations: `-f` runs only the given customizations (karmadactl's
//! behaviour), `--check` reports per operation, and `interpret test DIR` runs testdata cases.
#![allow(clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");
const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../manifests/examples/deployment-customization.yaml"
);

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: default}
spec:
  replicas: 2
  paused: false
  template:
    spec:
      serviceAccountName: robot
      containers:
      - {name: nginx, image: nginx, resources: {requests: {cpu: 100m, memory: 200Mi}, limits: {cpu: 200m}}}
      - {name: sidecar, image: envoy, resources: {limits: {cpu: '1.2'}}}
status: {replicas: 2, readyReplicas: 2}
";

fn flotilla(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("interpret")
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("flotilla runs: {e}"))
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {name}: {e}"));
    path.display().to_string()
}

#[test]
fn the_seed_customization_interprets_replicas_like_karmadactl() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let deployment = write(dir.path(), "deployment.yaml", DEPLOYMENT);
    let out = flotilla(&[
        "-f",
        SEED,
        "--operation",
        "interpretReplica",
        "--observed-file",
        &deployment,
    ]);
    assert_eq!(
        ok(&out),
        "---\n# [1/2] replica:\n2\n---\n# [2/2] requires:\nresourceRequest:\n  cpu: 1300m\n  memory: 200Mi\n"
    );

    let out = flotilla(&[
        "-f",
        SEED,
        "--operation",
        "interpretHealth",
        "--observed-file",
        &deployment,
        "--explain",
    ]);
    let text = ok(&out);
    assert!(
        text.contains("#   customization: answered (declarative-configuration-example)"),
        "{text}"
    );
    assert!(text.ends_with("# [1/1] healthy:\ntrue\n"), "{text}");

    let out = flotilla(&[
        "-f",
        SEED,
        "--operation",
        "interpretDependency",
        "--desired-file",
        &deployment,
    ]);
    assert_eq!(
        ok(&out),
        "---\n# [1/1] dependencies:\n- apiVersion: v1\n  kind: ServiceAccount\n  name: robot\n  namespace: default\n"
    );

    // Only the given customizations answer: the seed has no InterpretComponent rule, and native is not consulted.
    let out = flotilla(&[
        "-f",
        SEED,
        "--operation",
        "interpretComponent",
        "--desired-file",
        &deployment,
    ]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: rule is not enabled for InterpretComponent\n"
    );
}

#[test]
fn check_reports_each_operation_and_fails_on_errors() {
    let out = flotilla(&["-f", SEED, "--check"]);
    let text = ok(&out);
    assert!(
        text.contains(
            "SOURCE: declarative-configuration-example\nTARGET: apps/v1 Deployment\nRULERS:\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    InterpretComponent:      UNSET\n")
            && text.contains("    ReviseReplica:           PASS\n"),
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let broken = write(
        dir.path(),
        "broken.yaml",
        "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: broken}\n\
         spec:\n  target: {apiVersion: apps/v1, kind: Deployment}\n  customizations:\n    healthInterpretation:\n      \
         luaScript: 'function InterpretHealth(obj) return string.format( end'\n",
    );
    let out = flotilla(&["-f", &broken, "--check"]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("    InterpretHealth:         ERROR: "),
        "{text}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: some customizations failed the check\n"
    );
}

#[test]
fn test_runs_testdata_cases_beside_customizations() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kind = dir.path().join("apps/v1/Deployment");
    std::fs::create_dir_all(&kind).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(SEED, kind.join("customizations.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let cases = "\
name: replicas of the seed
operation: InterpretReplica
desiredObj: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 4, template: {spec: {containers: []}}}}
output:
  replica: 4
---
name: a wrong expectation
operation: InterpretHealth
observedObj: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 4}, status: {readyReplicas: 4}}
output:
  healthy: false
";
    write(&kind, "testdata/tests.yaml", cases);
    let out = flotilla(&["test", &dir.path().display().to_string()]);
    assert!(!out.status.success(), "one case fails");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("PASS ") && stdout.contains(": replicas of the seed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL ") && stdout.contains(": a wrong expectation"),
        "{stdout}"
    );
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");

    write(
        &kind,
        "testdata/tests.yaml",
        &cases.replace("healthy: false", "healthy: true"),
    );
    let out = flotilla(&["test", &dir.path().display().to_string()]);
    assert!(ok(&out).contains("2 passed, 0 failed"));
}
