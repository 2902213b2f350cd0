//! `flotilla unregister NAME`: removes a Pull-mode member, as `karmadactl unregister` does on the control-plane
//! side: deletes the Cluster and waits until the controllers have released it (the cluster controller removes
//! its execution namespace; while the agent still runs and the cluster is Ready, it cleans the member's objects
//! first). A Pull Cluster has no credentials Secret on the control plane, so that is all.



use super::kube_access::ControlPlaneFlags;
use super::unjoin::delete_cluster;

/// Arguments of `flotilla unregister`.
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

/// Removes the Pull member.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    delete_cluster(&control, &args.name, args.wait).await?;
    println!("cluster({}) is unregistered successfully", args.name);
    Ok(())
}
