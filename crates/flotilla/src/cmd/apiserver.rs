//! `flotilla apiserver`: just the embedded Kubernetes-compatible API server; prints `ready: kubeconfig=FILE` once it
//! serves.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use flotilla_apiserver::{Server, ServerConfig};

/// Arguments of `flotilla apiserver`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Directory for the store, certificates and admin token.
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Write a kubeconfig reaching the server to this file.
    #[arg(long)]
    pub kubeconfig_out: Option<PathBuf>,
    /// Context (and cluster/user) name in the written kubeconfig.
    #[arg(long, default_value = "flotilla")]
    pub context: String,
    /// Seed this many Node objects (`node-1` .. `node-N`).
    #[arg(long, default_value_t = 0)]
    pub nodes: usize,
    /// Allocatable CPU of each seeded node.
    #[arg(long, default_value = "8")]
    pub node_cpu: String,
    /// Allocatable memory of each seeded node.
    #[arg(long, default_value = "32Gi")]
    pub node_memory: String,
    /// Extra host names or addresses for the serving certificate.
    #[arg(long = "tls-san")]
    pub tls_san: Vec<String>,
    /// Requests in flight the server takes before it answers 429.
    #[command(flatten)]
    pub inflight: InflightArgs,
}

/// kube-apiserver's limits of requests in flight, with its flag names and defaults.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct InflightArgs {
    /// The most read-only requests in flight at once (watches and other long-running requests not counted);
    /// beyond it requests are answered 429 with Retry-After. 0 means no limit.
    #[arg(long, default_value_t = flotilla_apiserver::DEFAULT_MAX_REQUESTS_INFLIGHT)]
    pub max_requests_inflight: usize,
    /// The most mutating requests in flight at once; beyond it requests are answered 429 with Retry-After. 0
    /// means no limit.
    #[arg(long, default_value_t = flotilla_apiserver::DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT)]
    pub max_mutating_requests_inflight: usize,
}

impl Default for InflightArgs {
    fn default() -> Self {
        Self {
            max_requests_inflight: flotilla_apiserver::DEFAULT_MAX_REQUESTS_INFLIGHT,
            max_mutating_requests_inflight: flotilla_apiserver::DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
        }
    }
}

impl InflightArgs {
    /// Sets these limits on `config`.
    pub fn apply(&self, config: &mut ServerConfig) {
        config.max_requests_inflight = self.max_requests_inflight;
        config.max_mutating_requests_inflight = self.max_mutating_requests_inflight;
    }
}

/// Runs the server until SIGINT or SIGTERM, then flushes the store.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let mut config = ServerConfig::new(args.listen, &args.data_dir);
    config.nodes = args.nodes;
    config.node_cpu = args.node_cpu;
    config.node_memory = args.node_memory;
    config.extra_hosts = args.tls_san;
    args.inflight.apply(&mut config);
    let server = Server::start(config).await.with_context(|| {
        format!(
            "failed to start the API server on {} with data dir {}",
            args.listen,
            args.data_dir.display()
        )
    })?;
    let kubeconfig = server.kubeconfig(&args.context);
    let out = args
        .kubeconfig_out
        .unwrap_or_else(|| args.data_dir.join("kubeconfig"));
    flotilla_apiserver::kubeconfig::write(&out, &kubeconfig)
        .with_context(|| format!("failed to write the kubeconfig {}", out.display()))?;
    println!("ready: kubeconfig={}", out.display());
    tracing::info!(address = %server.local_addr(), "API server ready");
    wait_for_signal().await;
    server.shutdown().await;
    Ok(())
}

/// Waits for SIGINT or SIGTERM (only Ctrl-C where SIGTERM cannot be watched).
pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
