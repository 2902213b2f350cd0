//! `flotilla unregister NAME`: removes a Pull-mode member, as `karmadactl unregister` does: deletes the Cluster and
//! waits until the controllers have released it (the cluster controller removes its execution namespace; while the
//! agent still runs and the cluster is Ready, it cleans the member's objects first), deletes the Secrets the
//! registration reported, and, given the member's kubeconfig, removes what registering created in the member (the
//! list `karmadactl unregister` removes: both ServiceAccounts and their token Secrets, the credentials ClusterRole
//! and ClusterRoleBinding, namespace `karmada-cluster`). It also takes back the agent's rights in the control plane
//! and, in the member, the agent's own kubeconfig (Secret `karmada-system/karmada-kubeconfig`).

use anyhow::Context;
use flotilla_api::cluster::v1alpha1::ClusterSyncMode;
use flotilla_api::names::{agents, namespaces};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

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
    flotilla_join::agent_rbac::revoke(&control, &args.name)
        .await
        .with_context(|| format!("failed to take back the rights of the agent of {}", args.name))?;
    if let Some(member) = &member {
        let secrets: Api<Secret> = Api::namespaced(member.clone(), namespaces::KARMADA_SYSTEM);
        match secrets.delete(agents::KUBECONFIG_SECRET, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "failed to delete Secret {}/{} of the member",
                        namespaces::KARMADA_SYSTEM,
                        agents::KUBECONFIG_SECRET
                    )
                });
            }
        }
    }
    println!("cluster({}) is unregistered successfully", args.name);
    Ok(())
}
