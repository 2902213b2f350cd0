//! The webhook layer: calls the interpreter webhooks that users register with
//! ResourceInterpreterWebhookConfigurations.
//!
//! Guarantees:
//! - Selection is Karmada's: every webhook of every configuration, sorted by `<configuration>/<webhook>`; the
//!   first with a rule matching the operation and kind is the only one called.
//! - The configuration set is replaced atomically ([`WebhookLayer::replace_all`]); a call in flight keeps the
//!   snapshot it started with.
//! - Every failure (transport, timeout, HTTP status, body, uid, `successful: false`, missing fields, patch) is an
//!   error naming the webhook; there is no failure policy and no fallback to lower layers.
//! - `timeoutSeconds` unset means 10 s, as Karmada's API documentation says (its code sets no deadline then:
//!   docs/INTERPRETER.md); the deadline covers the whole exchange.

mod client;
mod error;
mod select;
mod wire;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use flotilla_api::config::v1alpha1::{
    InterpreterOperation, ResourceInterpreterWebhookConfiguration,
};
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;
use serde_json::Value;

pub use error::{Reason, ServiceError, WebhookError, error_chain};
pub use select::{Hook, Hooks, rule_matches};

use crate::Error;
use crate::layer::{Handles, Layer, LayerKind, Request, Response, gvk_of};
use client::Clients;

/// `timeoutSeconds` when a webhook leaves it unset.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 10;
/// The largest reply body accepted; a reply carries at most one object (etcd caps those at 1.5 MiB) plus base64.
pub const MAX_RESPONSE_BYTES: usize = 8 << 20;

/// The webhook interpreter layer.
pub struct WebhookLayer {
    hooks: RwLock<Arc<Hooks>>,
    clients: Clients,
    loaded: AtomicBool,
}

impl WebhookLayer {
    /// A layer with no webhooks yet. `kube` reaches the control plane, where `service` references are looked
    /// up; without it they resolve through DNS as `<name>.<namespace>.svc`.
    pub fn new(kube: Option<kube::Client>) -> Self {
        WebhookLayer {
            hooks: RwLock::default(),
            clients: Clients::new(kube),
            loaded: AtomicBool::new(false),
        }
    }

    /// Replaces every webhook with those of `configurations` (the full current list), and marks the layer
    /// loaded. Clients of client configs no longer in use are dropped.
    pub fn replace_all(&self, configurations: Vec<ResourceInterpreterWebhookConfiguration>) {
        let hooks = Arc::new(Hooks::new(configurations));
        self.clients
            .retain(hooks.iter().map(|hook| &hook.webhook.client_config));
        *self
            .hooks
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = hooks;
        self.loaded.store(true, Ordering::Release);
    }

    /// Whether [`WebhookLayer::replace_all`] has run at least once.
    pub fn is_loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// The current webhooks, sorted by id.
    pub fn hooks(&self) -> Arc<Hooks> {
        self.hooks
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The webhook that would answer `operation` on `gvk`.
    pub fn select(
        &self,
        gvk: &GroupVersionKind,
        operation: &InterpreterOperation,
    ) -> Option<Arc<Hook>> {
        self.hooks().select(gvk, operation).cloned()
    }

    /// Calls `hook` for `request`; the error names the webhook.
    pub async fn call(
        &self,
        hook: &Hook,
        request: Request,
        gvk: &GroupVersionKind,
    ) -> Result<Response, WebhookError> {
        self.exchange(hook, request, gvk)
            .await
            .map_err(|reason| WebhookError {
                webhook: hook.id.clone(),
                reason,
            })
    }

    async fn exchange(
        &self,
        hook: &Hook,
        request: Request,
        gvk: &GroupVersionKind,
    ) -> Result<Response, Reason> {
        let webhook = &hook.webhook;
        if !webhook
            .interpreter_context_versions
            .iter()
            .any(|v| v == wire::CONTEXT_VERSION)
        {
            return Err(Reason::UnsupportedVersions);
        }
        let timeout = match webhook.timeout_seconds {
            None => DEFAULT_TIMEOUT_SECONDS,
            Some(seconds) => u64::try_from(seconds)
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| {
                    Reason::InvalidClientConfig(format!("timeoutSeconds {seconds} is not positive"))
                })?,
        };
        let endpoint = self.clients.get(&webhook.client_config)?;
        let mut outgoing = wire::encode(request, gvk)?;
        let body = std::mem::take(&mut outgoing.body);
        let mut url = endpoint.url.clone();
        url.query_pairs_mut()
            .append_pair("timeout", &format!("{timeout}s"));
        let post = endpoint
            .client
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body);
        let exchange = async {
            let mut response = post.send().await.map_err(|source| Reason::Send {
                url: endpoint.url.to_string(),
                source,
            })?;
            let status = response.status();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(Reason::ReadBody)? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(Reason::BodyTooLarge(MAX_RESPONSE_BYTES));
                }
                body.extend_from_slice(&chunk);
            }
            Ok((status, body))
        };
        let (status, body) = tokio::time::timeout(Duration::from_secs(timeout), exchange)
            .await
            .map_err(|_| Reason::Timeout(timeout))??;
        if !status.is_success() {
            let snippet = String::from_utf8_lossy(&body[..body.len().min(256)]).into_owned();
            return Err(Reason::HttpStatus {
                status: status.as_u16(),
                body: snippet,
            });
        }
        wire::decode(&body, outgoing)
    }
}

impl Default for WebhookLayer {
    fn default() -> Self {
        WebhookLayer::new(None)
    }
}

impl Layer for WebhookLayer {
    fn kind(&self) -> LayerKind {
        LayerKind::Webhook
    }

    fn handles(&self, gvk: &GroupVersionKind, operation: &InterpreterOperation) -> Handles {
        let hooks = self.hooks();
        match hooks.select(gvk, operation) {
            Some(hook) => Handles::Yes(hook.id.clone()),
            None if hooks.is_empty() => Handles::No("no webhook is configured".into()),
            None => Handles::No(format!(
                "no webhook rule matches {operation} on {}",
                describe_gvk(gvk)
            )),
        }
    }

    fn interpret(&self, request: Request) -> BoxFuture<'_, Result<Response, Error>> {
        Box::pin(async move {
            let operation = request.operation();
            let gvk = request.gvk()?;
            let Some(hook) = self.select(&gvk, &operation) else {
                return Err(Error::NotEnabled {
                    operation,
                    gvk: describe_gvk(&gvk),
                });
            };
            let object = describe_object(request.object());
            self.call(&hook, request, &gvk)
                .await
                .map_err(|error| Error::Layer {
                    layer: LayerKind::Webhook.as_str(),
                    operation,
                    object,
                    source: Box::new(error),
                })
        })
    }
}

/// `group/version, Kind=kind`, as Kubernetes prints a GVK.
fn describe_gvk(gvk: &GroupVersionKind) -> String {
    let api_version = if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    };
    format!("{api_version}, Kind={}", gvk.kind)
}

/// `Kind namespace/name` (or `Kind name` when cluster-scoped) of a JSON object.
fn describe_object(object: &Value) -> String {
    let kind = gvk_of(object).map(|gvk| gvk.kind).unwrap_or_default();
    let name = wire::metadata_str(object, "name");
    match wire::metadata_str(object, "namespace") {
        "" => format!("{kind} {name}"),
        namespace => format!("{kind} {namespace}/{name}"),
    }
}
