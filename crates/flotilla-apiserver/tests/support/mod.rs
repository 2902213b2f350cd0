//! Shared by the tests that drive a server with real clients (kubectl, the Python client): a server on a free
//! port with its kubeconfig on disk, and helpers to run kubectl against it.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use serde_json::Value;

/// A server running on its own runtime, and a directory for its data, kubeconfig and manifests.
pub struct Harness {
    pub rt: tokio::runtime::Runtime,
    server: Option<RunningServer>,
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Harness {
    /// Starts a server with one seeded node.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir.path().join("data"));
        cfg.nodes = 1;
        let server = rt.block_on(Server::start(cfg)).expect("server starts");
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig("flotilla")).unwrap();
        Self {
            rt,
            server: Some(server),
            kubeconfig,
            dir,
        }
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.server.as_ref().map_or(0, |s| s.local_addr().port())
    }

    /// Writes `content` to `name` in the test directory and returns its path.
    pub fn file(&self, name: &str, content: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.rt.block_on(server.shutdown());
        }
    }
}

/// Every kubectl the test environment provides (see hack/test-deps.sh), `kubectl` on PATH otherwise.
pub fn kubectl_bins() -> Vec<String> {
    let found: Vec<String> = ["FLOTILLA_TEST_KUBECTL_NEW", "FLOTILLA_TEST_KUBECTL"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .collect();
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
    serde_json::from_str(&must(bin, kubeconfig, &all)).unwrap()
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
