//! Shared by the tests that drive a server with real clients (kubectl, the Python client): a server on a free
//! port with its kubeconfig on disk, and helpers to run kubectl against it.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::path::PathBuf;

use flotilla_apiserver::{RunningServer, Server, ServerConfig};
pub(crate) use flotilla_testing::kubectl::*;

/// A server running on its own runtime, and a directory for its data, kubeconfig and manifests.
pub(crate) struct Harness {
    pub rt: tokio::runtime::Runtime,
    server: Option<RunningServer>,
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Harness {
    /// Starts a server with one seeded node.
    pub(crate) fn start() -> Self {
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
    pub(crate) fn port(&self) -> u16 {
        self.server.as_ref().map_or(0, |s| s.local_addr().port())
    }

    /// Writes `content` to `name` in the test directory and returns its path.
    pub(crate) fn file(&self, name: &str, content: &str) -> String {
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
