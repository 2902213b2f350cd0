//! The two servers under comparison: the embedded server started in-process and a real kube-apiserver (with
//! etcd and a control-plane kube-controller-manager) started by `hack/kube.sh`, each reachable through a
//! kube-rs client, a kubeconfig for kubectl and its address for TLS handshakes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use base64::Engine;
use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use serde_json::Value;

/// The name of the real cluster (also its kubeconfig context) and of the embedded server's context.
pub(crate) const CLUSTER: &str = "diff";

/// One server as the runner sees it.
pub(crate) struct Target {
    /// `embedded` or `kube-apiserver`, for messages.
    pub label: &'static str,
    /// Sends raw requests with the kubeconfig's credentials.
    pub client: kube::Client,
    /// Sends raw requests with no credentials of its own, for steps that carry their own `Authorization`.
    pub bare: kube::Client,
    /// For kubectl.
    pub kubeconfig: PathBuf,
    /// kubectl's discovery cache for this server alone.
    pub kubectl_cache: PathBuf,
    /// `host:port` the server listens on.
    pub address: String,
    /// The CA the server's certificate chains to, for TLS handshakes.
    pub ca_pem: Vec<u8>,
    /// The admission webhook of the run, which this server reaches under its own path prefix.
    pub webhook: Option<std::sync::Arc<super::webhook::WebhookServer>>,
}

impl Target {
    /// A target from a kubeconfig file; `label` names it in messages.
    pub(crate) async fn from_kubeconfig(
        label: &'static str,
        kubeconfig: PathBuf,
        scratch: &Path,
    ) -> Self {
        let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig is readable");
        let doc: Value = flotilla_yaml::from_str(&text).expect("kubeconfig is YAML");
        let cluster = &doc["clusters"][0]["cluster"];
        let server = cluster["server"]
            .as_str()
            .expect("kubeconfig names a server");
        let address = server.trim_start_matches("https://").to_string();
        let ca_pem = base64::engine::general_purpose::STANDARD
            .decode(
                cluster["certificate-authority-data"]
                    .as_str()
                    .expect("kubeconfig carries CA data"),
            )
            .expect("CA data is base64");
        let parsed: kube::config::Kubeconfig = flotilla_yaml::from_str(&text).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(parsed, &Default::default())
            .await
            .expect("client configuration from the kubeconfig");
        let mut bare = config.clone();
        bare.auth_info = kube::config::AuthInfo::default();
        let client = kube::Client::try_from(config).expect("client");
        let bare = kube::Client::try_from(bare).expect("client without credentials");
        let kubectl_cache = scratch.join(format!("kubectl-cache-{label}"));
        Self {
            label,
            client,
            bare,
            kubeconfig,
            kubectl_cache,
            address,
            ca_pem,
            webhook: None,
        }
    }

    /// The variables every case starts with on this server: `ns`, and the webhook's `webhook-url` (this
    /// server's prefix) and `webhook-ca` (its `caBundle`).
    pub(crate) fn initial_vars(&self, ns: &str) -> std::collections::BTreeMap<String, String> {
        let mut vars = std::collections::BTreeMap::from([("ns".to_string(), ns.to_string())]);
        if let Some(webhook) = &self.webhook {
            vars.insert("webhook-url".into(), webhook.url(self.label));
            vars.insert("webhook-ca".into(), webhook.ca_bundle());
        }
        vars
    }
}

/// The embedded server, fresh as a control plane is: no seeded Nodes.
pub(crate) async fn start_embedded(dir: &Path) -> (RunningServer, Target) {
    let config = ServerConfig::new(
        "127.0.0.1:0".parse().expect("address"),
        dir.join("embedded"),
    );
    let server = Server::start(config)
        .await
        .expect("the embedded server starts");
    let kubeconfig = dir.join("embedded.kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig(CLUSTER)).expect("write kubeconfig");
    let target = Target::from_kubeconfig("embedded", kubeconfig, dir).await;
    (server, target)
}

/// A real control plane started by `hack/kube.sh`; stops it when dropped, on failure too.
pub(crate) struct RealCluster {
    state: PathBuf,
    script: PathBuf,
}

impl RealCluster {
    /// Starts the cluster with its state under `dir`, after checking that the binaries are built (starting one
    /// must never begin a 13-minute build inside a test). Returns the cluster and its kubeconfig.
    pub(crate) fn start(dir: &Path) -> Result<(Self, PathBuf), String> {
        let root = repo_root();
        let script = root.join("hack/kube.sh");
        check_binaries(&root)?;
        // Own the state directory before starting, so a failed start is still cleaned up.
        let cluster = Self {
            state: dir.join(CLUSTER),
            script: script.clone(),
        };
        let out = Command::new("bash")
            .arg(&script)
            .args(["up", CLUSTER])
            .arg(dir)
            .arg("control-plane")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!(
                "hack/kube.sh up failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok((cluster, PathBuf::from(path)))
    }

    /// Stops the cluster's processes.
    pub(crate) fn stop(&self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("down")
            .arg(&self.state)
            .output();
    }

    /// The state directory, which holds the processes' logs.
    pub(crate) fn state(&self) -> &Path {
        &self.state
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The repository root (this crate sits in `crates/flotilla-apiserver`).
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Fails with the command to run when hack/kube.sh's cache lacks binaries built from the pinned modules.
/// The build keys are computed exactly as the script computes them.
fn check_binaries(root: &Path) -> Result<(), String> {
    let cache = std::env::var("FLOTILLA_KUBE_CACHE").map_or_else(
        |_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/flotilla/kube-v1.37.2")
        },
        PathBuf::from,
    );
    let missing = || {
        format!(
            "the real kube-apiserver, etcd and kube-controller-manager are not built in {}: run `hack/kube.sh build` \
             once (about 13 minutes on 2 cores from an empty Go cache; later runs take seconds)",
            cache.display()
        )
    };
    for bin in ["kube-apiserver", "kube-controller-manager", "etcd"] {
        if !cache.join("bin").join(bin).is_file() {
            return Err(missing());
        }
    }
    // Each tool's binaries carry the key of its own pinned modules (hack/kube/TOOL).
    for tool in ["k8s", "etcd"] {
        let built =
            std::fs::read_to_string(cache.join(format!("built-{tool}"))).map_err(|_| missing())?;
        let key = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "cat hack/kube/{tool}/go.mod hack/kube/{tool}/go.sum | sha256sum | cut -c1-16"
            ))
            .current_dir(root)
            .output()
            .map_err(|e| format!("cannot compute hack/kube.sh's build key of {tool}: {e}"))?;
        if String::from_utf8_lossy(&key.stdout).trim() != built.trim() {
            return Err(format!(
                "{} (the cached {tool} build is from other pinned modules)",
                missing()
            ));
        }
    }
    Ok(())
}

/// A rustls client configuration trusting only `ca_pem` and offering `alpn`.
pub(crate) fn tls_client(ca_pem: &[u8], alpn: &[String]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut &ca_pem[..]) {
        roots
            .add(cert.expect("CA PEM parses"))
            .expect("CA is a certificate");
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    Arc::new(config)
}
