//! `flotilla agent`: karmada-agent. Runs beside one Pull-mode member with that member's credentials
//! (`--cluster-kubeconfig`/`--cluster-context`) and the control plane's (`--kubeconfig`): applies the Works of
//! `karmada-es-<cluster-name>` to the member, reports their status and the cluster's, and renews the cluster's
//! Lease. The Cluster is registered first if it does not exist yet (`flotilla register` does the same alone).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_controllers::Options;
use flotilla_controllers::agent;
use flotilla_controllers::kube_client;
use kube::Api;

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
    // Long-running clients: HTTP/2 where offered, rate limited as the flags say.
    let control = args.control_plane.config().await?;
    let control = kube_client::client(control, args.rate_limits.kube_api())
        .context("failed to create the control plane's client")?;
    let member = args.member.config().await?;
    let member = kube_client::client(member, args.rate_limits.cluster_api())
        .with_context(|| format!("failed to create a client of member cluster {}", args.cluster_name))?;
    let clusters: Api<Cluster> = Api::all(control.clone());
    if clusters
        .get_opt(&args.cluster_name)
        .await
        .with_context(|| format!("failed to read Cluster {}", args.cluster_name))?
        .is_none()
    {
        // karmada-agent creates its Cluster when it starts.
        register::run(register::Args {
            name: args.cluster_name.clone(),
            control_plane: args.control_plane.clone(),
            member: args.member.clone(),
        })
        .await?;
    }
    let options = Options {
        workers: args.concurrent_syncs.max(1),
        cluster_status_update_frequency: args.cluster_status_update_frequency,
        cluster_lease_duration: args.cluster_lease_duration,
        cluster_lease_renew_interval_fraction: args.cluster_lease_renew_interval_fraction,
        cluster_api: args.rate_limits.cluster_api(),
        ..Options::default()
    };
    let (interpreter, sync) = flotilla_interpreter::config::control_plane(control.clone())
        .context("failed to assemble the resource interpreter")?;
    let sync = tokio::spawn(sync);
    let agent = agent::start(
        control,
        member,
        &args.cluster_name,
        Arc::new(interpreter),
        options,
        false,
    )
    .context("failed to start the agent")?;
    tracing::info!(cluster = %args.cluster_name, "agent started");
    crate::shutdown_signal().await;
    sync.abort();
    agent.shutdown().await;
    Ok(())
}
