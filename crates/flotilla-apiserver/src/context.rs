//! What one server shares with its request handlers, its registry and its internal controllers.
//!
//! The layers stand in one direction: the HTTP layer (`crate::server`, `crate::handlers`) and the internal
//! controllers (`crate::controllers`) call the registry (`crate::registry`), which prepares writes and commits
//! them to the store (`crate::store`); reads go to the store directly. Nothing below the HTTP layer knows of
//! requests or responses.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::auth::Tokens;
use crate::catalog::Catalog;
use crate::store::Store;

/// Shared state of one server, handed to every handler and internal controller.
pub struct Ctx {
    /// The object store.
    pub store: Arc<Store>,
    /// Served resources.
    pub catalog: Arc<Catalog>,
    /// Authentication.
    pub tokens: Tokens,
    /// CA PEM.
    pub ca_pem: String,
    /// `host:port` clients reach us at.
    pub address: String,
    /// Cancelled on shutdown.
    pub shutdown: CancellationToken,
    /// Periodic bookmark interval.
    pub bookmark_interval: Duration,
    /// Serialises Service writes while they allocate cluster IPs and node ports.
    pub service_allocation: Arc<tokio::sync::Mutex<()>>,
    /// Calls the admission webhooks the Mutating- and ValidatingWebhookConfigurations register.
    pub webhooks: crate::admission::webhooks::Webhooks,
    /// `apiserver_request_total`, served on `/metrics`.
    pub metrics: crate::metrics::RequestMetrics,
    /// The impersonation mode each requester last used (`crate::auth::impersonation`).
    pub impersonation: crate::auth::impersonation::Impersonation,
    /// APIServices with a service, their clients and what their backends serve (`crate::aggregator`).
    pub aggregator: crate::aggregator::Aggregator,
}

#[cfg(test)]
impl Ctx {
    /// A context over a fresh store in `dir`, with the built-in catalogue and no server or controllers running.
    pub(crate) fn for_test(dir: &std::path::Path) -> Arc<Self> {
        let certs = crate::server::tls::ensure(dir, &[]).expect("certificates");
        let front_proxy = crate::server::tls::ensure_front_proxy(dir).expect("front proxy");
        Arc::new(Self {
            store: Store::open(dir).expect("store"),
            catalog: Arc::new(Catalog::with_builtins()),
            tokens: Tokens::load_or_create(dir).expect("tokens"),
            ca_pem: certs.ca_pem,
            address: "127.0.0.1:6443".into(),
            shutdown: CancellationToken::new(),
            bookmark_interval: Duration::from_secs(30),
            service_allocation: Arc::new(tokio::sync::Mutex::new(())),
            webhooks: Default::default(),
            metrics: crate::metrics::RequestMetrics::new().expect("metrics"),
            impersonation: Default::default(),
            aggregator: crate::aggregator::Aggregator::new(front_proxy),
        })
    }
}
