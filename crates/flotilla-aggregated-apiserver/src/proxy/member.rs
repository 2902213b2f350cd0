//! Connections to members for the proxy: kube clients per cluster built as Karmada's `ConnectCluster`
//! builds its transport (endpoint `spec.apiEndpoint`, CA from the `secretRef` Secret's `caBundle` or
//! `spec.insecureSkipTLSVerification`, `spec.proxyURL`) with the token of the `spec.impersonatorSecretRef`
//! Secret, from the same configuration as the controllers' member clients.
//!
//! Each cluster has two clients ([`Clients`]): one for requests, through the controllers' builder (HTTP/2
//! when the member offers it), and one for upgrades, kube's own stack, which speaks HTTP/1.1 only: a
//! protocol switch exists in HTTP/1.1 alone, and a connection that ALPN made HTTP/2 cannot carry one (Karmada's
//! `ConnectCluster` clones its TLS configuration for the upgrade dialer for the same reason: its transport
//! adds `h2` to the original).
//!
//! Clients are kept per cluster while the Cluster and both Secrets are unchanged (their resourceVersions),
//! so connections to a member are reused; any change builds new ones.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::secret_keys;
use flotilla_client::RateLimit;
use k8s_openapi::api::core::v1::Secret;
use kube::{Client, ResourceExt};

use crate::cache::Members;
use crate::error::RequestError;

/// How long connecting to a member may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a client was built from: when any of it changes, the client is rebuilt.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fingerprint {
    cluster: Option<String>,
    ca_secret: Option<String>,
    token_secret: Option<String>,
}

/// The clients reaching one destination.
#[derive(Clone)]
pub(crate) struct Clients {
    /// Every request but upgrades.
    pub(crate) requests: Client,
    /// Upgrade requests: HTTP/1.1 only, connections taken out of the pool once switched.
    pub(crate) upgrades: Client,
}

/// The member clients of the proxy.
#[derive(Default)]
pub(crate) struct Connections {
    clients: Mutex<HashMap<String, (Fingerprint, Clients)>>,
}

impl Connections {
    /// The clients reaching `cluster` as its impersonator, with Karmada's checks in Karmada's order.
    ///
    /// # Errors
    /// Karmada's messages for a missing Secret, an empty `apiEndpoint`, no `impersonatorSecretRef` and a
    /// Secret without `token`; [`RequestError::MemberClient`] naming the field kube refused.
    pub(crate) async fn connect(
        &self,
        members: &Members,
        cluster: &Cluster,
    ) -> Result<Clients, RequestError> {
        let name = cluster.name_any();
        let ca_secret = match &cluster.spec.secret_ref {
            Some(reference) => Some(
                members
                    .secret(&reference.namespace, &reference.name)
                    .await?,
            ),
            None => None,
        };
        if cluster.spec.api_endpoint.is_empty() {
            return Err(RequestError::NoApiEndpoint { cluster: name });
        }
        let Some(reference) = &cluster.spec.impersonator_secret_ref else {
            return Err(RequestError::NoImpersonatorSecretRef { cluster: name });
        };
        let token_secret = members
            .secret(&reference.namespace, &reference.name)
            .await?;
        let token = value(&token_secret, secret_keys::TOKEN)
            .map(|token| String::from_utf8_lossy(token).trim().to_owned())
            .filter(|token| !token.is_empty())
            .ok_or_else(|| RequestError::NoImpersonatorToken {
                cluster: name.clone(),
            })?;
        let fingerprint = Fingerprint {
            cluster: cluster.resource_version(),
            ca_secret: ca_secret.as_ref().and_then(|s| s.resource_version()),
            token_secret: token_secret.resource_version(),
        };
        if let Some((built_from, clients)) = self
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&name)
            && *built_from == fingerprint
        {
            return Ok(clients.clone());
        }
        let ca = ca_secret
            .as_deref()
            .and_then(|secret| value(secret, secret_keys::CA_BUNDLE))
            .filter(|ca| !ca.is_empty());
        let clients = build(cluster, &token, ca).await?;
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name, (fingerprint, clients.clone()));
        Ok(clients)
    }
}

fn value<'a>(secret: &'a Secret, key: &str) -> Option<&'a [u8]> {
    secret
        .data
        .as_ref()?
        .get(key)
        .map(|bytes| bytes.0.as_slice())
}

/// The clients for the proxy: no client-side retries (the member's 429s and 503s are the caller's to see), no
/// rate limit and no read timeout (watches and exec sessions through the proxy last as long as the caller
/// wants).
async fn build(cluster: &Cluster, token: &str, ca: Option<&[u8]>) -> Result<Clients, RequestError> {
    let name = cluster.name_any();
    let failed = |source| RequestError::MemberClient {
        cluster: name.clone(),
        source: Box::new(source),
    };
    let mut config = flotilla_controllers::member_config(cluster, token, ca)
        .await
        .map_err(failed)?;
    config.default_retry = false;
    config.read_timeout = None;
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    let refused = |error: &dyn std::fmt::Display| {
        failed(flotilla_controllers::Error::MemberClient {
            cluster: name.clone(),
            reason: format!("failed to create a client: {error}"),
        })
    };
    let upgrades = kube::client::ClientBuilder::try_from(config.clone())
        .map_err(|error| refused(&error))?
        .build();
    let unlimited = RateLimit { qps: 0.0, burst: 0 };
    let requests = flotilla_client::builder(config, unlimited)
        .map_err(|error| refused(&error))?
        .build();
    Ok(Clients { requests, upgrades })
}
