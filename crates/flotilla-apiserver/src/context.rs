//! What one server shares with its request handlers: the registry every request reads and writes through, the
//! aggregator that takes over aggregated group-versions, and what only the HTTP layer keeps (request metrics,
//! impersonation modes, the watch bookmark interval, the kubelet client).

use std::sync::Arc;
use std::time::Duration;

use flotilla_registry::context::Ctx as RegistryCtx;

use crate::aggregator::Aggregator;
use crate::authn::impersonation::Impersonation;
use crate::kubelet::Kubelets;
use crate::metrics::RequestMetrics;

/// Shared state of one server, handed to every handler.
pub struct Ctx {
    /// The registry: store, catalogue, tokens, admission webhooks.
    pub registry: Arc<RegistryCtx>,
    /// Periodic bookmark interval.
    pub bookmark_interval: Duration,
    /// `apiserver_request_total`, served on `/metrics`.
    pub metrics: RequestMetrics,
    /// The impersonation mode each requester last used (`crate::authn::impersonation`).
    pub impersonation: Impersonation,
    /// APIServices with a service, their clients and what their backends serve (`crate::aggregator`).
    pub aggregator: Arc<Aggregator>,
    /// The client that reaches kubelets for `pods/log` and `pods/exec` (`crate::handlers::connect`).
    pub kubelets: Kubelets,
    /// `--max-requests-inflight` and `--max-mutating-requests-inflight` (`crate::server`).
    pub inflight: flotilla_serving::inflight::Limits,
}

#[cfg(test)]
impl Ctx {
    /// A context over a fresh store in `dir`, with the built-in catalogue and no server or controllers running.
    pub(crate) fn for_test(dir: &std::path::Path) -> Arc<Self> {
        let certs = crate::tls::ensure(dir, &[]).expect("certificates");
        let front_proxy = crate::tls::ensure_front_proxy(dir).expect("front proxy");
        let registry = Arc::new(RegistryCtx::new(
            flotilla_store::Store::open(dir).expect("store"),
            flotilla_registry::auth::Tokens::load_or_create(dir).expect("tokens"),
            certs.ca_pem,
            "127.0.0.1:6443".into(),
            tokio_util::sync::CancellationToken::new(),
        ));
        Arc::new(Self {
            aggregator: Arc::new(Aggregator::new(registry.clone(), front_proxy)),
            registry,
            bookmark_interval: Duration::from_secs(30),
            metrics: RequestMetrics::new().expect("metrics"),
            impersonation: Default::default(),
            kubelets: Kubelets::new().expect("kubelet client"),
            inflight: flotilla_serving::inflight::Limits::new(0, 0),
        })
    }
}
