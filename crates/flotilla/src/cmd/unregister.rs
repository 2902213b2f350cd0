//! `flotilla unregister NAME`: removes a Pull-mode member, as `karmadactl unregister` does: deletes the Cluster and
//! waits until the controllers have released it (the cluster controller removes its execution namespace; while the
//! agent still runs and the cluster is Ready, it cleans the member's objects first), deletes the Secrets the
//! registration reported, and, given the member's kubeconfig, removes what registering created in the member (the
//! list `karmadactl unregister` removes: both ServiceAccounts and their token Secrets, the credentials ClusterRole
//! and ClusterRoleBinding, namespace `karmada-cluster`).

use flotilla_api::cluster::v1alpha1::ClusterSyncMode;

use super::kube_access::{ControlPlaneFlags, OptionalMemberFlags};
use super::unjoin::remove;

/// Arguments of `flotilla unregister`.
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

/// Removes the Pull member.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let member = args.member.client().await?;
    remove(&control, member.as_ref(), &args.name, ClusterSyncMode::Pull, args.wait).await?;
    println!("cluster({}) is unregistered successfully", args.name);
    Ok(())
}
