//! Helpers shared by the tests that start `flotilla` processes: the workspace's test support, named as these
//! tests use it.
#![allow(dead_code, unused_imports)]

use std::path::Path;

use kube::Client;

pub use flotilla_testing::eventually;
pub use flotilla_testing::process::{Proc, free_port, start_ready};

/// A client for `context` of the kubeconfig at `path`.
pub async fn client(path: &Path, context: &str) -> Client {
    flotilla_testing::client_from_file(path, Some(context)).await
}

/// Starts `flotilla apiserver` on `port` (0: any) with its data in `dir/data` and its kubeconfig written to
/// `dir/kubeconfig`, plus `extra` arguments, and waits for its `ready:` line.
pub fn start_apiserver(dir: &Path, port: u16, extra: &[&str]) -> Proc {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .args(["apiserver", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--kubeconfig-out")
        .arg(dir.join("kubeconfig"))
        .args(extra)
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::null());
    start_ready(command, "ready: kubeconfig=", flotilla_testing::PATIENCE).0
}

/// `flotilla controller-manager` against the control plane of `karmada_config`, with its metrics on
/// `metrics_port`; callers add their own flags and output handling, then spawn it.
pub fn controller_manager(karmada_config: &Path, metrics_port: u16) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .arg("controller-manager")
        .arg("--kubeconfig")
        .arg(karmada_config)
        .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
    command
}
