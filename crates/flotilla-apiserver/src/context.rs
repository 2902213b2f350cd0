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
}
