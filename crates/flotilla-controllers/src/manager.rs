//! The controller manager: every controller against one control-plane client, with the admin listener and
//! optional leader election. Embeddable: [`start`] takes a `Client` and an interpreter and returns a
//! [`ManagerHandle`].
//!
//! Guarantees: no interpreting controller starts before the interpreter is ready; `/readyz` turns ready once
//! every controller runs; [`ManagerHandle::shutdown`] stops the controllers (each finishes its current
//! reconcile), the informers and the admin listener, and returns when they have stopped.

use std::net::SocketAddr;
use std::sync::Arc;

use flotilla_client::leader::{Ended, LeaderElection};
use flotilla_status_page::page::{Cache, Sources};
use kube::Client;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::controllers::{
    self, application_failover, binding, binding_status, cluster, cluster_health, cluster_status,
    dependencies, detector, execution, graceful_eviction, namespace_sync, taint_manager,
    work_status,
};
use crate::events::EventSink;
use crate::features::Feature;
use crate::interpreter::Interpreter;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::runtime::Informer;
use crate::shared::Shared;
use crate::{enabled_controllers, scheduler};

/// How to run the manager.
#[derive(Clone, Debug, Default)]
pub struct ManagerOptions {
    /// Controller settings.
    pub controllers: Options,
    /// Where to serve `/metrics`, `/healthz`, `/readyz` and the status page (`/`, [`flotilla_status_page::page`]); port
    /// 0 picks a free port; `None` serves nothing.
    pub admin_addr: Option<SocketAddr>,
    /// Lease-based leader election; `None` runs at once.
    pub leader_election: Option<Election>,
    /// Publish Kubernetes Events (off in tools that only want the controllers' effect).
    pub disable_events: bool,
}

/// Leader election for the manager: its settings, and the client it renews the Lease with. That client must
/// not be fenced by the election's own [`flotilla_client::leader::Fence`] (it writes the Lease to open it),
/// while the controllers' clients must be.
#[derive(Clone)]
pub struct Election {
    /// Lease, identity, timings and fence.
    pub config: LeaderElection,
    /// An unfenced client of the control plane.
    pub client: Client,
}

impl std::fmt::Debug for Election {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Election")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why the manager could not start or stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// The metrics registry could not be built.
    #[error("failed to set up metrics")]
    Metrics(#[source] prometheus::Error),
    /// The admin listener could not be bound.
    #[error("failed to listen on {addr}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Leader election failed, or leadership was lost.
    #[error("leader election: {0}")]
    LeaderElection(String),
}

/// A running manager.
pub struct ManagerHandle {
    metrics: Metrics,
    shutdown: CancellationToken,
    ready: watch::Receiver<bool>,
    admin_addr: Option<SocketAddr>,
    task: JoinHandle<Result<(), ManagerError>>,
}

impl ManagerHandle {
    /// The metrics of every controller, as `/metrics` serves them.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Where the admin listener listens, if it does.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.admin_addr
    }

    /// Whether every controller has started.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// Waits until every controller has started.
    pub async fn wait_ready(&self) {
        let mut ready = self.ready.clone();
        let _ = ready.wait_for(|r| *r).await;
    }

    /// Waits until the manager stops by itself (leadership lost) or is shut down.
    ///
    /// # Errors
    /// [`ManagerError::LeaderElection`] when leadership was lost.
    pub async fn wait(&mut self) -> Result<(), ManagerError> {
        match (&mut self.task).await {
            Ok(result) => result,
            Err(err) => Err(ManagerError::LeaderElection(format!(
                "manager task ended abnormally: {err}"
            ))),
        }
    }

    /// Stops every controller and waits for them.
    ///
    /// # Errors
    /// As [`ManagerHandle::wait`].
    pub async fn shutdown(mut self) -> Result<(), ManagerError> {
        self.shutdown.cancel();
        self.wait().await
    }
}

/// Starts every controller against the control plane of `client`.
///
/// # Errors
/// When metrics cannot be set up or the admin listener cannot be bound.
pub async fn start(
    client: Client,
    interpreter: Arc<dyn Interpreter>,
    options: ManagerOptions,
) -> Result<ManagerHandle, ManagerError> {
    // Say which gates were switched that Flotilla has no feature for, rather than ignore them silently.
    let ignored = options.controllers.feature_gates.without_effect();
    if !ignored.is_empty() {
        tracing::warn!(
            gates = %ignored.join(","),
            "these feature gates are set away from Karmada's defaults, but Flotilla does not have their features yet: the setting has no effect"
        );
    }
    let unswitchable = options.controllers.controllers.without_effect();
    if !unswitchable.is_empty() {
        tracing::warn!(
            controllers = %unswitchable.join(","),
            "these --controllers entries switch controllers Flotilla does not have or always runs: they have no effect"
        );
    }
    let metrics = Metrics::new().map_err(ManagerError::Metrics)?;
    // Interpreter calls by layer, operation and kind are served at /metrics beside the controllers' series.
    interpreter
        .register_metrics(&metrics.registry, crate::metrics::PREFIX)
        .map_err(ManagerError::Metrics)?;
    let shutdown = CancellationToken::new();
    let events = EventSink::spawned(
        client.clone(),
        options.disable_events,
        metrics.events_dropped(),
        &shutdown,
    );
    let shared = Shared::new(
        client,
        interpreter,
        events,
        metrics.clone(),
        &options.controllers,
    );
    let (ready_tx, ready) = watch::channel(false);
    let mut admin_addr = None;
    if let Some(addr) = options.admin_addr {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ManagerError::Listen { addr, source })?;
        admin_addr = listener.local_addr().ok();
        let router = crate::admin::router(metrics.clone(), ready.clone())
            .merge(flotilla_status_page::page::router(page_sources(&shared)));
        tokio::spawn(crate::admin::serve(listener, router, shutdown.clone()));
    }
    let task = tokio::spawn(run(
        shared,
        options.controllers,
        options.leader_election,
        shutdown.clone(),
        ready_tx,
    ));
    Ok(ManagerHandle {
        metrics,
        shutdown,
        ready,
        admin_addr,
        task,
    })
}

/// What the status page shows, from the informers the controllers share (started here if no controller started
/// them yet).
fn page_sources(shared: &Shared) -> Sources {
    fn cache<K>(informer: &Informer<K>) -> Cache<K>
    where
        K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        Cache::new(informer.store(), informer.synced())
    }
    Sources {
        bindings: cache(&shared.control.informers.typed()),
        cluster_bindings: cache(&shared.control.informers.typed()),
        works: cache(&shared.control.informers.typed()),
        journal: shared.interpreter.journal(),
        client: shared.control.client.clone(),
    }
}

async fn run(
    shared: Shared,
    options: Options,
    election: Option<Election>,
    shutdown: CancellationToken,
    ready: watch::Sender<bool>,
) -> Result<(), ManagerError> {
    // The lease is released only once the controllers have stopped writing.
    let release = CancellationToken::new();
    let mut holding = None;
    if let Some(Election { config, client }) = election {
        let observed = tokio::select! {
            observed = config.acquire(&client) => observed,
            () = shutdown.cancelled() => return Ok(()),
        };
        tracing::info!(identity = %config.identity, lease = %config.name, "became leader");
        let (stop, release) = (shutdown.clone(), release.clone());
        holding = Some(tokio::spawn(async move {
            let ended = config.hold(&client, observed, &release).await;
            if let Ended::Lost(reason) = &ended {
                tracing::error!(%reason, "leadership lost; stopping the controllers");
                stop.cancel();
            }
            ended
        }));
    }

    let mut tasks: Vec<JoinHandle<()>> = Vec::new();
    let spawn = |tasks: &mut Vec<JoinHandle<()>>,
                 name: &'static str,
                 fut: futures::future::BoxFuture<'static, ()>| {
        tracing::debug!(controller = name, "starting");
        tasks.push(tokio::spawn(fut));
    };
    // Controllers that never interpret start at once, so clusters become ready while the interpreter loads.
    spawn(
        &mut tasks,
        controllers::cluster::NAME,
        Box::pin(controllers::cluster::run(
            cluster::Context::new(&shared, &options),
            shutdown.clone(),
        )),
    );
    spawn(
        &mut tasks,
        controllers::cluster_status::NAME,
        Box::pin(controllers::cluster_status::run(
            cluster_status::Context::new(&shared, &options),
            shutdown.clone(),
        )),
    );
    if options.feature_gates.enabled(Feature::Failover) {
        spawn(
            &mut tasks,
            controllers::cluster_taint_policy::NAME,
            Box::pin(controllers::cluster_taint_policy::run(
                shared.control.clone(),
                shutdown.clone(),
            )),
        );
        if options.enable_taint_manager {
            spawn(
                &mut tasks,
                controllers::taint_manager::NAME,
                Box::pin(controllers::taint_manager::run(
                    taint_manager::Context::new(&shared, &options),
                    shutdown.clone(),
                )),
            );
        }
    }
    spawn(
        &mut tasks,
        controllers::graceful_eviction::NAME,
        Box::pin(controllers::graceful_eviction::run(
            graceful_eviction::Context::new(&shared, &options),
            shutdown.clone(),
        )),
    );
    spawn(
        &mut tasks,
        controllers::cluster_health::NAME,
        Box::pin(controllers::cluster_health::run(
            cluster_health::Context::new(&shared, &options),
            shutdown.clone(),
        )),
    );
    spawn(
        &mut tasks,
        controllers::policy_normaliser::NAME,
        Box::pin(controllers::policy_normaliser::run(
            shared.control.clone(),
            shutdown.clone(),
        )),
    );
    spawn(
        &mut tasks,
        scheduler::controller::NAME,
        Box::pin(scheduler::controller::run(
            scheduler::controller::Context::new(&shared, &options),
            shutdown.clone(),
        )),
    );
    spawn(
        &mut tasks,
        controllers::namespace_sync::NAME,
        Box::pin(controllers::namespace_sync::run(
            namespace_sync::Context::new(&shared, &options),
            shutdown.clone(),
        )),
    );
    if options
        .controllers
        .enabled(enabled_controllers::UNIFIED_AUTH)
    {
        spawn(
            &mut tasks,
            controllers::unified_auth::NAME,
            Box::pin(controllers::unified_auth::run(
                shared.control.clone(),
                shutdown.clone(),
            )),
        );
    }
    if options
        .controllers
        .enabled(enabled_controllers::AGENT_CSR_APPROVING)
    {
        spawn(
            &mut tasks,
            controllers::agent_csr_approving::NAME,
            Box::pin(controllers::agent_csr_approving::run(
                shared.control.clone(),
                shutdown.clone(),
            )),
        );
    }
    if options
        .controllers
        .enabled(enabled_controllers::WORKLOAD_REBALANCER)
    {
        spawn(
            &mut tasks,
            controllers::workload_rebalancer::NAME,
            Box::pin(controllers::workload_rebalancer::run(
                shared.control.clone(),
                shutdown.clone(),
            )),
        );
    }
    tokio::select! {
        () = shared.interpreter.ready() => {}
        () = shutdown.cancelled() => {}
    }
    if !shutdown.is_cancelled() {
        spawn(
            &mut tasks,
            controllers::detector::NAME,
            Box::pin(controllers::detector::run(
                detector::Context::new(&shared, &options),
                shutdown.clone(),
            )),
        );
        spawn(
            &mut tasks,
            controllers::binding::NAME,
            Box::pin(controllers::binding::run(
                binding::Context::new(&shared, &options),
                shutdown.clone(),
            )),
        );
        // The execution controller decides Work conditions; the work status controller writes them.
        let (conditions, outbox) = work_status::handover();
        spawn(
            &mut tasks,
            controllers::execution::NAME,
            Box::pin(controllers::execution::run(
                execution::Context::new(&shared, conditions),
                shutdown.clone(),
            )),
        );
        spawn(
            &mut tasks,
            controllers::work_status::NAME,
            Box::pin(controllers::work_status::run(
                work_status::Context::new(&shared, outbox),
                shutdown.clone(),
            )),
        );
        spawn(
            &mut tasks,
            controllers::binding_status::NAME,
            Box::pin(controllers::binding_status::run(
                binding_status::Context::new(&shared),
                shutdown.clone(),
            )),
        );
        if options.feature_gates.enabled(Feature::PropagateDeps) {
            spawn(
                &mut tasks,
                controllers::dependencies::NAME,
                Box::pin(controllers::dependencies::run(
                    dependencies::Context::new(&shared),
                    shutdown.clone(),
                )),
            );
        }
        // After the interpreter, whose InterpretHealth hooks decide which bindings it watches. Not behind the
        // `Failover` gate: Karmada starts it whenever `applicationFailover` is enabled, since a policy asks for it
        // with `spec.failover.application`.
        if options
            .controllers
            .enabled(enabled_controllers::APPLICATION_FAILOVER)
        {
            spawn(
                &mut tasks,
                controllers::application_failover::NAME,
                Box::pin(controllers::application_failover::run(
                    application_failover::Context::new(&shared, &options),
                    shutdown.clone(),
                )),
            );
        }
        if options
            .controllers
            .enabled(enabled_controllers::DEPLOYMENT_REPLICAS_SYNCER)
        {
            spawn(
                &mut tasks,
                controllers::replicas_syncer::NAME,
                Box::pin(controllers::replicas_syncer::run(
                    shared.control.clone(),
                    shutdown.clone(),
                )),
            );
        }
        if options
            .controllers
            .enabled(enabled_controllers::HPA_SCALE_TARGET_MARKER)
        {
            spawn(
                &mut tasks,
                controllers::hpa_marker::NAME,
                Box::pin(controllers::hpa_marker::run(
                    shared.clone(),
                    shutdown.clone(),
                )),
            );
        }
        ready.send_replace(true);
        tracing::info!("controllers started");
    }
    shutdown.cancelled().await;
    ready.send_replace(false);
    for task in tasks {
        let _ = task.await;
    }
    shared.control.informers.shutdown();
    shared.members.shutdown();
    if let Some(holding) = holding {
        release.cancel();
        match holding.await {
            Ok(Ended::Released) => {}
            Ok(Ended::Lost(reason)) => return Err(ManagerError::LeaderElection(reason)),
            Err(err) => {
                return Err(ManagerError::LeaderElection(format!(
                    "the lease task ended abnormally: {err}"
                )));
            }
        }
    }
    Ok(())
}
