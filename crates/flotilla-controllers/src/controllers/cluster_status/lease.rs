//! The Lease of a Pull cluster: once its agent's cluster status controller has seen the
//! member healthy and Ready, the agent renews Lease `karmada-cluster/<cluster>` every
//! `cluster_lease_duration × cluster_lease_renew_interval_fraction` (10 s by default) until it stops; the control
//! plane's health monitor ([`crate::controllers::cluster_health`]) reads the renewals as the agent's heartbeat.
//!
//! The Lease names the cluster as its holder, lasts `cluster_lease_duration` and is owned by the Cluster, so it
//! goes with it.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::namespaces;
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};
use kube::api::PostParams;
use kube::{Api, Client, Resource, ResourceExt};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// The clusters whose Lease this process renews.
#[derive(Default)]
pub(crate) struct Leases {
    started: Mutex<HashSet<String>>,
}

impl Leases {
    /// Starts renewing `cluster`'s Lease (once per cluster) until `shutdown`.
    pub(crate) fn ensure_started(
        &self,
        client: &Client,
        cluster: &Cluster,
        duration: Duration,
        fraction: f64,
        shutdown: &CancellationToken,
    ) {
        let name = cluster.name_any();
        if !self
            .started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.clone())
        {
            return;
        }
        tracing::info!(cluster = %name, "starting to renew the cluster's Lease");
        let every = duration.mul_f64(fraction.clamp(0.01, 1.0));
        let (client, shutdown) = (client.clone(), shutdown.clone());
        let seconds = i32::try_from(duration.as_secs()).unwrap_or(i32::MAX);
        tokio::spawn(async move {
            loop {
                if let Err(err) = renew(&client, &name, seconds).await {
                    tracing::warn!(cluster = %name, error = %err, "failed to renew the cluster's Lease");
                }
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    () = shutdown.cancelled() => return,
                }
            }
        });
    }
}

/// Creates the Lease, or sets its renew time (and owner, if it lost it) to now.
pub(crate) async fn renew(client: &Client, cluster: &str, seconds: i32) -> Result<()> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespaces::KARMADA_CLUSTER);
    let describe = || format!("Lease {}/{cluster}", namespaces::KARMADA_CLUSTER);
    let now = MicroTime(Timestamp::now());
    let existing = api
        .get_opt(cluster)
        .await
        .map_err(|source| Error::kube("get", describe(), source))?;
    let mut lease = existing.clone().unwrap_or_else(|| Lease {
        metadata: ObjectMeta {
            name: Some(cluster.to_owned()),
            namespace: Some(namespaces::KARMADA_CLUSTER.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec::default()),
    });
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.holder_identity = Some(cluster.to_owned());
    spec.lease_duration_seconds = Some(seconds);
    spec.renew_time = Some(now);
    if lease.owner_references().is_empty()
        && let Some(owner) = owner(client, cluster).await?
    {
        lease.metadata.owner_references = Some(vec![owner]);
    }
    if existing.is_some() {
        api.replace(cluster, &PostParams::default(), &lease)
            .await
            .map_err(|source| Error::kube("update", describe(), source))?;
    } else {
        api.create(&PostParams::default(), &lease)
            .await
            .map_err(|source| Error::kube("create", describe(), source))?;
    }
    Ok(())
}

/// The Cluster as the Lease's owner, if it exists.
async fn owner(client: &Client, cluster: &str) -> Result<Option<OwnerReference>> {
    let found = Api::<Cluster>::all(client.clone())
        .get_opt(cluster)
        .await
        .map_err(|source| Error::kube("get", format!("Cluster {cluster}"), source))?;
    Ok(found.and_then(|found| {
        Some(OwnerReference {
            api_version: Cluster::api_version(&()).into_owned(),
            kind: Cluster::kind(&()).into_owned(),
            name: cluster.to_owned(),
            uid: found.uid()?,
            ..OwnerReference::default()
        })
    }))
}
