//! kubectl and the Python client as judges: every kubectl the test environment provides (hack/test-deps.sh
//! puts the newest from PyPI in `FLOTILLA_TEST_KUBECTL_NEW`; `FLOTILLA_TEST_KUBECTL` may name another), and
//! the environment's Python with the `kubernetes` client.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Every kubectl the test environment provides (see hack/test-deps.sh), `kubectl` on PATH otherwise.
pub fn kubectl_bins() -> Vec<String> {
    let mut found: Vec<String> = ["FLOTILLA_TEST_KUBECTL_NEW", "FLOTILLA_TEST_KUBECTL"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .collect();
    // Both name the same binary when the newest kubectl is also the first on PATH: run it once.
    found.dedup();
    if found.is_empty() {
        vec!["kubectl".to_string()]
    } else {
        found
    }
}

/// Runs kubectl; returns whether it succeeded and its stdout and stderr together.
pub fn kubectl(bin: &str, kubeconfig: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(bin)
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Runs kubectl; returns its exit code, stdout and stderr apart.
pub fn kubectl_split(bin: &str, kubeconfig: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(bin)
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs kubectl and fails the test unless it succeeds without writing anything to stderr; returns stdout.
pub fn must_quiet(bin: &str, kubeconfig: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = kubectl_split(bin, kubeconfig, args);
    assert!(
        code == Some(0) && stderr.is_empty(),
        "{bin} {args:?} exited {code:?}, stderr: {stderr}\nstdout: {stdout}"
    );
    stdout
}

/// Runs kubectl and fails the test unless it succeeds.
pub fn must(bin: &str, kubeconfig: &Path, args: &[&str]) -> String {
    let (ok, text) = kubectl(bin, kubeconfig, args);
    assert!(ok, "{bin} {args:?} failed: {text}");
    text
}

/// One fresh namespace per kubectl under test: `(i, bin, "<prefix><i>")`, each created with that kubectl.
pub fn kubectl_namespaces(kubeconfig: &Path, prefix: &str) -> Vec<(usize, String, String)> {
    kubectl_bins()
        .into_iter()
        .enumerate()
        .map(|(i, bin)| {
            let ns = format!("{prefix}{i}");
            must(&bin, kubeconfig, &["create", "namespace", &ns]);
            (i, bin, ns)
        })
        .collect()
}

/// Runs kubectl with `-o json` and parses the output.
pub fn get_json(bin: &str, kubeconfig: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&must(bin, kubeconfig, &all))
        .unwrap_or_else(|e| panic!("kubectl {args:?} -o json printed no JSON: {e}"))
}

/// The header line of a `kubectl get` table, as column names.
pub fn header(output: &str) -> Vec<String> {
    output
        .lines()
        .next()
        .unwrap_or_default()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// The whitespace-separated cells of the output line whose first cell is `first`.
pub fn row(output: &str, first: &str) -> Vec<String> {
    output
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .find(|cells| cells.first().map(String::as_str) == Some(first))
        .unwrap_or_else(|| panic!("no row {first} in:\n{output}"))
}

/// Runs a Python script with the test environment's interpreter (`FLOTILLA_TEST_PYTHON`, `python3` otherwise)
/// and the kubeconfig path as its first argument; fails the test unless it exits 0 and prints `ok`.
pub fn run_python(script: &str, kubeconfig: &Path) {
    let python = std::env::var("FLOTILLA_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(kubeconfig)
        .output()
        .expect("python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && text.contains("ok"), "{text}");
}
