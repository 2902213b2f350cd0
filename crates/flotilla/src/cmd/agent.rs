//! `flotilla agent`: karmada-agent. Runs beside one Pull-mode member with that member's credentials
//! (`--cluster-kubeconfig`/`--cluster-context`) and the control plane's (`--kubeconfig`): applies the Works of
//! `karmada-es-<cluster-name>` to the member, reports their status and the cluster's, and renews the cluster's
//! Lease. Each time it starts it registers the Cluster first, as karmada-agent does (`flotilla register` does the
//! same alone), reporting the Secrets `--report-secrets` names (by default the member's credentials and its
//! impersonator's token, as karmada-agent's default).
//!
//! [`start`] is the agent itself; `flotilla agent` and `flotilla up` (for its Pull member3) both call it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use flotilla_controllers::Options;
use flotilla_controllers::agent::{self, AgentHandle};
use flotilla_join::ReportSecrets;
use flotilla_client::RateLimit;

use super::controller_manager::parse_duration;
use super::kube_access::{ApiRateLimits, ControlPlaneFlags, MemberFlags};
use super::register;

/// Arguments of `flotilla agent`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The control plane.
    #[command(flatten)]
    pub control_plane: ControlPlaneFlags,
    /// The member cluster this agent serves.
    #[command(flatten)]
    pub member: MemberFlags,
    /// Name of the member cluster (the Cluster object's name).
    #[arg(long)]
    pub cluster_name: String,
    /// How often the cluster's status is posted, e.g. `10s`.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub cluster_status_update_frequency: Duration,
    /// How long the cluster's Lease lasts.
    #[arg(long, default_value = "40s", value_parser = parse_duration)]
    pub cluster_lease_duration: Duration,
    /// The fraction of the Lease duration after which it is renewed.
    #[arg(long, default_value_t = 0.25)]
    pub cluster_lease_renew_interval_fraction: f64,
    /// Concurrent reconciles per controller.
    #[arg(long, default_value_t = 5)]
    pub concurrent_syncs: usize,
    /// Client-side rate limits towards the control plane and the member.
    #[command(flatten)]
    pub rate_limits: ApiRateLimits,
    /// The Secrets reported to the control plane when registering: `KubeCredentials`, `KubeImpersonator`, or
    /// `None`.
    #[arg(long, default_value_t = ReportSecrets::default(), value_parser = ReportSecrets::parse)]
    pub report_secrets: ReportSecrets,
}

/// What an agent serves and how, besides its two connections.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The member's Cluster name.
    pub cluster: String,
    /// The controllers' options (workers, status frequency, Lease, feature gates, member rate limit).
    pub options: Options,
    /// Client-side rate limit towards the control plane.
    pub kube_api: RateLimit,
    /// Publish Kubernetes Events on the control plane.
    pub events: bool,
    /// The Secrets reported when registering.
    pub report_secrets: ReportSecrets,
}

/// A running agent: its controllers and its interpreter's configuration watch.
pub struct RunningAgent {
    agent: AgentHandle,
    sync: tokio::task::JoinHandle<()>,
}

impl RunningAgent {
    /// Stops the agent (its Lease is no longer renewed) and waits for its controllers.
    pub async fn shutdown(self) {
        self.agent.shutdown().await;
        self.sync.abort();
    }
}

/// Starts the agent of `settings.cluster` with the control plane's and the member's client configurations:
/// registers the Cluster in Pull mode (or brings its registration up to date), as karmada-agent does each time it
/// starts, then runs the execution, work status and cluster status controllers for that one cluster.
///
/// # Errors
/// When a client cannot be built, the Cluster cannot be read or registered, or the interpreter or the agent
/// cannot be set up.
pub async fn start(
    control: kube::Config,
    member: kube::Config,
    settings: Settings,
) -> anyhow::Result<RunningAgent> {
    let cluster = &settings.cluster;
    // Long-running clients: HTTP/2 where offered, rate limited as asked.
    let control = flotilla_client::client(control, settings.kube_api)
        .context("failed to create the control plane's client")?;
    let member_client = flotilla_client::client(member.clone(), settings.options.cluster_api)
        .with_context(|| format!("failed to create a client of member cluster {cluster}"))?;
    register::register(&control, cluster, member, settings.report_secrets).await?;
    let (interpreter, sync) = flotilla_interpreter::config::control_plane(control.clone())
        .context("failed to assemble the resource interpreter")?;
    let sync = tokio::spawn(sync);
    let agent = match agent::start(
        control,
        member_client,
        cluster,
        Arc::new(interpreter),
        settings.options,
        !settings.events,
    ) {
        Ok(agent) => agent,
        Err(e) => {
            sync.abort();
            return Err(e).context("failed to start the agent");
        }
    };
    Ok(RunningAgent { agent, sync })
}

/// Serves the member until SIGINT or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<()> {
    if !(args.cluster_lease_renew_interval_fraction > 0.0
        && args.cluster_lease_renew_interval_fraction < 1.0)
    {
        anyhow::bail!(
            "--cluster-lease-renew-interval-fraction must be between 0 and 1 (exclusive), got {}",
            args.cluster_lease_renew_interval_fraction
        );
    }
    let control = args.control_plane.config().await?;
    let member = args.member.config().await?;
    let settings = Settings {
        cluster: args.cluster_name.clone(),
        options: Options {
            workers: args.concurrent_syncs.max(1),
            cluster_status_update_frequency: args.cluster_status_update_frequency,
            cluster_lease_duration: args.cluster_lease_duration,
            cluster_lease_renew_interval_fraction: args.cluster_lease_renew_interval_fraction,
            cluster_api: args.rate_limits.cluster_api(),
            ..Options::default()
        },
        kube_api: args.rate_limits.kube_api(),
        events: true,
        report_secrets: args.report_secrets,
    };
    let agent = start(control, member, settings).await?;
    tracing::info!(cluster = %args.cluster_name, "agent started");
    crate::shutdown_signal().await;
    tracing::info!(cluster = %args.cluster_name, "agent stopping");
    agent.shutdown().await;
    Ok(())
}
