//! `flotilla unjoin NAME`: removes a member cluster, as `karmadactl unjoin` does: deletes the Cluster (the
//! cluster controller removes its execution namespace and Works first), waits until it is gone, then deletes
//! its credentials Secret.

use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::namespaces;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

use super::kube_access::ControlPlaneFlags;

/// Arguments of `flotilla unjoin`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Name of the member cluster.
    pub name: String,
    /// The control plane.
    #[command(flatten)]
    pub control_plane: ControlPlaneFlags,
    /// How long to wait for the controllers to release the Cluster, in seconds.
    #[arg(long, default_value_t = 60)]
    pub wait: u64,
}

/// Removes the member and its credentials.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let name = &args.name;
    delete_cluster(&control, name, args.wait).await?;
    let secrets: Api<Secret> = Api::namespaced(control, namespaces::KARMADA_CLUSTER);
    match secrets.delete(name, &Default::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(err) => {
            return Err(err).with_context(|| {
                format!(
                    "failed to delete Secret {}/{name}",
                    namespaces::KARMADA_CLUSTER
                )
            });
        }
    }
    println!("cluster({name}) is unjoined successfully");
    Ok(())
}

/// Deletes Cluster `name` and waits up to `wait` seconds until the controllers have released it.
pub(super) async fn delete_cluster(control: &Client, name: &str, wait: u64) -> anyhow::Result<()> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    match clusters.delete(name, &Default::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(err) => return Err(err).with_context(|| format!("failed to delete Cluster {name}")),
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    while clusters
        .get_opt(name)
        .await
        .with_context(|| format!("failed to read Cluster {name}"))?
        .is_some()
    {
        if tokio::time::Instant::now() > deadline {
            bail!(
                "Cluster {name} is still being removed after {}s (is a controller manager running?)",
                wait
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}
