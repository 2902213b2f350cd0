//! Building a member-cluster client from a Cluster and its credentials Secret, as Karmada's
//! `NewClusterClientSet` does: host = `spec.apiEndpoint`, bearer token = Secret `token`, CA = Secret
//! `caBundle` unless `insecureSkipTLSVerification`, optional `proxyURL` (`proxyHeader` is not supported).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::secret_keys;
use flotilla_client::RateLimit;
use flotilla_client::leader::Fence;
use k8s_openapi::api::core::v1::Secret;
use kube::client::DynBody;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, ResourceExt};
use serde_json::json;
use tower::util::MapResponseLayer;

use crate::error::{Error, Result};

/// Clusters whose disabled TLS verification was already reported.
static INSECURE_REPORTED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

/// Reports once per cluster and process that its serving certificate is not verified. kube-client warns on
/// every TLS handshake instead, dozens of lines a minute per member; the binary silences that warning.
fn warn_insecure_once(cluster: &str) {
    let first = INSECURE_REPORTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(cluster.to_owned());
    if first {
        tracing::warn!(
            cluster,
            "the member's serving certificate is not verified (spec.insecureSkipTLSVerification is true)"
        );
    }
}

/// A kubeconfig (as JSON) reaching `cluster` with `token` and the PEM `ca_bundle`.
pub(crate) fn kubeconfig_for(
    cluster: &Cluster,
    token: &str,
    ca_bundle: Option<&[u8]>,
) -> serde_json::Value {
    let name = cluster.name_any();
    let mut server = json!({"server": cluster.spec.api_endpoint});
    if cluster.spec.insecure_skip_tls_verification {
        server["insecure-skip-tls-verify"] = json!(true);
    } else if let Some(ca) = ca_bundle {
        server["certificate-authority-data"] =
            json!(base64::engine::general_purpose::STANDARD.encode(ca));
    }
    if !cluster.spec.proxy_url.is_empty() {
        server["proxy-url"] = json!(cluster.spec.proxy_url);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": server}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    })
}

/// kube's client configuration for reaching `cluster` with the bearer `token` and the PEM `ca_bundle`, as
/// Karmada's `NewClusterClientSet` builds it: server `spec.apiEndpoint`, the CA unless
/// `spec.insecureSkipTLSVerification`, and `spec.proxyURL`. The control plane's member clients use it with the
/// `secretRef` Secret's token; the aggregated API server's cluster proxy with the impersonator token.
///
/// # Errors
/// `MemberClient` naming the field at fault: an `apiEndpoint` that is not a URL with a host, or connection
/// settings kube refuses (a `proxyURL` it cannot use, say).
pub async fn member_config(
    cluster: &Cluster,
    token: &str,
    ca_bundle: Option<&[u8]>,
) -> Result<Config> {
    let name = cluster.name_any();
    let fail = |reason: String| Error::MemberClient {
        cluster: name.clone(),
        reason,
    };
    let endpoint = &cluster.spec.api_endpoint;
    let uri: http::Uri = endpoint
        .parse()
        .map_err(|err| fail(format!("spec.apiEndpoint {endpoint:?} is invalid: {err}")))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(fail(format!("spec.apiEndpoint {endpoint:?} has no host")));
    }
    let kubeconfig: Kubeconfig = serde_json::from_value(kubeconfig_for(cluster, token, ca_bundle))
        .map_err(|err| fail(format!("failed to assemble a kubeconfig: {err}")))?;
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|err| fail(format!("invalid connection settings: {err}")))
}

/// A client for a member from its Cluster and Secret, which sets `rejected` whenever the member answers 401
/// Unauthorized (the credentials in the Secret were rotated or revoked), so the owner can rebuild the client,
/// and whose writes pass `fence` when there is one (the manager's leader election).
///
/// # Errors
/// `MemberClient` naming the field at fault: an `apiEndpoint` that is not a URL with a host, a Secret
/// without `token`, or without `caBundle` when TLS verification is on.
pub(super) async fn build_watched_client(
    cluster: &Cluster,
    secret: &Secret,
    timeout: Duration,
    limit: RateLimit,
    fence: Option<&Fence>,
    rejected: Arc<AtomicBool>,
) -> Result<Client> {
    let name = cluster.name_any();
    let fail = |reason: String| Error::MemberClient {
        cluster: name.clone(),
        reason,
    };
    let secret_name = format!(
        "{}/{}",
        secret.namespace().unwrap_or_default(),
        secret.name_any()
    );
    let data = secret.data.clone().unwrap_or_default();
    let token = data
        .get(secret_keys::TOKEN)
        .map(|t| String::from_utf8_lossy(&t.0).trim().to_owned())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            fail(format!(
                "the secret {secret_name} has no {:?}",
                secret_keys::TOKEN
            ))
        })?;
    let ca = data
        .get(secret_keys::CA_BUNDLE)
        .map(|ca| ca.0.clone())
        .filter(|ca| !ca.is_empty());
    if ca.is_none() && !cluster.spec.insecure_skip_tls_verification {
        return Err(fail(format!(
            "the secret {secret_name} has no {:?} and spec.insecureSkipTLSVerification is false",
            secret_keys::CA_BUNDLE
        )));
    }
    if cluster.spec.insecure_skip_tls_verification {
        warn_insecure_once(&name);
    }
    let mut config = member_config(cluster, &token, ca.as_deref()).await?;
    config.connect_timeout = Some(timeout.min(Duration::from_secs(10)));
    // `spec.proxyHeader` (headers for the proxy's CONNECT) is not supported: kube's proxy connector sends
    // none. TODO(#5): support it when a user needs it.
    let builder = flotilla_client::builder(config, limit)
        .map_err(|err| fail(format!("failed to create a ClusterClient: {err}")))?;
    let watch_401 = MapResponseLayer::new(move |response: http::Response<Box<DynBody>>| {
        if response.status() == http::StatusCode::UNAUTHORIZED {
            rejected.store(true, Ordering::Relaxed);
        }
        response
    });
    let builder = builder.with_layer(&watch_401);
    Ok(match fence {
        Some(fence) => builder.with_layer(&fence.layer()).build(),
        None => builder.build(),
    })
}
