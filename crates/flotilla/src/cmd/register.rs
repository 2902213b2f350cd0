//! `flotilla register NAME`: registers a member cluster in Pull mode, as `karmadactl register` (through the
//! karmada-agent it deploys) does: a Cluster with `syncMode: Pull`, the member's `apiEndpoint` and `id`, and the
//! Secrets karmada-agent reports by default (`--report-secrets KubeCredentials,KubeImpersonator`): the token of
//! ServiceAccount `karmada-NAME` in `karmada-cluster/NAME` (`spec.secretRef`) and the token of ServiceAccount
//! `karmada-impersonator` in `karmada-cluster/NAME-impersonator` (`spec.impersonatorSecretRef`), both
//! ServiceAccounts created in the member's `karmada-cluster` namespace. The control plane never reaches a Pull
//! member itself; the aggregated API server's proxy does. `flotilla agent` then serves it.

use anyhow::Context;
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_join::{
    Credentials, Registration, ReportSecrets, member, member_id, register_pull,
};

use super::kube_access::{ControlPlaneFlags, MemberFlags};

/// Arguments of `flotilla register`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Name of the member cluster (the Cluster object's name).
    pub name: String,
    /// The control plane.
    #[command(flatten)]
    pub control_plane: ControlPlaneFlags,
    /// The member, where the reported ServiceAccounts are created.
    #[command(flatten)]
    pub member: MemberFlags,
    /// The Secrets reported to the control plane, as karmada-agent's flag: `KubeCredentials`,
    /// `KubeImpersonator`, or `None`.
    #[arg(long, default_value_t = ReportSecrets::default(), value_parser = ReportSecrets::parse)]
    pub report_secrets: ReportSecrets,
}

/// Registers the member with the control plane in Pull mode.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let config = args.member.config().await?;
    register(&control, &args.name, config, args.report_secrets).await?;
    println!("cluster({}) is registered successfully", args.name);
    Ok(())
}

/// Registers (or re-registers) member `name`, reached with `member`, as a Pull cluster of `control`, reporting the
/// Secrets `report` names: what `flotilla register`, `flotilla agent` (each time it starts, as karmada-agent does)
/// and `flotilla up` (for its Pull member) do. A Push registration of the same name becomes a Pull one.
///
/// # Errors
/// When the member's `kube-system` namespace cannot be read, a ServiceAccount token cannot be obtained from the
/// member, or the Secrets or the Cluster cannot be written.
pub async fn register(
    control: &kube::Client,
    name: &str,
    member: kube::Config,
    report: ReportSecrets,
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
    let impersonator_token = if report.impersonator {
        let issued = member::impersonator_token(&member, member::TOKEN_TIMEOUT)
            .await
            .context("failed to obtain the impersonator's token from the member")?;
        Some(issued.token)
    } else {
        None
    };
    let credentials = if report.credentials {
        let issued = member::credentials_token(&member, name, member::TOKEN_TIMEOUT)
            .await
            .context("failed to obtain a token for the control plane from the member")?;
        Some(Credentials {
            token: issued.token,
            ca_bundle: issued.ca_crt,
        })
    } else {
        None
    };
    let registration = Registration {
        id,
        credentials,
        impersonator_token,
        ..registration
    };
    register_pull(control, &registration)
        .await
        .with_context(|| format!("failed to register cluster {name}"))
}
