//! `flotilla register NAME`: registers a member cluster in Pull mode, as `karmadactl register` (through the
//! karmada-agent it deploys) does: a Cluster with `syncMode: Pull`, the member's `apiEndpoint` and `id`, and no
//! credentials, since the control plane never reaches a Pull member. `flotilla agent` then serves it.

use anyhow::Context;
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_controllers::join::{Registration, member_id, register_pull};

use super::kube_access::{ControlPlaneFlags, MemberFlags};

/// Arguments of `flotilla register`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Name of the member cluster (the Cluster object's name).
    pub name: String,
    /// The control plane.
    #[command(flatten)]
    pub control_plane: ControlPlaneFlags,
    /// The member, read for its API endpoint and `kube-system` uid only.
    #[command(flatten)]
    pub member: MemberFlags,
}

/// Registers the member with the control plane in Pull mode.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let config = args.member.config().await?;
    register(&control, &args.name, config).await?;
    println!("cluster({}) is registered successfully", args.name);
    Ok(())
}

/// Registers (or re-registers) member `name`, reached with `member`, as a Pull cluster of `control`: what
/// `flotilla register`, `flotilla agent` (when its Cluster does not exist yet) and `flotilla up` (for its Pull
/// member) do. A Push registration of the same name becomes a Pull one.
///
/// # Errors
/// When the member's `kube-system` namespace cannot be read or the Cluster cannot be written.
pub async fn register(
    control: &kube::Client,
    name: &str,
    member: kube::Config,
) -> anyhow::Result<Cluster> {
    let registration = Registration {
        name: name.to_owned(),
        api_endpoint: member.cluster_url.to_string().trim_end_matches('/').to_owned(),
        insecure_skip_tls_verification: member.accept_invalid_certs,
        proxy_url: member
            .proxy_url
            .as_ref()
            .map(|url| url.to_string().trim_end_matches('/').to_owned())
            .unwrap_or_default(),
        ..Registration::default()
    };
    let member = kube::Client::try_from(member).context("failed to reach the member cluster")?;
    let id = member_id(&member)
        .await
        .context("failed to read the member's kube-system namespace")?;
    register_pull(control, &Registration { id, ..registration })
        .await
        .with_context(|| format!("failed to register cluster {name}"))
}
