//! The Pull-mode agent (karmada-agent): runs beside one member with that member's client and a control-plane
//! client, and does the member side of that one cluster with the same controllers the control plane runs for
//! Push clusters (one implementation, two callers): the execution controller applies the Works of
//! `karmada-es-<cluster>` to the member, the work status controller reflects their member status, and the
//! cluster status controller posts the cluster's status and renews its Lease `karmada-cluster/<cluster>`.
//!
//! What differs is only the member access ([`Members::for_agent`]): the member client is the agent's own, and
//! [`Members::serves`] limits every controller to this cluster (the control plane's leave Pull clusters alone).

use std::sync::Arc;

use flotilla_api::names::namespaces;
use flotilla_api::work::v1alpha1::Work;
use kube::Client;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::controllers::{self, cluster_status, execution, work_status};
use crate::events::EventSink;
use crate::interpreter::Interpreter;
use crate::member::Members;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::shared::Shared;

/// Why the agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The metrics registry could not be built.
    #[error("failed to set up metrics")]
    Metrics(#[source] prometheus::Error),
}

/// A running agent.
pub struct AgentHandle {
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl AgentHandle {
    /// Stops the agent's controllers and waits for them (the Lease is no longer renewed).
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }

    /// Waits until the agent stops (it runs until shut down).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

/// Starts the agent of `cluster`: `control` reaches the control plane, `member` the member cluster.
///
/// # Errors
/// When metrics cannot be set up.
pub fn start(
    control: Client,
    member: Client,
    cluster: &str,
    interpreter: Arc<dyn Interpreter>,
    options: Options,
    disable_events: bool,
) -> Result<AgentHandle, AgentError> {
    let metrics = Metrics::new().map_err(AgentError::Metrics)?;
    let shutdown = CancellationToken::new();
    let events = EventSink::spawned(
        control.clone(),
        disable_events,
        metrics.events_dropped(),
        &shutdown,
    );
    let mut shared = Shared::new(control.clone(), interpreter, events, metrics, &options);
    // Karmada's agent may list and watch Works in its execution namespace only.
    shared.control.informers = shared
        .control
        .informers
        .clone()
        .watching_within::<Work>(&namespaces::execution_space(cluster));
    shared.members = Members::for_agent(control, cluster, member, options.cluster_api);
    let task = tokio::spawn(run(shared, options, shutdown.clone()));
    Ok(AgentHandle { shutdown, task })
}

async fn run(shared: Shared, options: Options, shutdown: CancellationToken) {
    let mut tasks = vec![tokio::spawn(controllers::cluster_status::run(
        cluster_status::Context::new(&shared, &options),
        shutdown.clone(),
    ))];
    tokio::select! {
        () = shared.interpreter.ready() => {}
        () = shutdown.cancelled() => {}
    }
    if !shutdown.is_cancelled() {
        // The execution controller decides Work conditions; the work status controller writes them.
        let (conditions, outbox) = work_status::handover();
        tasks.push(tokio::spawn(controllers::execution::run(
            execution::Context::new(&shared, conditions),
            shutdown.clone(),
        )));
        tasks.push(tokio::spawn(controllers::work_status::run(
            work_status::Context::new(&shared, outbox),
            shutdown.clone(),
        )));
        tracing::info!("agent controllers started");
    }
    shutdown.cancelled().await;
    for task in tasks {
        let _ = task.await;
    }
    shared.control.informers.shutdown();
    shared.members.shutdown();
}
