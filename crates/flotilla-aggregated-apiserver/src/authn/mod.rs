//! Authentication of the front proxy (kube-aggregator, or the embedded server's aggregator): the request-header
//! settings of ConfigMap `kube-system/extension-apiserver-authentication`, kept current by a watch, and the
//! check of each request's client certificate and identity headers against them.
//!
//! Guarantees: a request is authenticated only by a certificate that chains to the request-header CA
//! published *now* (a rotated CA takes effect with the next request, with no new TLS configuration), whose
//! common name is allowed, and a user name header; anything else is `Unauthorized`. Before the ConfigMap is
//! first read, and while it is absent, nobody is authenticated.

mod config;

use std::sync::Arc;

use futures::StreamExt;
use http::{HeaderMap, HeaderName};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_stream};
use kube::{Api, Client};
use rustls::pki_types::CertificateDer;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use config::RequestHeaderConfig;

use crate::error::RequestError;
use crate::names;
use crate::user::UserInfo;

/// The client certificates a connection presented (leaf first), put in each request's extensions by the
/// server; empty when none was presented.
#[derive(Clone, Debug, Default)]
pub(crate) struct PeerCertificates(pub(crate) Arc<Vec<CertificateDer<'static>>>);

/// The current front-proxy settings, shared by every request.
#[derive(Clone, Debug)]
pub(crate) struct FrontProxy {
    current: watch::Receiver<Option<Arc<RequestHeaderConfig>>>,
}

impl FrontProxy {
    /// Watches the ConfigMap through `client` until `shutdown`, publishing every version of it.
    pub(crate) fn watch(client: Client, shutdown: CancellationToken) -> FrontProxy {
        let (publish, current) = watch::channel(None);
        tokio::spawn(async move {
            tokio::select! {
                () = keep_current(client, publish) => {}
                () = shutdown.cancelled() => {}
            }
        });
        FrontProxy { current }
    }

    /// Whether the ConfigMap has been read and is usable.
    pub(crate) fn ready(&self) -> bool {
        self.current.borrow().is_some()
    }

    /// The caller, if `peer` and `headers` are a front proxy's.
    ///
    /// # Errors
    /// [`RequestError::Unauthorized`] otherwise (the reason is logged, not told).
    pub(crate) fn authenticate(
        &self,
        peer: &PeerCertificates,
        headers: &HeaderMap,
    ) -> Result<UserInfo, RequestError> {
        let Some(config) = self.current.borrow().clone() else {
            tracing::debug!("no request-header configuration yet: request refused");
            return Err(RequestError::Unauthorized);
        };
        config.authenticate(&peer.0, headers).map_err(|reason| {
            tracing::debug!(%reason, "front-proxy authentication failed");
            RequestError::Unauthorized
        })
    }

    /// Whether `name` carries an identity under the current settings, or credentials of any kind: what a
    /// proxied request must not pass on.
    pub(crate) fn is_identity_header(&self, name: &HeaderName) -> bool {
        crate::user::is_identity_header(name)
            || self
                .current
                .borrow()
                .as_ref()
                .is_some_and(|config| config.is_identity_header(name))
    }
}

/// Follows the ConfigMap with kube-runtime's watcher (which relists and backs off on its own) and publishes
/// each version; an unusable version is published as "no settings", so a broken CA trusts nobody.
async fn keep_current(client: Client, publish: watch::Sender<Option<Arc<RequestHeaderConfig>>>) {
    let api: Api<ConfigMap> = Api::namespaced(client, names::AUTHENTICATION_CONFIG_MAP_NAMESPACE);
    let selector = format!("metadata.name={}", names::AUTHENTICATION_CONFIG_MAP);
    let mut events = watch_stream(api, watcher::Config::default().fields(&selector))
        .default_backoff()
        .boxed();
    let mut seen = false;
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Apply(map) | Event::InitApply(map)) => {
                seen = true;
                let data = map.data.unwrap_or_default();
                match RequestHeaderConfig::from_data(&data) {
                    Ok(config) => {
                        tracing::info!("front-proxy authentication settings loaded");
                        publish.send_replace(Some(Arc::new(config)));
                    }
                    Err(error) => {
                        tracing::warn!(
                            error = %crate::error::chain(&error),
                            "ConfigMap kube-system/{} is unusable: no front proxy is trusted",
                            names::AUTHENTICATION_CONFIG_MAP
                        );
                        publish.send_replace(None);
                    }
                }
            }
            Ok(Event::Delete(_)) => {
                tracing::warn!(
                    "ConfigMap kube-system/{} was deleted: no front proxy is trusted",
                    names::AUTHENTICATION_CONFIG_MAP
                );
                publish.send_replace(None);
            }
            Ok(Event::Init) => seen = false,
            Ok(Event::InitDone) => {
                if !seen {
                    tracing::warn!(
                        "ConfigMap kube-system/{} does not exist: no front proxy is trusted until the API \
                         server publishes it",
                        names::AUTHENTICATION_CONFIG_MAP
                    );
                    publish.send_replace(None);
                }
            }
            Err(error) => {
                tracing::debug!(error = %crate::error::chain(&error), "watching the authentication ConfigMap");
            }
        }
    }
}
