//! Registering a member cluster with the control plane in Push mode, as `karmadactl join` leaves it: the
//! member's credentials in Secret `karmada-cluster/<name>` (`token`, `caBundle`) and a cluster-scoped `Cluster`
//! whose `secretRef` names that Secret; or in Pull mode ([`register_pull`]), as karmada-agent leaves it after
//! `karmadactl register`: a Cluster with `syncMode: Pull` and no credentials, since the control plane never
//! reaches a Pull member (its agent does the member's part).
//!
//! Guarantees: [`register`] and [`register_pull`] are idempotent. Registering again with the same settings changes nothing; with new
//! settings (a restarted member on another port, a rotated token) it updates the Secret and the Cluster's
//! connection fields in place and keeps everything else (taints, resource models, status, finalizers).

use flotilla_api::cluster::v1alpha1::{
    Cluster, ClusterSpec, ClusterSyncMode, LocalSecretReference,
};
use flotilla_api::names::{namespaces, secret_keys};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ObjectMeta, PostParams};
use kube::{Client, ResourceExt};

use crate::error::{Error, Result};

/// Everything needed to register one Push-mode member.
#[derive(Clone, Debug, Default)]
pub struct Registration {
    /// The Cluster's name.
    pub name: String,
    /// URL of the member's API server (`spec.apiEndpoint`).
    pub api_endpoint: String,
    /// Bearer token the control plane uses on the member.
    pub token: String,
    /// PEM CA bundle of the member's serving certificate.
    pub ca_bundle: Option<Vec<u8>>,
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

/// Registers (or re-registers) a member with the control plane reached by `control`.
///
/// # Errors
/// `Kube` naming the object when the namespace, Secret or Cluster cannot be written.
pub async fn register(control: &Client, registration: &Registration) -> Result<Cluster> {
    let name = &registration.name;
    ensure_namespace(control, namespaces::KARMADA_CLUSTER).await?;
    ensure_secret(control, registration).await?;
    let secret_ref = Some(LocalSecretReference {
        namespace: namespaces::KARMADA_CLUSTER.into(),
        name: name.clone(),
    });
    create_or_update(control, name, |spec: &mut ClusterSpec| {
        spec.sync_mode = ClusterSyncMode::Push;
        spec.api_endpoint.clone_from(&registration.api_endpoint);
        spec.secret_ref.clone_from(&secret_ref);
        spec.insecure_skip_tls_verification = registration.insecure_skip_tls_verification;
        spec.proxy_url.clone_from(&registration.proxy_url);
        if !registration.id.is_empty() {
            spec.id.clone_from(&registration.id);
        }
    })
    .await
}

/// Registers (or re-registers) a Pull-mode member with the control plane reached by `control`: the Cluster
/// karmada-agent creates, with `syncMode: Pull`, the member's `apiEndpoint`, `id`, TLS and proxy settings, and
/// no `secretRef` (a Push registration of the same name loses its credentials reference: the control plane no
/// longer reaches the member). Fields of `registration` that only concern Push members (`token`, `caBundle`) are
/// ignored.
///
/// # Errors
/// `Kube` naming the Cluster when it cannot be read or written.
pub async fn register_pull(control: &Client, registration: &Registration) -> Result<Cluster> {
    // The agent renews the cluster's Lease there.
    ensure_namespace(control, namespaces::KARMADA_CLUSTER).await?;
    create_or_update(control, &registration.name, |spec: &mut ClusterSpec| {
        spec.sync_mode = ClusterSyncMode::Pull;
        spec.secret_ref = None;
        spec.api_endpoint.clone_from(&registration.api_endpoint);
        spec.insecure_skip_tls_verification = registration.insecure_skip_tls_verification;
        spec.proxy_url.clone_from(&registration.proxy_url);
        if !registration.id.is_empty() {
            spec.id.clone_from(&registration.id);
        }
    })
    .await
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

async fn ensure_namespace(control: &Client, name: &str) -> Result<()> {
    let api: Api<Namespace> = Api::all(control.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(source) => Err(Error::kube("create", format!("Namespace {name}"), source)),
    }
}

async fn ensure_secret(control: &Client, registration: &Registration) -> Result<()> {
    let api: Api<Secret> = Api::namespaced(control.clone(), namespaces::KARMADA_CLUSTER);
    let name = &registration.name;
    let describe = || format!("Secret {}/{name}", namespaces::KARMADA_CLUSTER);
    let mut data = std::collections::BTreeMap::new();
    data.insert(
        secret_keys::TOKEN.to_string(),
        ByteString(registration.token.clone().into_bytes()),
    );
    if let Some(ca) = &registration.ca_bundle {
        data.insert(secret_keys::CA_BUNDLE.to_string(), ByteString(ca.clone()));
    }
    match api
        .get_opt(name)
        .await
        .map_err(|source| Error::kube("get", describe(), source))?
    {
        None => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(namespaces::KARMADA_CLUSTER.into()),
                    ..ObjectMeta::default()
                },
                data: Some(data),
                ..Secret::default()
            };
            api.create(&PostParams::default(), &secret)
                .await
                .map_err(|source| Error::kube("create", describe(), source))?;
        }
        Some(mut existing) if existing.data.as_ref() != Some(&data) => {
            existing.data = Some(data);
            api.replace(name, &PostParams::default(), &existing)
                .await
                .map_err(|source| Error::kube("update", describe(), source))?;
        }
        Some(_) => {}
    }
    Ok(())
}
