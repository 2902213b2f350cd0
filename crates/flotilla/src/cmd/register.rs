//! `flotilla register NAME`: registers a member cluster in Pull mode, as `karmadactl register` (through the
//! karmada-agent it deploys) does: a Cluster with `syncMode: Pull`, the member's `apiEndpoint` and `id`, and the
//! Secrets karmada-agent reports by default (`--report-secrets KubeCredentials,KubeImpersonator`): the token of
//! ServiceAccount `karmada-NAME` in `karmada-cluster/NAME` (`spec.secretRef`) and the token of ServiceAccount
//! `karmada-impersonator` in `karmada-cluster/NAME-impersonator` (`spec.impersonatorSecretRef`), both
//! ServiceAccounts created in the member's `karmada-cluster` namespace. The control plane never reaches a Pull
//! member itself; the aggregated API server's proxy does. `flotilla agent` then serves it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_join::bootstrap::{self, BootstrapToken};
use flotilla_join::{
    Credentials, Registration, ReportSecrets, agent_rbac, member, member_id, register_pull,
};
use kube::config::Kubeconfig;

use super::controller_manager::parse_duration;
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
    /// Write here a kubeconfig with a new bootstrap token for `flotilla agent --bootstrap-kubeconfig`.
    #[arg(long)]
    pub bootstrap_kubeconfig: Option<PathBuf>,
    /// How long the bootstrap token is valid, e.g. `24h`; `0s` never expires.
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    pub token_ttl: Duration,
}

/// Registers the member with the control plane in Pull mode and grants its agent its rights.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let config = args.member.config().await?;
    register(&control, &args.name, config, args.report_secrets).await?;
    grant_agent(&control, &args.name).await?;
    if let Some(path) = &args.bootstrap_kubeconfig {
        let kubeconfig = match &args.control_plane.kubeconfig {
            Some(file) => Kubeconfig::read_from(file)
                .with_context(|| format!("failed to read kubeconfig {}", file.display()))?,
            None => Kubeconfig::read().context("failed to read the default kubeconfig")?,
        };
        let ttl = (!args.token_ttl.is_zero()).then_some(args.token_ttl);
        let (token, bootstrap) = bootstrap_kubeconfig(
            &control,
            &kubeconfig,
            args.control_plane.karmada_context.as_deref(),
            &args.name,
            ttl,
        )
        .await?;
        write_private(path, &bootstrap)?;
        println!(
            "bootstrap token {} for the agent of {} written to {}",
            token.id,
            args.name,
            path.display()
        );
    }
    println!("cluster({}) is registered successfully", args.name);
    Ok(())
}

/// Grants the agent of `name` its rights in the control plane, as `karmadactl register` does.
///
/// # Errors
/// When an RBAC object or a namespace cannot be written.
pub async fn grant_agent(control: &kube::Client, name: &str) -> anyhow::Result<()> {
    agent_rbac::grant(control, name)
        .await
        .with_context(|| format!("failed to grant the agent of {name} its rights"))
}

/// Creates a bootstrap token valid for `ttl` (for ever with `None`) for the agent of `name`, and a kubeconfig
/// reaching the control plane as `control`'s context `context` reaches it, authenticated by that token.
///
/// # Errors
/// When the token cannot be created or the kubeconfig has no such context.
pub async fn bootstrap_kubeconfig(
    client: &kube::Client,
    control: &Kubeconfig,
    context: Option<&str>,
    name: &str,
    ttl: Option<Duration>,
) -> anyhow::Result<(BootstrapToken, Kubeconfig)> {
    let token = bootstrap::create_token(client, ttl, &format!("bootstrap token of the agent of {name}"))
        .await
        .context("failed to create a bootstrap token")?;
    let kubeconfig = bootstrap::token_kubeconfig(control, context, &token)?;
    Ok((token, kubeconfig))
}

/// Writes `kubeconfig` to `path`, readable by its owner only.
fn write_private(path: &Path, kubeconfig: &Kubeconfig) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let text = flotilla_yaml::to_string(kubeconfig).context("failed to encode a kubeconfig")?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("failed to write {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("failed to write {}", path.display()))
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
