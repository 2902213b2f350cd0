//! `flotilla agent`: karmada-agent. Runs beside one Pull-mode member with that member's credentials
//! (`--cluster-kubeconfig`/`--cluster-context`) and the control plane's (`--kubeconfig`): applies the Works of
//! `karmada-es-<cluster-name>` to the member, reports their status and the cluster's, and renews the cluster's
//! Lease. Each time it starts it registers the Cluster first, as karmada-agent does (`flotilla register` does the
//! same alone), reporting the Secrets `--report-secrets` names (by default the member's credentials and its
//! impersonator's token, as karmada-agent's default).
//!
//! With `--bootstrap-kubeconfig` (a kubeconfig with a bootstrap token, as `flotilla register` writes it) the
//! agent does not use `--kubeconfig`: it works with its own client certificate, user
//! `system:karmada:agent:<cluster>`, which it asks for once and keeps in the member ([`credentials`]). With
//! `certRotation` in `--controllers` (off by default, as in karmada-agent) it renews that certificate before it
//! runs out and starts its controllers again with the new one.
//!
//! [`start`] is the agent itself; `flotilla agent` and `flotilla up` (for its Pull member3) both call it.

pub mod credentials;

use std::sync::Arc;
use std::time::Duration;

use std::path::PathBuf;

use anyhow::Context;
use flotilla_client::RateLimit;
use flotilla_controllers::Options;
use flotilla_controllers::agent::{self, AgentHandle};
use flotilla_controllers::enabled_controllers::{CERT_ROTATION, ControllerSelection};
use flotilla_join::ReportSecrets;
use kube::config::Kubeconfig;
use tokio_util::sync::CancellationToken;

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
    /// A kubeconfig with a bootstrap token (`flotilla register --bootstrap-kubeconfig` writes one): the agent then
    /// asks for its own client certificate and works with it instead of `--kubeconfig`.
    #[arg(long)]
    pub bootstrap_kubeconfig: Option<PathBuf>,
    /// The member namespace of Secret `karmada-kubeconfig`, where the agent keeps its own kubeconfig.
    #[arg(long, default_value = "karmada-system")]
    pub karmada_kubeconfig_namespace: String,
    /// The agent's controllers, as karmada-agent's flag: `*` runs the default ones; `certRotation` (off by
    /// default) renews the agent's certificate.
    #[arg(long, default_value_t = ControllerSelection::default(), value_parser = ControllerSelection::parse)]
    pub controllers: ControllerSelection,
    /// How often the certificate's remaining life is checked.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub cert_rotation_checking_interval: Duration,
    /// The share of the certificate's life left at which it is renewed.
    #[arg(long, default_value_t = 0.2)]
    pub cert_rotation_remaining_time_threshold: f64,
}

/// How the agent reaches the control plane.
#[derive(Clone)]
pub enum ControlAccess {
    /// With these credentials, as given.
    Given(Box<kube::Config>),
    /// With its own certificate, obtained with this bootstrap kubeconfig and kept in the member.
    Bootstrap(Box<Kubeconfig>),
}

/// Karmada-agent's certificate rotation.
#[derive(Clone, Copy, Debug)]
pub struct Rotation {
    /// How often the certificate is looked at.
    pub interval: Duration,
    /// The share of its life left at which it is renewed.
    pub threshold: f64,
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
    /// The member namespace of the agent's own kubeconfig.
    pub kubeconfig_namespace: String,
    /// Certificate rotation, when on.
    pub rotation: Option<Rotation>,
}

/// One run of the agent's controllers and its interpreter's configuration watch, with one set of credentials.
struct Controllers {
    agent: AgentHandle,
    sync: tokio::task::JoinHandle<()>,
}

impl Controllers {
    async fn shutdown(self) {
        self.agent.shutdown().await;
        self.sync.abort();
    }
}

/// A running agent: its controllers, started again with new credentials whenever its certificate is renewed.
pub struct RunningAgent {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl RunningAgent {
    /// Stops the agent (its Lease is no longer renewed) and waits for its controllers.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Starts the agent of `settings.cluster` with the member's client configuration and access to the control plane:
/// obtains its own certificate first when it bootstraps, registers the Cluster in Pull mode (or brings its
/// registration up to date), as karmada-agent does each time it starts, then runs the execution, work status and
/// cluster status controllers for that one cluster, and renews the certificate when rotation is on.
///
/// # Errors
/// When a client cannot be built, no certificate is obtained, the Cluster cannot be read or registered, or the
/// interpreter or the agent cannot be set up.
pub async fn start(
    control: ControlAccess,
    member: kube::Config,
    settings: Settings,
) -> anyhow::Result<RunningAgent> {
    let cluster = settings.cluster.clone();
    let store = credentials::Store {
        member: kube::Client::try_from(member.clone())
            .with_context(|| format!("failed to create a client of member cluster {cluster}"))?,
        namespace: settings.kubeconfig_namespace.clone(),
    };
    let control = match control {
        ControlAccess::Given(config) => *config,
        ControlAccess::Bootstrap(bootstrap) => {
            let own = credentials::obtain(&store, &bootstrap, &cluster).await?;
            credentials::config(own).await?
        }
    };
    let controllers = launch(control.clone(), member.clone(), &settings).await?;
    let stop = CancellationToken::new();
    let task = tokio::spawn(supervise(controllers, control, member, settings, store, stop.clone()));
    Ok(RunningAgent { stop, task })
}

/// Runs `controllers` until stopped; with rotation on, renews the certificate when it is due and starts the
/// controllers again with it (what is level-triggered resumes from the control plane and the member).
async fn supervise(
    mut controllers: Controllers,
    mut control: kube::Config,
    member: kube::Config,
    settings: Settings,
    store: credentials::Store,
    stop: CancellationToken,
) {
    let cluster = settings.cluster.clone();
    let Some(rotation) = settings.rotation else {
        stop.cancelled().await;
        controllers.shutdown().await;
        return;
    };
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(rotation.interval) => {}
        }
        let client = match kube::Client::try_from(control.clone()) {
            Ok(client) => client,
            Err(e) => {
                tracing::error!(%cluster, error = %e, "failed to create a client to renew the agent's certificate");
                continue;
            }
        };
        let renewed = match credentials::rotate_if_due(&store, &client, &cluster, rotation.threshold).await {
            Ok(Some(renewed)) => renewed,
            Ok(None) => continue,
            Err(e) => {
                tracing::error!(%cluster, error = %format!("{e:#}"), "failed to renew the agent's certificate");
                continue;
            }
        };
        let config = match credentials::config(renewed).await {
            Ok(config) => config,
            Err(e) => {
                tracing::error!(%cluster, error = %format!("{e:#}"), "the renewed kubeconfig is unusable");
                continue;
            }
        };
        tracing::info!(%cluster, "renewed the agent's certificate: restarting its controllers with it");
        controllers.shutdown().await;
        control = config;
        // Until the controllers run again, every tick retries.
        controllers = loop {
            match launch(control.clone(), member.clone(), &settings).await {
                Ok(started) => break started,
                Err(e) => {
                    tracing::error!(%cluster, error = %format!("{e:#}"), "failed to restart the agent");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(rotation.interval) => {}
                    }
                }
            }
        };
    }
    controllers.shutdown().await;
}

/// Registers the Cluster and starts the controllers with the control plane's client configuration `control`.
async fn launch(
    control: kube::Config,
    member: kube::Config,
    settings: &Settings,
) -> anyhow::Result<Controllers> {
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
        settings.options.clone(),
        !settings.events,
    ) {
        Ok(agent) => agent,
        Err(e) => {
            sync.abort();
            return Err(e).context("failed to start the agent");
        }
    };
    Ok(Controllers { agent, sync })
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
    if !(args.cert_rotation_remaining_time_threshold > 0.0
        && args.cert_rotation_remaining_time_threshold < 1.0)
    {
        anyhow::bail!(
            "--cert-rotation-remaining-time-threshold must be between 0 and 1 (exclusive), got {}",
            args.cert_rotation_remaining_time_threshold
        );
    }
    let control = match &args.bootstrap_kubeconfig {
        Some(path) => ControlAccess::Bootstrap(Box::new(
            Kubeconfig::read_from(path)
                .with_context(|| format!("failed to read --bootstrap-kubeconfig {}", path.display()))?,
        )),
        None => ControlAccess::Given(Box::new(args.control_plane.config().await?)),
    };
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
        kubeconfig_namespace: args.karmada_kubeconfig_namespace.clone(),
        rotation: args.controllers.agent_enabled(CERT_ROTATION).then_some(Rotation {
            interval: args.cert_rotation_checking_interval,
            threshold: args.cert_rotation_remaining_time_threshold,
        }),
    };
    let agent = start(control, member, settings).await?;
    tracing::info!(cluster = %args.cluster_name, "agent started");
    crate::shutdown_signal().await;
    tracing::info!(cluster = %args.cluster_name, "agent stopping");
    agent.shutdown().await;
    Ok(())
}
