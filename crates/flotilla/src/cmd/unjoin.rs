//! `flotilla unjoin NAME`: removes a member cluster, as `karmadactl unjoin` does: deletes the Cluster (the
//! cluster controller removes its execution namespace and Works first, which takes the member objects with them,
//! the unified-auth controller's impersonation RBAC included), waits until it is gone, then deletes its Secrets
//! (`NAME` and `NAME-impersonator`; the garbage collector removes them too, as the Cluster owns them). Given the
//! member's kubeconfig, it also removes what `flotilla join` created in the member: ServiceAccounts
//! `karmada-NAME` and `karmada-impersonator`, their token Secrets, ClusterRole and ClusterRoleBinding
//! `karmada-controller-manager:karmada-NAME`, and namespace `karmada-cluster`.

use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use flotilla_api::names::{namespaces, registration};
use flotilla_join::member;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

use super::kube_access::{ControlPlaneFlags, OptionalMemberFlags};

/// Arguments of `flotilla unjoin`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Name of the member cluster.
    pub name: String,
    /// The control plane.
    #[command(flatten)]
    pub control_plane: ControlPlaneFlags,
    /// The member, to clean up there too.
    #[command(flatten)]
    pub member: OptionalMemberFlags,
    /// How long to wait for the controllers to release the Cluster, in seconds.
    #[arg(long, default_value_t = 60)]
    pub wait: u64,
}

/// Removes the member and its credentials.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let member = args.member.client().await?;
    let name = &args.name;
    remove(&control, member.as_ref(), name, ClusterSyncMode::Push, args.wait).await?;
    println!("cluster({name}) is unjoined successfully");
    Ok(())
}

/// What `unjoin` and `unregister` share: refuses a Cluster of the other sync mode (as karmadactl does, naming the
/// other command), deletes the Cluster and waits up to `wait` seconds until it is gone, deletes the Secrets
/// registration reported, and cleans the member when given.
pub(super) async fn remove(
    control: &Client,
    member: Option<&Client>,
    name: &str,
    mode: ClusterSyncMode,
    wait: u64,
) -> anyhow::Result<()> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    if let Some(cluster) = clusters
        .get_opt(name)
        .await
        .with_context(|| format!("failed to read Cluster {name}"))?
        && cluster.spec.sync_mode != mode
        // karmadactl refuses only a Cluster of the other known mode: one of a mode it does not know goes.
        && let Some(command) = match cluster.spec.sync_mode {
            ClusterSyncMode::Pull => Some("unregister"),
            ClusterSyncMode::Push => Some("unjoin"),
            ClusterSyncMode::Other(_) => None,
        }
    {
        bail!(
            "cluster {name} is a {} mode member cluster, please use command `{command}` if you want to continue",
            cluster.spec.sync_mode
        );
    }
    delete_cluster(control, name, wait).await?;
    let secrets: Api<Secret> = Api::namespaced(control.clone(), namespaces::KARMADA_CLUSTER);
    for secret in [name.to_owned(), registration::impersonator_secret(name)] {
        match secrets.delete(&secret, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(err) => {
                return Err(err).with_context(|| {
                    format!(
                        "failed to delete Secret {}/{secret}",
                        namespaces::KARMADA_CLUSTER
                    )
                });
            }
        }
    }
    if let Some(member) = member {
        member::remove(member, name)
            .await
            .with_context(|| format!("failed to remove what registering {name} created in the member"))?;
    }
    Ok(())
}

/// Deletes Cluster `name` and waits up to `wait` seconds until the controllers have released it.
async fn delete_cluster(control: &Client, name: &str, wait: u64) -> anyhow::Result<()> {
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
