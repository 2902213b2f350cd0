//! The Pull member of `flotilla up`: as Karmada's local-up registers member1 and member2 in Push mode and member3
//! in Pull mode (served by a karmada-agent beside it), `flotilla up` registers member3 with `syncMode: Pull`, the
//! way `flotilla register` does, and serves it with an in-process agent, the code of `flotilla agent`. With fewer
//! than three members every member is Push; with more, member4 and beyond are Push too.
//!
//! The agent can be stopped and started again while the environment runs ([`InProcessAgent::restart`]), which is
//! what tests of a Pull member's recovery need.

use std::time::Duration;

use anyhow::Context;
use flotilla_api::names::namespaces;
use flotilla_join::ReportSecrets;
use kube::config::Kubeconfig;
use tokio::sync::Mutex;

use super::{UpConfig, kubeconfigs};
use crate::cmd::agent::{self, ControlAccess, Rotation, RunningAgent, Settings};
use crate::cmd::register;

/// The 1-based index of the member `flotilla up` registers in Pull mode.
pub const PULL_MEMBER: usize = 3;

/// Whether member `index` (1-based) is the Pull member.
pub fn is_pull(index: usize) -> bool {
    index == PULL_MEMBER
}

/// How long the bootstrap token of the in-process agent is valid: it needs it only until its first certificate
/// is stored in the member.
const TOKEN_TTL: Duration = Duration::from_secs(24 * 3600);

/// Registers the member reached with `member_kubeconfig` as Pull cluster `name`, reporting what karmada-agent
/// reports by default (a Push registration left by an earlier version of the data dir becomes a Pull one), grants
/// its agent its rights, and returns a kubeconfig reaching the control plane as `control_kubeconfig` does, with
/// a new bootstrap token for the agent instead of the administrator's credentials.
///
/// # Errors
/// When a kubeconfig cannot be loaded, the registration fails or no token can be created.
pub async fn register(
    control: &kube::Client,
    control_kubeconfig: &str,
    name: &str,
    member_kubeconfig: &str,
) -> anyhow::Result<Kubeconfig> {
    let member = kubeconfigs::config(member_kubeconfig).await?;
    register::register(control, name, member, ReportSecrets::default()).await?;
    register::grant_agent(control, name).await?;
    let admin = Kubeconfig::from_yaml(control_kubeconfig)
        .context("failed to read the control plane's kubeconfig")?;
    let (_, bootstrap) =
        register::bootstrap_kubeconfig(control, &admin, None, name, Some(TOKEN_TTL)).await?;
    Ok(bootstrap)
}

/// How the in-process agent of member `cluster` runs: with the environment's feature gates and rate limits, and
/// posting the cluster's status every `status_interval` as the environment's controllers collect the Push
/// members'.
pub fn settings(config: &UpConfig, cluster: &str, status_interval: Duration) -> Settings {
    Settings {
        cluster: cluster.to_owned(),
        options: flotilla_controllers::Options {
            cluster_status_update_frequency: status_interval,
            feature_gates: config.feature_gates.clone(),
            cluster_api: config.cluster_api,
            ..flotilla_controllers::Options::default()
        },
        kube_api: config.kube_api,
        events: config.events,
        report_secrets: ReportSecrets::default(),
        kubeconfig_namespace: namespaces::KARMADA_SYSTEM.to_owned(),
        // As `karmadactl register --enable-cert-rotation` runs karmada-agent, at karmada-agent's defaults.
        rotation: Some(Rotation {
            interval: Duration::from_secs(300),
            threshold: 0.2,
        }),
    }
}

/// An agent serving the Pull member from inside `flotilla up`, with the member's own kubeconfig and a bootstrap
/// kubeconfig for the control plane, as `flotilla agent --bootstrap-kubeconfig` would run beside it.
pub struct InProcessAgent {
    bootstrap: Kubeconfig,
    member_kubeconfig: String,
    settings: Settings,
    running: Mutex<Option<RunningAgent>>,
}

impl InProcessAgent {
    /// Starts the agent of `settings.cluster`.
    ///
    /// # Errors
    /// When a kubeconfig cannot be loaded or the agent cannot start.
    pub async fn start(
        bootstrap: Kubeconfig,
        member_kubeconfig: String,
        settings: Settings,
    ) -> anyhow::Result<InProcessAgent> {
        let agent = InProcessAgent {
            bootstrap,
            member_kubeconfig,
            settings,
            running: Mutex::new(None),
        };
        agent.start_again().await?;
        Ok(agent)
    }

    /// The cluster it serves.
    pub fn cluster(&self) -> &str {
        &self.settings.cluster
    }

    /// Whether the agent runs.
    pub async fn is_running(&self) -> bool {
        self.running.lock().await.is_some()
    }

    /// Stops the agent: the member keeps its objects, the cluster's Lease lapses.
    pub async fn stop(&self) {
        if let Some(agent) = self.running.lock().await.take() {
            agent.shutdown().await;
        }
    }

    /// Starts the agent unless it runs, as a restarted `flotilla agent` process would (it resumes from what the
    /// control plane and the member hold).
    ///
    /// # Errors
    /// When a kubeconfig cannot be loaded or the agent cannot start.
    pub async fn start_again(&self) -> anyhow::Result<()> {
        let mut running = self.running.lock().await;
        if running.is_some() {
            return Ok(());
        }
        let control = ControlAccess::Bootstrap(Box::new(self.bootstrap.clone()));
        let member = kubeconfigs::config(&self.member_kubeconfig).await?;
        let agent = agent::start(control, member, self.settings.clone())
            .await
            .with_context(|| format!("failed to start the agent of {}", self.settings.cluster))?;
        *running = Some(agent);
        Ok(())
    }

    /// Stops the agent and starts it again.
    ///
    /// # Errors
    /// As [`InProcessAgent::start_again`].
    pub async fn restart(&self) -> anyhow::Result<()> {
        self.stop().await;
        self.start_again().await
    }
}
