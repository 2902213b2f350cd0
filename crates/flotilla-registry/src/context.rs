//! What one server's registry shares with its write path, its admission webhooks and its internal controllers:
//! the store, the catalogue of served resources, the tokens the internal controllers issue, and what the
//! server publishes about itself (its CA and address).

use std::sync::Arc;

use flotilla_store::Store;
use tokio_util::sync::CancellationToken;

use crate::admission::webhooks::Webhooks;
use crate::auth::Tokens;
use crate::catalog::Catalog;

/// Shared state of one server's registry, handed to every write and internal controller.
pub struct Ctx {
    /// The object store.
    pub store: Arc<Store>,
    /// Served resources.
    pub catalog: Arc<Catalog>,
    /// Authentication's token table, which the ServiceAccount token controller keeps in step with the Secrets.
    pub tokens: Tokens,
    /// CA PEM, published in every namespace's `kube-root-ca.crt` and in ServiceAccount token Secrets.
    pub ca_pem: String,
    /// `host:port` clients reach the server at (the `kubernetes` Service's endpoint).
    pub address: String,
    /// Cancelled on shutdown.
    pub shutdown: CancellationToken,
    /// Serialises Service writes while they allocate cluster IPs and node ports.
    pub service_allocation: Arc<tokio::sync::Mutex<()>>,
    /// Calls the admission webhooks the Mutating- and ValidatingWebhookConfigurations register.
    pub webhooks: Webhooks,
}

impl Ctx {
    /// The registry of a server over `store`, serving the built-in resources (CRDs add theirs once the CRD
    /// controller registers them).
    pub fn new(
        store: Arc<Store>,
        tokens: Tokens,
        ca_pem: String,
        address: String,
        shutdown: CancellationToken,
    ) -> Self {
        Self {
            store,
            catalog: Arc::new(Catalog::with_builtins()),
            tokens,
            ca_pem,
            address,
            shutdown,
            service_allocation: Arc::new(tokio::sync::Mutex::new(())),
            webhooks: Webhooks::default(),
        }
    }
}

#[cfg(test)]
impl Ctx {
    /// A context over a fresh store in `dir`, with the built-in catalogue and no server or controllers running.
    pub(crate) fn for_test(dir: &std::path::Path) -> Arc<Self> {
        Arc::new(Self::new(
            Store::open(dir).expect("store"),
            Tokens::load_or_create(dir).expect("tokens"),
            "-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n".into(),
            "127.0.0.1:6443".into(),
            CancellationToken::new(),
        ))
    }
}
