//! `flotilla up`: the whole embedded environment in one process, until SIGINT or SIGTERM: control plane, members with
//! seeded Nodes and workload simulators (member3 in Pull mode with its in-process agent), optionally the example
//! interpreter webhook, and the controllers, which serve the status page (its URL in `DIR/status.url`, for `flotilla status`).
//! Prints short progress lines on stderr, then exactly one line on stdout when ready:
//! `ready: karmada=DIR/karmada.config members=DIR/members.config`.

pub mod control;
mod controllers;
mod env;
pub mod install;
pub mod kubeconfigs;
pub mod member;
pub mod pull_member;
pub mod remembered;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use flotilla_controllers::features::FeatureGates;

use super::kube_access::ApiRateLimits;

pub use env::{Environment, Member, STATUS_URL_FILE, UpConfig};
pub use controllers::InProcessControllers;
pub use pull_member::InProcessAgent;

/// Arguments of `flotilla up`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Number of member clusters (`member1` .. `memberN`). As in Karmada's local-up, member3 is a Pull member
    /// (served by an agent inside this process, as `flotilla agent` would serve it), every other one Push.
    #[arg(long, default_value_t = 3)]
    pub members: usize,
    /// Where everything is stored (default `~/.flotilla`); starting again with the same directory resumes.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// The control plane listens on 127.0.0.1:BASE, member i on BASE+i (0: any free ports).
    #[arg(long = "port", value_name = "BASE", default_value_t = 7443)]
    pub port: u16,
    /// Give member clusters no simulated workload controllers (status stays as clients write it).
    #[arg(long)]
    pub no_simulator: bool,
    /// Milliseconds the simulated workload controllers take to report a change.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub simulator_delay_ms: u64,
    /// Also serve the example Workload interpreter webhook and register it; the data dir remembers this, so a
    /// later start without the flag serves it too.
    #[arg(long, conflicts_with = "no_webhook_example")]
    pub webhook_example: bool,
    /// Stop serving the example webhook that the data dir was started with, and remove its registration.
    #[arg(long)]
    pub no_webhook_example: bool,
    /// Nodes seeded into each member cluster.
    #[arg(long, default_value_t = 3)]
    pub nodes_per_member: usize,
    /// Karmada's feature gates, as `Name=bool` pairs, over what Karmada's local-up enables (every alpha and beta
    /// gate; here those whose feature Flotilla has).
    #[arg(long, default_value = "")]
    pub feature_gates: String,
    /// How long a member must look unhealthy before its Ready turns False (e.g. after `flotilla member stop`).
    #[arg(long, default_value = "30s", value_parser = super::controller_manager::parse_duration)]
    pub cluster_failure_threshold: Duration,
    /// How long a member must look healthy before its Ready turns True again.
    #[arg(long, default_value = "30s", value_parser = super::controller_manager::parse_duration)]
    pub cluster_success_threshold: Duration,
    /// Client-side rate limits of the controllers towards the control plane and the members.
    #[command(flatten)]
    pub rate_limits: ApiRateLimits,
    /// Where to serve the status page (`flotilla status` reads it) and the controllers' /metrics, /healthz and
    /// /readyz; default 127.0.0.1 on BASE-1 (a free port with `--port 0`). The URL is written to DIR/status.url.
    #[arg(long, value_name = "ADDR")]
    pub status_addr: Option<std::net::SocketAddr>,
    /// Requests in flight each embedded API server takes before it answers 429.
    #[command(flatten)]
    pub inflight: super::apiserver::InflightArgs,
}

/// `~/.flotilla`.
pub(crate) fn default_data_dir() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("HOME is not set; pass --data-dir")?;
    Ok(PathBuf::from(home).join(".flotilla"))
}

impl Args {
    /// The library configuration these arguments describe, with what the data dir remembers for flags not
    /// given.
    ///
    /// # Errors
    /// When no data dir is given and `HOME` is not set, or the data dir's remembered options are damaged.
    pub fn config(&self) -> anyhow::Result<UpConfig> {
        let data_dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None => default_data_dir()?,
        };
        let mut config = UpConfig::new(data_dir);
        config.members = self.members;
        config.port = self.port;
        config.simulator = !self.no_simulator;
        config.simulator_delay = Duration::from_millis(self.simulator_delay_ms);
        config.webhook_example = if self.webhook_example || self.no_webhook_example {
            self.webhook_example
        } else {
            remembered::load(&config.data_dir)?.is_some_and(|r| r.webhook_example)
        };
        config.nodes_per_member = self.nodes_per_member;
        config.status_addr = self.status_addr;
        config.feature_gates = FeatureGates::local_up()
            .with(&self.feature_gates)
            .context("invalid --feature-gates")?;
        config.cluster_failure_threshold = self.cluster_failure_threshold;
        config.cluster_success_threshold = self.cluster_success_threshold;
        config.kube_api = self.rate_limits.kube_api();
        config.cluster_api = self.rate_limits.cluster_api();
        config.inflight = self.inflight;
        Ok(config)
    }
}

/// Starts the environment, reports ready, and runs until SIGINT or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let config = args.config()?;
    let progress = |line: &str| eprintln!("flotilla up: {line}");
    if config.webhook_example && !args.webhook_example {
        progress(&format!(
            "serving the example webhook: {} was started with --webhook-example (--no-webhook-example stops it)",
            config.data_dir.display()
        ));
    }
    let started = tokio::time::Instant::now();
    let environment = Environment::start(&config, &progress).await?;
    remembered::save(
        &config.data_dir,
        &remembered::Remembered {
            webhook_example: config.webhook_example,
        },
    )?;
    progress(&format!("ready in {} ms", started.elapsed().as_millis()));
    println!(
        "ready: karmada={} members={}",
        environment.karmada_config.display(),
        environment.members_config.display()
    );
    crate::shutdown_signal().await;
    progress("shutting down");
    environment.shutdown().await;
    Ok(())
}
