//! The built `flotilla` binary as users and scripts run it: `--help`, `crds`, and the one-line error contract.

use std::io::Read;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");
const MANIFESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/crds");

fn flotilla(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("flotilla runs")
}

#[test]
fn crds_prints_the_committed_manifests_as_one_stream() {
    let out = flotilla(&["crds"]);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    let expected: String = flotilla_api::crds::all()
        .iter()
        .map(|crd| {
            let path = format!("{MANIFESTS}/{}", flotilla_api::crds::file_name(crd));
            std::fs::read_to_string(&path).unwrap_or_else(|e| format!("<missing {path}: {e}>"))
        })
        .collect();
    assert!(
        stdout == expected,
        "`flotilla crds` differs from manifests/crds/ (regenerate them?)"
    );
    let crds: Vec<
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    > = flotilla_yaml::from_str_multiple(&stdout).expect("each document is a CRD");
    let kinds: Vec<String> = crds.into_iter().map(|crd| crd.spec.names.kind).collect();
    assert_eq!(kinds.len(), 12, "{kinds:?}");
    assert!(
        kinds
            .iter()
            .any(|k| k == "ResourceInterpreterWebhookConfiguration")
    );
}

#[test]
fn help_lists_the_subcommands() {
    let out = flotilla(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(help.contains("Usage: flotilla"), "{help}");
    assert!(help.contains("crds"), "{help}");
    let sub = flotilla(&["crds", "--help"]);
    assert!(sub.status.success());
    assert!(String::from_utf8_lossy(&sub.stdout).contains("Usage: flotilla crds"));
}

#[test]
fn unknown_subcommand_fails_with_an_error_line() {
    let out = flotilla(&["no-such-command"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
}

#[test]
fn a_failed_write_exits_non_zero_with_one_error_line() {
    // The stream is far larger than a pipe buffer, so closing our end makes the binary's write fail.
    let mut child = Command::new(BIN)
        .arg("crds")
        .env("RUST_LOG", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flotilla runs");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("stderr readable");
    let status = child.wait().expect("exits");
    assert!(!status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: failed to write the CRDs to stdout: "),
        "{stderr}"
    );
}
