//! Clients from the kubeconfig flags the cluster-facing subcommands share (`--kubeconfig`, `--context`),
//! falling back to in-cluster configuration or `KUBECONFIG` as kubectl does.

use std::path::{Path, PathBuf};

use anyhow::Context;
use flotilla_client::RateLimit;
use flotilla_client::leader::Fence;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The flags that name the cluster a command talks to, spelled as kubectl spells them. `join` and `unjoin`
/// name two clusters and keep karmadactl's flag names for them instead.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KubeAccess {
    /// Kubeconfig of the cluster; without it, in-cluster configuration or KUBECONFIG.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Context in `--kubeconfig` (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
}

impl KubeAccess {
    /// A client for the cluster these flags name, as [`client`] resolves them.
    ///
    /// # Errors
    /// As [`client`].
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        client(self.kubeconfig.as_deref(), self.context.as_deref()).await
    }

    /// As [`KubeAccess::client`], over HTTP/2 when the server offers it and rate limited by `limit`: the
    /// client of a long-running controller.
    ///
    /// # Errors
    /// As [`client`].
    pub async fn limited_client(&self, limit: RateLimit) -> anyhow::Result<kube::Client> {
        self.fenced_client(limit, None).await
    }

    /// As [`KubeAccess::limited_client`], and whose writes pass `fence` when there is one (a leader
    /// election's: the client of controllers that must write only while they lead).
    ///
    /// # Errors
    /// As [`client`].
    pub async fn fenced_client(
        &self,
        limit: RateLimit,
        fence: Option<&Fence>,
    ) -> anyhow::Result<kube::Client> {
        let config = config(self.kubeconfig.as_deref(), self.context.as_deref()).await?;
        let builder =
            flotilla_client::builder(config, limit).context("failed to create a client")?;
        Ok(match fence {
            Some(fence) => builder.with_layer(&fence.layer()).build(),
            None => builder.build(),
        })
    }
}

/// The control plane, named as karmadactl's `join`, `unjoin`, `register` and `unregister` name it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ControlPlaneFlags {
    /// Kubeconfig of the control plane; without it, in-cluster configuration or KUBECONFIG.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the control plane in `--kubeconfig`.
    #[arg(long)]
    pub karmada_context: Option<String>,
}

impl ControlPlaneFlags {
    /// The client configuration these flags name, as [`config`] resolves it.
    ///
    /// # Errors
    /// As [`config`].
    pub async fn config(&self) -> anyhow::Result<kube::Config> {
        config(self.kubeconfig.as_deref(), self.karmada_context.as_deref())
            .await
            .context("failed to reach the control plane")
    }

    /// A client for the control plane.
    ///
    /// # Errors
    /// As [`ControlPlaneFlags::config`], or when a client cannot be built.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        kube::Client::try_from(self.config().await?).context("failed to reach the control plane")
    }
}

/// A member cluster, named as karmadactl names it.
#[derive(Debug, Clone, clap::Args)]
pub struct MemberFlags {
    /// Kubeconfig of the member cluster.
    #[arg(long)]
    pub cluster_kubeconfig: PathBuf,
    /// Context of the member in `--cluster-kubeconfig` (default: its current context).
    #[arg(long)]
    pub cluster_context: Option<String>,
}

impl MemberFlags {
    /// The member's client configuration.
    ///
    /// # Errors
    /// When the kubeconfig cannot be read or the context does not exist, naming the file.
    pub async fn config(&self) -> anyhow::Result<kube::Config> {
        let path = &self.cluster_kubeconfig;
        config(Some(path), self.cluster_context.as_deref())
            .await
            .with_context(|| format!("invalid member kubeconfig {}", path.display()))
    }
}

/// A member cluster `unjoin` and `unregister` may be given, to remove what registration created there.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OptionalMemberFlags {
    /// Kubeconfig of the member cluster; given, what registering it created there is removed too.
    #[arg(long)]
    pub cluster_kubeconfig: Option<PathBuf>,
    /// Context of the member in `--cluster-kubeconfig` (default: its current context).
    #[arg(long)]
    pub cluster_context: Option<String>,
}

impl OptionalMemberFlags {
    /// A client for the member, when `--cluster-kubeconfig` names one.
    ///
    /// # Errors
    /// When the kubeconfig cannot be read or the context does not exist, naming the file.
    pub async fn client(&self) -> anyhow::Result<Option<kube::Client>> {
        let Some(path) = &self.cluster_kubeconfig else {
            return Ok(None);
        };
        let config = config(Some(path), self.cluster_context.as_deref())
            .await
            .with_context(|| format!("invalid member kubeconfig {}", path.display()))?;
        let client =
            kube::Client::try_from(config).context("failed to reach the member cluster")?;
        Ok(Some(client))
    }
}

/// Client-side rate limits, named as Karmada's controller manager names them. A QPS of zero or less sets no
/// limit.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiRateLimits {
    /// Requests per second to the control plane's API server.
    #[arg(long, default_value_t = RateLimit::DEFAULT.qps)]
    pub kube_api_qps: f32,
    /// Requests to the control plane's API server allowed at once above --kube-api-qps.
    #[arg(long, default_value_t = RateLimit::DEFAULT.burst)]
    pub kube_api_burst: u32,
    /// Requests per second to each member cluster's API server.
    #[arg(long, default_value_t = RateLimit::DEFAULT.qps)]
    pub cluster_api_qps: f32,
    /// Requests to each member cluster's API server allowed at once above --cluster-api-qps.
    #[arg(long, default_value_t = RateLimit::DEFAULT.burst)]
    pub cluster_api_burst: u32,
}

impl ApiRateLimits {
    /// The control plane's limit.
    pub fn kube_api(&self) -> RateLimit {
        RateLimit {
            qps: self.kube_api_qps,
            burst: self.kube_api_burst,
        }
    }

    /// Each member's limit.
    pub fn cluster_api(&self) -> RateLimit {
        RateLimit {
            qps: self.cluster_api_qps,
            burst: self.cluster_api_burst,
        }
    }
}

/// The client configuration for `kubeconfig` (or the default) and `context` (or the current one).
///
/// # Errors
/// When the file cannot be read or parsed, the context does not exist, or no default configuration exists.
pub async fn config(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> anyhow::Result<kube::Config> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .with_context(|| format!("failed to read kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .with_context(|| format!("failed to load kubeconfig {}", path.display()))
        }
        None if context.is_some() => kube::Config::from_kubeconfig(&options)
            .await
            .context("failed to load the default kubeconfig"),
        None => kube::Config::infer().await.context(
            "failed to find a configuration (no --kubeconfig, no in-cluster config, no KUBECONFIG)",
        ),
    }
}

/// A client for `kubeconfig` and `context`, as [`config`] resolves them.
///
/// # Errors
/// As [`config`], or when a client cannot be built.
pub async fn client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> anyhow::Result<kube::Client> {
    let config = config(kubeconfig, context).await?;
    kube::Client::try_from(config).context("failed to create a client")
}
