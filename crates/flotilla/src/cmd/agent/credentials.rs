//! The agent's own credentials for the control plane, as karmada-agent keeps them: a kubeconfig with the
//! client certificate of user `system:karmada:agent:<cluster>`, stored in the member as Secret
//! `<namespace>/karmada-kubeconfig` (key `karmada-kubeconfig`, namespace `karmada-system` by default).
//!
//! * [`obtain`]: the stored kubeconfig while its certificate is valid; otherwise a new certificate asked for
//!   with a bootstrap token (`--bootstrap-kubeconfig`), stored before it is used, so a restarted agent does not
//!   ask again.
//! * [`rotate_if_due`]: karmada-agent's `certRotation`: once no more than the threshold of the stored
//!   certificate's life is left, a new one is asked for with the current one and stored in its place.

use anyhow::Context;
use base64::Engine;
use flotilla_api::names::{agents, labels};
use flotilla_join::bootstrap::{self, AgentCertificate};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a certificate request may wait to be approved and issued.
const ISSUE_TIMEOUT: Duration = Duration::from_secs(300);

/// Where the agent keeps its credentials: the member and the Secret's namespace there.
#[derive(Clone)]
pub struct Store {
    /// The member cluster.
    pub member: kube::Client,
    /// The namespace of Secret `karmada-kubeconfig`.
    pub namespace: String,
}

impl Store {
    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.member.clone(), &self.namespace)
    }

    fn describe(&self) -> String {
        format!(
            "Secret {}/{} of the member",
            self.namespace,
            agents::KUBECONFIG_SECRET
        )
    }

    /// The stored kubeconfig, if there is one.
    ///
    /// # Errors
    /// When the Secret cannot be read, or holds no readable kubeconfig.
    pub async fn load(&self) -> anyhow::Result<Option<Kubeconfig>> {
        let Some(secret) = self
            .secrets()
            .get_opt(agents::KUBECONFIG_SECRET)
            .await
            .with_context(|| format!("failed to read {}", self.describe()))?
        else {
            return Ok(None);
        };
        let data = secret
            .data
            .as_ref()
            .and_then(|d| d.get(agents::KUBECONFIG_SECRET))
            .with_context(|| {
                format!("{} has no key {}", self.describe(), agents::KUBECONFIG_SECRET)
            })?;
        let text = std::str::from_utf8(&data.0)
            .with_context(|| format!("{} holds no text kubeconfig", self.describe()))?;
        let kubeconfig = Kubeconfig::from_yaml(text)
            .with_context(|| format!("{} holds no valid kubeconfig", self.describe()))?;
        Ok(Some(kubeconfig))
    }

    /// Stores `kubeconfig` (creating the namespace, labelled as Karmada labels its own, if need be).
    ///
    /// # Errors
    /// When the namespace or the Secret cannot be written.
    pub async fn save(&self, kubeconfig: &Kubeconfig) -> anyhow::Result<()> {
        let text = flotilla_yaml::to_string(kubeconfig).context("failed to encode a kubeconfig")?;
        let system = || {
            Some(BTreeMap::from([(
                labels::SYSTEM.to_owned(),
                labels::SYSTEM_VALUE.to_owned(),
            )]))
        };
        let namespaces: Api<Namespace> = Api::all(self.member.clone());
        if namespaces
            .get_opt(&self.namespace)
            .await
            .with_context(|| format!("failed to read namespace {} of the member", self.namespace))?
            .is_none()
        {
            let namespace = Namespace {
                metadata: ObjectMeta {
                    name: Some(self.namespace.clone()),
                    labels: system(),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            match namespaces.create(&PostParams::default(), &namespace).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("failed to create namespace {} of the member", self.namespace)
                    });
                }
            }
        }
        let data = BTreeMap::from([(
            agents::KUBECONFIG_SECRET.to_owned(),
            ByteString(text.into_bytes()),
        )]);
        let api = self.secrets();
        let written = match api
            .get_opt(agents::KUBECONFIG_SECRET)
            .await
            .with_context(|| format!("failed to read {}", self.describe()))?
        {
            Some(mut existing) => {
                existing.data = Some(data);
                api.replace(agents::KUBECONFIG_SECRET, &PostParams::default(), &existing)
                    .await
            }
            None => {
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(agents::KUBECONFIG_SECRET.to_owned()),
                        namespace: Some(self.namespace.clone()),
                        labels: system(),
                        ..ObjectMeta::default()
                    },
                    data: Some(data),
                    ..Secret::default()
                };
                api.create(&PostParams::default(), &secret).await
            }
        };
        written.with_context(|| format!("failed to write {}", self.describe()))?;
        Ok(())
    }
}

/// The client configuration of `kubeconfig`'s current context.
///
/// # Errors
/// When it names no usable cluster or user.
pub async fn config(kubeconfig: Kubeconfig) -> anyhow::Result<kube::Config> {
    kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .context("failed to read the agent's kubeconfig")
}

fn decode(field: &str, data: &str) -> anyhow::Result<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .with_context(|| format!("the agent's kubeconfig has an invalid {field}"))?;
    String::from_utf8(bytes).with_context(|| format!("the agent's kubeconfig has an invalid {field}"))
}

/// The server and CA (PEM) of `kubeconfig`'s current context, and its user's client certificate (PEM).
fn parts(kubeconfig: &Kubeconfig) -> anyhow::Result<(String, Option<String>, Option<String>)> {
    let context = kubeconfig
        .current_context
        .as_deref()
        .and_then(|name| kubeconfig.contexts.iter().find(|c| c.name == name))
        .and_then(|c| c.context.as_ref())
        .context("the agent's kubeconfig has no current context")?;
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.as_ref())
        .context("the agent's kubeconfig names a cluster it does not have")?;
    let server = cluster
        .server
        .clone()
        .context("the agent's kubeconfig has no server")?;
    let ca = cluster
        .certificate_authority_data
        .as_deref()
        .map(|data| decode("certificate-authority-data", data))
        .transpose()?;
    let certificate = context
        .user
        .as_deref()
        .and_then(|name| kubeconfig.auth_infos.iter().find(|a| a.name == name))
        .and_then(|a| a.auth_info.as_ref())
        .and_then(|a| a.client_certificate_data.as_deref())
        .map(|data| decode("client-certificate-data", data))
        .transpose()?;
    Ok((server, ca, certificate))
}

/// A certificate for the agent of `cluster`, asked for through `client`, with a kubeconfig reaching the server
/// of `reach` as `reach` does.
async fn issue(
    client: &kube::Client,
    reach: &Kubeconfig,
    cluster: &str,
    lifetime: Duration,
) -> anyhow::Result<Kubeconfig> {
    let (server, ca, _) = parts(reach)?;
    let certificate: AgentCertificate =
        bootstrap::request_certificate(client, cluster, lifetime, ISSUE_TIMEOUT)
            .await
            .with_context(|| format!("failed to obtain a certificate for the agent of {cluster}"))?;
    Ok(bootstrap::agent_kubeconfig(
        &server,
        ca.as_deref(),
        cluster,
        &certificate,
    ))
}

/// The cluster entry (server, CA, TLS settings) of `kubeconfig`'s current context.
fn current_cluster(kubeconfig: &Kubeconfig) -> Option<&kube::config::Cluster> {
    let context = kubeconfig
        .current_context
        .as_deref()
        .and_then(|name| kubeconfig.contexts.iter().find(|c| c.name == name))?
        .context
        .as_ref()?;
    kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)?
        .cluster
        .as_ref()
}

/// `stored` reaching the control plane where `bootstrap` does (the control plane may have moved since the
/// certificate was stored: a new address, a new port), and whether that changed it; `None` when the two trust
/// different CAs: another control plane, which the stored certificate is no credential for.
fn retarget(mut stored: Kubeconfig, bootstrap: &Kubeconfig) -> Option<(Kubeconfig, bool)> {
    let Some(wanted) = current_cluster(bootstrap).cloned() else {
        return Some((stored, false));
    };
    let name = stored
        .current_context
        .as_deref()
        .and_then(|name| stored.contexts.iter().find(|c| c.name == name))
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone());
    let entry = name.and_then(|name| stored.clusters.iter_mut().find(|c| c.name == name))?;
    let current = entry.cluster.as_ref()?;
    if current.certificate_authority_data != wanted.certificate_authority_data {
        return None;
    }
    let moved = current.server != wanted.server
        || current.insecure_skip_tls_verify != wanted.insecure_skip_tls_verify
        || current.proxy_url != wanted.proxy_url
        || current.tls_server_name != wanted.tls_server_name;
    if moved {
        entry.cluster = Some(wanted);
    }
    Some((stored, moved))
}

/// The agent's kubeconfig for the control plane: the stored one while its certificate is still valid (reaching
/// the control plane where `bootstrap` does), otherwise one with a new certificate asked for with the bootstrap
/// token of `bootstrap`, stored first.
///
/// # Errors
/// When the store cannot be read or written, or no certificate is issued.
pub async fn obtain(store: &Store, bootstrap: &Kubeconfig, cluster: &str) -> anyhow::Result<Kubeconfig> {
    if let Some(stored) = store.load().await? {
        match parts(&stored).and_then(|(_, _, certificate)| {
            let certificate = certificate.context("the stored kubeconfig has no client certificate")?;
            Ok(bootstrap::validity(&certificate)?)
        }) {
            Ok((_, ends)) if ends > jiff::Timestamp::now() => match retarget(stored, bootstrap) {
                Some((stored, moved)) => {
                    if moved {
                        store.save(&stored).await?;
                    }
                    return Ok(stored);
                }
                None => tracing::info!(%cluster, "the stored certificate is of another control plane: bootstrapping again"),
            },
            Ok(_) => tracing::info!(%cluster, "the stored certificate has expired: bootstrapping again"),
            Err(e) => tracing::warn!(%cluster, error = %format!("{e:#}"), "the stored kubeconfig is unusable: bootstrapping again"),
        }
    }
    let client = kube::Client::try_from(config(bootstrap.clone()).await?)
        .context("failed to create a client from the bootstrap kubeconfig")?;
    let kubeconfig = issue(&client, bootstrap, cluster, bootstrap::CERTIFICATE_LIFETIME).await?;
    store.save(&kubeconfig).await?;
    tracing::info!(%cluster, "obtained the agent's client certificate with the bootstrap token");
    Ok(kubeconfig)
}

/// Renews the stored certificate through `control` (authenticated by the current one) once no more than
/// `threshold` of its life is left, for as long as the current one was valid. Returns the new kubeconfig, or
/// `None` when nothing was due (or nothing is stored).
///
/// # Errors
/// When the store cannot be read or written, the certificate cannot be read, or no new one is issued.
pub async fn rotate_if_due(
    store: &Store,
    control: &kube::Client,
    cluster: &str,
    threshold: f64,
) -> anyhow::Result<Option<Kubeconfig>> {
    let Some(stored) = store.load().await? else {
        return Ok(None);
    };
    let (_, _, certificate) = parts(&stored)?;
    let certificate = certificate.context("the stored kubeconfig has no client certificate")?;
    let (begins, ends) = bootstrap::validity(&certificate)?;
    if !bootstrap::should_rotate((begins, ends), threshold, jiff::Timestamp::now()) {
        return Ok(None);
    }
    let lifetime = ends.duration_since(begins).unsigned_abs();
    let renewed = issue(control, &stored, cluster, lifetime).await?;
    store.save(&renewed).await?;
    Ok(Some(renewed))
}
