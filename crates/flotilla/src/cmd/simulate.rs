//! `flotilla simulate`: the member workload simulator alone, as a client of any API server: it sets
//! the status of the built-in workloads the way their controllers and the kubelet would, binds pods as a scheduler
//! would, and serves the simulated containers' logs and exec as their Nodes' kubelet (every Node of the cluster is
//! pointed at it; `--no-kubelet` leaves the Nodes alone), until SIGINT or SIGTERM.

use std::time::Duration;

use anyhow::Context;
use flotilla_simulator::{DEFAULT_DELAY, Simulator, SimulatorConfig};

use super::kube_access::KubeAccess;

/// Arguments of `flotilla simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The cluster whose workloads are simulated.
    #[command(flatten)]
    pub cluster: KubeAccess,
    /// How long after a change the new status is reported, in milliseconds (the time pods would take to start).
    #[arg(long, default_value_t = DEFAULT_DELAY.as_millis() as u64)]
    pub delay_ms: u64,
    /// Serve no simulated kubelet, and leave the Nodes' addresses and kubelet endpoints as they are (pods then
    /// have no logs or exec).
    #[arg(long)]
    pub no_kubelet: bool,
}

/// Simulates until SIGINT or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args
        .cluster
        .client()
        .await
        .context("failed to reach the cluster")?;
    // Fail now on an unreachable or refusing server, not in the simulator's background loops.
    client
        .apiserver_version()
        .await
        .context("the cluster's API server did not answer")?;
    let simulator = Simulator::start(
        client,
        SimulatorConfig {
            delay: Duration::from_millis(args.delay_ms),
            cluster: args.cluster.context.clone().unwrap_or_default(),
            kubelet: !args.no_kubelet,
            ..SimulatorConfig::default()
        },
    );
    match simulator.kubelet_port() {
        Some(port) => println!("ready: simulating, the kubelet on https://127.0.0.1:{port}"),
        None => println!("ready: simulating"),
    }
    tracing::info!("member workload simulator running");
    crate::shutdown_signal().await;
    simulator.shutdown().await;
    Ok(())
}
