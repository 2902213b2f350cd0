//! `flotilla interpret` run as users run it, without a control plane: the bundled layers answer, the output
//! is karmadactl's YAML stream, and unset rules or failures exit non-zero with one `error:` line.
#![allow(clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");

/// A Deployment that reaches every native rule: a main container, an init container and a sidecar with requests and
/// limits, a node selector and tolerations.
const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  generation: 4
  annotations:
    resourcetemplate.karmada.io/generation: "4"
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: web
      nodeSelector: {disktype: ssd}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      initContainers:
      - name: migrate
        image: migrate
        resources:
          requests: {cpu: "1", memory: 256Mi}
      containers:
      - name: web
        image: nginx
        envFrom:
        - configMapRef: {name: web-config}
        resources:
          requests: {cpu: 100m, memory: 512Mi}
          limits: {cpu: 200m}
      - name: sidecar
        image: envoy
        resources:
          limits: {cpu: "1.2", memory: 512Mi}
status:
  observedGeneration: 4
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {name}: {e}"));
    path
}

fn flotilla(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(BIN)
        .arg("interpret")
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("flotilla runs: {e}"));
    let mut input = child.stdin.take().unwrap_or_else(|| panic!("piped stdin"));
    let _ = input.write_all(stdin.unwrap_or_default().as_bytes());
    drop(input);
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("flotilla exits: {e}"))
}

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected failure, stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn interpret_replica_prints_replicas_and_requirements_like_karmadactl() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let deployment = write(dir.path(), "deployment.yaml", DEPLOYMENT);
    let out = flotilla(
        &[
            "--operation",
            "interpretReplica",
            "--desired-file",
            &deployment.display().to_string(),
        ],
        None,
    );
    let expected = "\
---
# [1/2] replica:
3
---
# [2/2] requires:
nodeClaim:
  nodeSelector:
    disktype: ssd
  tolerations:
  - effect: NoSchedule
    key: dedicated
    operator: Equal
    value: web
resourceRequest:
  cpu: 1300m
  memory: 1Gi
";
    assert_eq!(stdout_ok(&out), expected);
}

#[test]
fn operations_are_case_insensitive_and_explain_names_the_layer() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let deployment = write(dir.path(), "deployment.yaml", DEPLOYMENT)
        .display()
        .to_string();
    let out = flotilla(
        &[
            "--operation",
            "INTERPRETHEALTH",
            "--observed-file",
            &deployment,
            "--explain",
        ],
        None,
    );
    let text = stdout_ok(&out);
    assert!(
        text.starts_with("# InterpretHealth on apps/v1, Kind=Deployment:\n"),
        "{text}"
    );
    assert!(
        text.contains("#   native: answered (native Deployment handler)\n"),
        "{text}"
    );
    assert!(text.ends_with("---\n# [1/1] healthy:\ntrue\n"), "{text}");

    let out = flotilla(
        &[
            "--operation",
            "interpretDependency",
            "--desired-file",
            &deployment,
        ],
        None,
    );
    assert_eq!(
        stdout_ok(&out),
        "---\n# [1/1] dependencies:\n- apiVersion: v1\n  kind: ConfigMap\n  name: web-config\n  namespace: shop\n\
         - apiVersion: v1\n  kind: ServiceAccount\n  name: web\n  namespace: shop\n"
    );

    let out = flotilla(
        &[
            "--operation",
            "reviseReplica",
            "--desired-file",
            &deployment,
            "--desired-replica",
            "7",
        ],
        None,
    );
    let text = stdout_ok(&out);
    assert!(
        text.starts_with("---\n# [1/1] revised:\napiVersion: apps/v1\n"),
        "{text}"
    );
    assert!(text.contains("\n  replicas: 7\n"), "{text}");

    let out = flotilla(
        &[
            "--operation",
            "interpretStatus",
            "--observed-file",
            &deployment,
        ],
        None,
    );
    assert_eq!(
        stdout_ok(&out),
        "---\n# [1/1] status:\navailableReplicas: 3\ngeneration: 4\nobservedGeneration: 4\nreadyReplicas: 3\nreplicas: 3\n\
         resourceTemplateGeneration: 4\nupdatedReplicas: 3\n"
    );
}

#[test]
fn aggregate_status_reads_items_from_stdin() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let deployment = write(dir.path(), "deployment.yaml", DEPLOYMENT)
        .display()
        .to_string();
    let items = "\
clusterName: member1
applied: true
status: {replicas: 2, readyReplicas: 2, generation: 1, observedGeneration: 1, resourceTemplateGeneration: 4}
---
clusterName: member2
applied: true
status: {replicas: 1, readyReplicas: 0, generation: 1, observedGeneration: 1, resourceTemplateGeneration: 4}
";
    let out = flotilla(
        &[
            "--operation",
            "aggregateStatus",
            "--desired-file",
            &deployment,
            "--status-file",
            "-",
        ],
        Some(items),
    );
    let text = stdout_ok(&out);
    assert!(
        text.starts_with("---\n# [1/1] aggregatedStatus:\n"),
        "{text}"
    );
    let documents: Vec<serde_json::Value> =
        flotilla_yaml::from_str_multiple(&text).unwrap_or_else(|e| panic!("output is YAML: {e:?}"));
    let status = &documents[0]["status"];
    assert_eq!(status["replicas"], 3);
    assert_eq!(status["readyReplicas"], 2);
    assert_eq!(status["observedGeneration"], 4);
}

#[test]
fn unset_rules_and_bad_inputs_fail_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let deployment = write(dir.path(), "deployment.yaml", DEPLOYMENT)
        .display()
        .to_string();
    let job = write(
        dir.path(),
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {}}\n",
    );
    let two = write(
        dir.path(),
        "two.yaml",
        &format!("{DEPLOYMENT}\n---\n{DEPLOYMENT}"),
    )
    .display()
    .to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--operation",
                "interpretHealth",
                "--observed-file",
                job.to_str().unwrap_or_default(),
            ],
            "error: rule is not enabled for InterpretHealth\n",
        ),
        (
            vec!["--operation", "frobnicate", "--observed-file", &deployment],
            "error: operation frobnicate is not supported. Use one of: Retain, InterpretReplica, InterpretComponent, ReviseReplica, InterpretStatus, AggregateStatus, InterpretHealth, InterpretDependency\n",
        ),
        (
            vec!["--desired-file", &deployment],
            "error: operation is not set for executing\n",
        ),
        (
            vec!["--operation", "retain", "--desired-file", &deployment],
            "error: observed, observed-file options are not set\n",
        ),
        (
            vec!["--operation", "interpretReplica"],
            "error: desired-file, observed-file options are not set\n",
        ),
        (
            vec![
                "--operation",
                "interpretReplica",
                "--desired-file",
                &deployment,
                "--observed-file",
                &deployment,
            ],
            "error: you can not specify both desired-file and observed-file options\n",
        ),
        (
            vec!["--operation", "interpretReplica", "--desired-file", &two],
            "error: --desired-file: get 2 objects, expect one at most\n",
        ),
    ];
    for (args, expected) in cases {
        let out = flotilla(&args, None);
        assert_eq!(stderr_failed(&out), expected, "{args:?}");
    }
    let broken = write(
        dir.path(),
        "broken.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\nspec: {replicas: many}\n",
    );
    let out = flotilla(
        &[
            "--operation",
            "interpretReplica",
            "--desired-file",
            broken.to_str().unwrap_or_default(),
        ],
        None,
    );
    let stderr = stderr_failed(&out);
    assert!(stderr.starts_with("error: failed to execute InterpretReplica: native interpreter failed for InterpretReplica on Deployment b"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
