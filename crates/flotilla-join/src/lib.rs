//! Registering a member cluster with the control plane, as Karmada's `pkg/util/credential.go` does for
//! `karmadactl join` (Push mode, [`register`]) and for karmada-agent after `karmadactl register` (Pull mode,
//! [`register_pull`]):
//!
//! * in the member ([`member`]): namespace `karmada-cluster` and the ServiceAccounts whose tokens the control plane
//!   keeps, `karmada-<cluster>` with its ClusterRole and binding (the credentials) and `karmada-impersonator` (whose
//!   rights to impersonate the unified-auth controller grants);
//! * in the control plane: Secret `karmada-cluster/<cluster>` (`token`, `caBundle`) named by `spec.secretRef`,
//!   Secret `karmada-cluster/<cluster>-impersonator` (`token`) named by `spec.impersonatorSecretRef`, both labelled
//!   `karmada.io/system: "true"` and with a controller owner reference to the Cluster (so deleting the Cluster
//!   collects them), and the Cluster itself.
//!
//! A Push member is reached by the control plane; a Pull member by its agent, yet karmada-agent still reports both
//! Secrets by default (`--report-secrets KubeCredentials,KubeImpersonator`): the aggregated API server proxies to
//! Pull members too.
//!
//! Guarantees: [`register`] and [`register_pull`] are idempotent. Registering again with the same settings changes
//! nothing; with new settings (a restarted member on another port, a rotated token) it updates the Secrets and the
//! Cluster's connection fields in place and keeps everything else (taints, resource models, status, finalizers).
//! A Secret that is not reported leaves the Cluster's reference to it as it was, as karmada-agent does.
//!
//! One implementation for `flotilla join`, `register`, `agent` and `up`. Invariant: it depends on `flotilla-api`
//! and `flotilla-client` (a failed call's error) only; no controller registers members, so the controllers never
//! depend on it.

pub mod agent_rbac;
pub mod bootstrap;
mod error;
pub mod member;

use std::collections::BTreeMap;
use std::fmt;

use flotilla_api::cluster::v1alpha1::{
    Cluster, ClusterSpec, ClusterSyncMode, LocalSecretReference,
};
use flotilla_api::names::{labels, namespaces, registration, secret_keys};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use crate::error::{Error, Result};

/// Which Secrets a registration reports to the control plane: karmada-agent's `--report-secrets`
/// (`KubeCredentials`, `KubeImpersonator`, `None`; both by default, as `karmadactl join` always does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportSecrets {
    /// `KubeCredentials`: Secret `<cluster>` and `spec.secretRef`.
    pub credentials: bool,
    /// `KubeImpersonator`: Secret `<cluster>-impersonator` and `spec.impersonatorSecretRef`.
    pub impersonator: bool,
}

impl Default for ReportSecrets {
    fn default() -> Self {
        ReportSecrets {
            credentials: true,
            impersonator: true,
        }
    }
}

/// A `--report-secrets` entry that is none of Karmada's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown secret {0:?} to report: valid values are KubeCredentials, KubeImpersonator and None"
)]
pub struct UnknownReportSecret(pub String);

impl ReportSecrets {
    /// Reads a comma-separated `--report-secrets` value. Karmada ignores values it does not know, so a
    /// misspelt one silently reports nothing; here it is an error.
    ///
    /// # Errors
    /// [`UnknownReportSecret`] naming the first entry that is not `KubeCredentials`, `KubeImpersonator` or `None`.
    pub fn parse(text: &str) -> Result<Self, UnknownReportSecret> {
        let mut report = ReportSecrets {
            credentials: false,
            impersonator: false,
        };
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match entry {
                "KubeCredentials" => report.credentials = true,
                "KubeImpersonator" => report.impersonator = true,
                "None" => {}
                other => return Err(UnknownReportSecret(other.to_owned())),
            }
        }
        Ok(report)
    }
}

impl fmt::Display for ReportSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut entries = Vec::new();
        if self.credentials {
            entries.push("KubeCredentials");
        }
        if self.impersonator {
            entries.push("KubeImpersonator");
        }
        if entries.is_empty() {
            entries.push("None");
        }
        f.write_str(&entries.join(","))
    }
}

/// What the control plane uses to reach a member: Secret `karmada-cluster/<cluster>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credentials {
    /// Bearer token on the member.
    pub token: String,
    /// PEM CA bundle of the member's serving certificate.
    pub ca_bundle: Option<Vec<u8>>,
}

/// Everything needed to register one member.
#[derive(Clone, Debug, Default)]
pub struct Registration {
    /// The Cluster's name.
    pub name: String,
    /// URL of the member's API server (`spec.apiEndpoint`).
    pub api_endpoint: String,
    /// The member's credentials (Secret `<name>`, `spec.secretRef`); `None` when they are not reported.
    pub credentials: Option<Credentials>,
    /// The token of the member's `karmada-impersonator` ServiceAccount (Secret `<name>-impersonator`,
    /// `spec.impersonatorSecretRef`); `None` when it is not reported.
    pub impersonator_token: Option<String>,
    /// Skip verifying the member's serving certificate (`spec.insecureSkipTLSVerification`), as the member
    /// kubeconfig's `insecure-skip-tls-verify` asks.
    pub insecure_skip_tls_verification: bool,
    /// Proxy to reach the member through (`spec.proxyURL`); empty for none.
    pub proxy_url: String,
    /// Unique id of the member (Karmada uses its `kube-system` namespace uid); empty leaves `spec.id` unset.
    pub id: String,
}

/// The `kube-system` namespace uid of a member: the id `karmadactl join` records in `spec.id`.
///
/// # Errors
/// `Kube` when the member cannot be asked.
pub async fn member_id(member: &Client) -> Result<String> {
    let namespaces: Api<Namespace> = Api::all(member.clone());
    let ns = namespaces
        .get("kube-system")
        .await
        .map_err(|source| Error::kube("get", "Namespace kube-system of the member", source))?;
    Ok(ns.uid().unwrap_or_default())
}

/// Registers (or re-registers) a Push-mode member with the control plane reached by `control`.
///
/// # Errors
/// `Kube` naming the object when the namespace, a Secret or the Cluster cannot be written.
pub async fn register(control: &Client, registration: &Registration) -> Result<Cluster> {
    register_as(control, registration, ClusterSyncMode::Push).await
}

/// Registers (or re-registers) a Pull-mode member with the control plane reached by `control`: the Cluster
/// karmada-agent creates, with `syncMode: Pull`, the member's `apiEndpoint`, `id`, TLS and proxy settings, and the
/// Secrets the agent reports (a Push registration of the same name becomes a Pull one).
///
/// # Errors
/// `Kube` naming the object when the namespace, a Secret or the Cluster cannot be written.
pub async fn register_pull(control: &Client, registration: &Registration) -> Result<Cluster> {
    register_as(control, registration, ClusterSyncMode::Pull).await
}

async fn register_as(
    control: &Client,
    registration: &Registration,
    mode: ClusterSyncMode,
) -> Result<Cluster> {
    let name = &registration.name;
    // The Secrets live there, and a Pull member's agent renews the cluster's Lease there.
    ensure_namespace(control, namespaces::KARMADA_CLUSTER, "the control plane").await?;
    let mut reported = Vec::new();
    if let Some(credentials) = &registration.credentials {
        let mut data = BTreeMap::from([(
            secret_keys::TOKEN.to_owned(),
            ByteString(credentials.token.clone().into_bytes()),
        )]);
        if let Some(ca) = &credentials.ca_bundle {
            data.insert(secret_keys::CA_BUNDLE.to_owned(), ByteString(ca.clone()));
        }
        reported.push(ensure_secret(control, name, data).await?);
    }
    if let Some(token) = &registration.impersonator_token {
        let data = BTreeMap::from([(
            secret_keys::TOKEN.to_owned(),
            ByteString(token.clone().into_bytes()),
        )]);
        let secret_name = registration::impersonator_secret(name);
        reported.push(ensure_secret(control, &secret_name, data).await?);
    }
    let reference = |secret_name: String| LocalSecretReference {
        namespace: namespaces::KARMADA_CLUSTER.into(),
        name: secret_name,
    };
    let secret_ref = registration
        .credentials
        .as_ref()
        .map(|_| reference(name.clone()));
    let impersonator_ref = registration
        .impersonator_token
        .as_ref()
        .map(|_| reference(registration::impersonator_secret(name)));
    let cluster = create_or_update(control, name, |spec: &mut ClusterSpec| {
        spec.sync_mode.clone_from(&mode);
        spec.api_endpoint.clone_from(&registration.api_endpoint);
        if secret_ref.is_some() {
            spec.secret_ref.clone_from(&secret_ref);
        }
        if impersonator_ref.is_some() {
            spec.impersonator_secret_ref.clone_from(&impersonator_ref);
        }
        spec.insecure_skip_tls_verification = registration.insecure_skip_tls_verification;
        spec.proxy_url.clone_from(&registration.proxy_url);
        if !registration.id.is_empty() {
            spec.id.clone_from(&registration.id);
        }
    })
    .await?;
    for secret in reported {
        own(control, secret, &cluster).await?;
    }
    Ok(cluster)
}

/// Creates Cluster `name` with `apply_connection` applied to a default spec, or applies it to the existing
/// Cluster's spec and updates it if that changed anything.
async fn create_or_update(
    control: &Client,
    name: &str,
    apply_connection: impl Fn(&mut ClusterSpec),
) -> Result<Cluster> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    let describe = || format!("Cluster {name}");
    match clusters
        .get_opt(name)
        .await
        .map_err(|source| Error::kube("get", describe(), source))?
    {
        None => {
            let mut spec = ClusterSpec::default();
            apply_connection(&mut spec);
            let cluster = Cluster::new(name, spec);
            clusters
                .create(&PostParams::default(), &cluster)
                .await
                .map_err(|source| Error::kube("create", describe(), source))
        }
        Some(mut existing) => {
            let before = existing.spec.clone();
            apply_connection(&mut existing.spec);
            if existing.spec == before {
                return Ok(existing);
            }
            clusters
                .replace(name, &PostParams::default(), &existing)
                .await
                .map_err(|source| Error::kube("update", describe(), source))
        }
    }
}

/// The `karmada.io/system: "true"` label Karmada puts on what registration creates.
fn system_labels() -> BTreeMap<String, String> {
    BTreeMap::from([(labels::SYSTEM.to_owned(), labels::SYSTEM_VALUE.to_owned())])
}

/// Creates namespace `name` (labelled as Karmada's) in the cluster `client` reaches (`place`, as errors name it)
/// unless it exists; an existing one is left as it is, as Karmada leaves a namespace an administrator made
/// beforehand.
async fn ensure_namespace(client: &Client, name: &str, place: &str) -> Result<()> {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(system_labels()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    create_if_missing(
        Api::all(client.clone()),
        &ns,
        &format!("Namespace {name} in {place}"),
    )
    .await
}

/// Creates `object` (`what`, as errors name it) unless an object of its name exists. Reads first: whoever may
/// not create it (a namespace, a role) may still find it made for them.
async fn create_if_missing<K>(api: Api<K>, object: &K, what: &str) -> Result<()>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    if api
        .get_opt(&name)
        .await
        .map_err(|source| Error::kube("get", what, source))?
        .is_some()
    {
        return Ok(());
    }
    match api.create(&PostParams::default(), object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(source) => Err(Error::kube("create", what, source)),
    }
}

/// Creates Secret `karmada-cluster/<name>` with `data`, or patches an existing one's data (a rotated token, a new
/// CA) and label up to date. Returns the Secret as stored.
async fn ensure_secret(
    control: &Client,
    name: &str,
    data: BTreeMap<String, ByteString>,
) -> Result<Secret> {
    let api: Api<Secret> = Api::namespaced(control.clone(), namespaces::KARMADA_CLUSTER);
    let describe = || format!("Secret {}/{name}", namespaces::KARMADA_CLUSTER);
    match api
        .get_opt(name)
        .await
        .map_err(|source| Error::kube("get", describe(), source))?
    {
        None => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(name.to_owned()),
                    namespace: Some(namespaces::KARMADA_CLUSTER.into()),
                    labels: Some(system_labels()),
                    ..ObjectMeta::default()
                },
                data: Some(data),
                ..Secret::default()
            };
            api.create(&PostParams::default(), &secret)
                .await
                .map_err(|source| Error::kube("create", describe(), source))
        }
        Some(existing) => {
            let labelled = existing.labels().get(labels::SYSTEM).map(String::as_str)
                == Some(labels::SYSTEM_VALUE);
            if existing.data.as_ref() == Some(&data) && labelled {
                return Ok(existing);
            }
            // A patch, not an update: an agent may patch its own Secrets and nothing more.
            let mut changed: serde_json::Map<String, serde_json::Value> = existing
                .data
                .iter()
                .flatten()
                .filter(|(key, _)| !data.contains_key(*key))
                .map(|(key, _)| (key.clone(), serde_json::Value::Null))
                .collect();
            for (key, value) in &data {
                changed.insert(key.clone(), serde_json::to_value(value).unwrap_or_default());
            }
            let patch = serde_json::json!({
                "metadata": {"labels": system_labels()},
                "data": changed,
            });
            api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|source| Error::kube("patch", describe(), source))
        }
    }
}

/// Makes `cluster` the controller owner of `secret` (its only owner), as Karmada patches the Secrets it reports
/// once the Cluster exists: deleting the Cluster then collects them.
async fn own(control: &Client, secret: Secret, cluster: &Cluster) -> Result<()> {
    // A Cluster read from or written to the API server has a name and a uid.
    let Some(owner) = cluster.controller_owner_ref(&()) else {
        return Ok(());
    };
    let owners = vec![owner];
    if secret.metadata.owner_references.as_ref() == Some(&owners) {
        return Ok(());
    }
    let name = secret.name_any();
    let api: Api<Secret> = Api::namespaced(control.clone(), namespaces::KARMADA_CLUSTER);
    let patch = serde_json::json!({"metadata": {"ownerReferences": owners}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| {
            Error::kube(
                "patch",
                format!("Secret {}/{name}", namespaces::KARMADA_CLUSTER),
                source,
            )
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_secrets_read_as_karmada_agent_reads_them() {
        assert_eq!(
            ReportSecrets::parse("KubeCredentials,KubeImpersonator"),
            Ok(ReportSecrets::default())
        );
        let none = ReportSecrets::parse("None").unwrap_or_default();
        assert!(!none.credentials && !none.impersonator);
        assert_eq!(none.to_string(), "None");
        let only = ReportSecrets::parse("KubeImpersonator").unwrap_or_default();
        assert!(!only.credentials && only.impersonator);
        assert_eq!(only.to_string(), "KubeImpersonator");
        assert_eq!(
            ReportSecrets::default().to_string(),
            "KubeCredentials,KubeImpersonator"
        );
        assert_eq!(
            ReportSecrets::parse("KubeCredentials,kubeimpersonator"),
            Err(UnknownReportSecret("kubeimpersonator".into()))
        );
    }
}
