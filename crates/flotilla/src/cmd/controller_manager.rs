//! `flotilla controller-manager`: every controller and the scheduler against any API server holding
//! Karmada's CRDs (a real kube-apiserver or the embedded one).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use flotilla_api::names::namespaces;
use flotilla_api::policy::v1alpha1::PurgeMode;
use flotilla_controllers::Options;
use flotilla_controllers::options::compile_namespace_patterns;
use flotilla_controllers::enabled_controllers::ControllerSelection;
use flotilla_controllers::features::FeatureGates;
use flotilla_client::leader::LeaderElection;
use flotilla_controllers::manager::{self, Election, ManagerOptions};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

use super::aggregated_apiserver::{self, AggregatedApiArgs};
use super::karmada_webhook::{self, WebhookArgs};
use super::kube_access::{ApiRateLimits, KubeAccess};

/// The Lease the managers elect their leader on, Karmada's controller manager's.
const LEASE_NAME: &str = "karmada-controller-manager";

/// Arguments of `flotilla controller-manager`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The control plane's API server.
    #[command(flatten)]
    pub control_plane: KubeAccess,
    /// Where to serve Prometheus /metrics, /healthz and /readyz.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub metrics_addr: SocketAddr,
    /// Leader election between replicas.
    #[command(flatten)]
    pub leader_election: LeaderElectionFlags,
    /// Namespaces whose objects are never propagated (comma-separated regular expressions, full match).
    #[arg(long, value_delimiter = ',', default_value = "kube-.*")]
    pub skipped_propagating_namespaces: Vec<String>,
    /// APIs never propagated: `;`-separated `group`, `group/version` or `group/version/Kind1,Kind2`.
    #[arg(long, default_value = "")]
    pub skipped_propagating_apis: String,
    /// How often member cluster status is collected, e.g. `10s`.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub cluster_status_update_frequency: Duration,
    /// How long a member must look unhealthy before its Ready turns False.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub cluster_failure_threshold: Duration,
    /// How long a member must look healthy before its Ready turns True again.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub cluster_success_threshold: Duration,
    /// How often the Lease of each Pull cluster is checked.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub cluster_monitor_period: Duration,
    /// How long a Pull cluster may go without renewing its Lease or changing Ready before Ready turns Unknown.
    #[arg(long, default_value = "40s", value_parser = parse_duration)]
    pub cluster_monitor_grace_period: Duration,
    /// How long after its creation a Pull cluster may post no status at all before Ready turns Unknown.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub cluster_startup_grace_period: Duration,
    /// Karmada's feature gates, as `Name=bool` pairs (also `AllAlpha=bool`, `AllBeta=bool`); default: Karmada's
    /// defaults. May be repeated: the values merge and a later entry for a gate wins, as with Karmada's flag.
    #[arg(long, value_name = "GATES", action = clap::ArgAction::Append,
          value_parser = |text: &str| FeatureGates::parse(text).map(|_| text.to_owned()))]
    pub feature_gates: Vec<String>,
    /// Karmada's controllers to run: `*` (those on by default), `name`, `-name`; Flotilla switches
    /// `hpaScaleTargetMarker` and `deploymentReplicasSyncer` (off by default, as in Karmada), `agentcsrapproving`,
    /// `applicationFailover`, `unifiedAuth` and `workloadRebalancer` (on), and names the entries it cannot honour.
    #[arg(long, default_value = "*", value_parser = ControllerSelection::parse)]
    pub controllers: ControllerSelection,
    /// Run the taint manager (with the `Failover` gate), which evicts workloads from clusters with NoExecute
    /// taints they do not tolerate.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_taint_manager: bool,
    /// Let the taint manager evict: off by default, as in Karmada.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub enable_no_execute_taint_eviction: bool,
    /// How workloads leave a NoExecute-tainted cluster when their policy has no `failover.cluster`:
    /// `Gracefully` (after the new placement is healthy) or `Directly`.
    #[arg(long, default_value = "Gracefully", value_parser = parse_purge_mode)]
    pub no_execute_taint_eviction_purge_mode: PurgeMode,
    /// How long a graceful eviction task without `gracePeriodSeconds` waits for the new placement, e.g. `10m`.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub graceful_eviction_timeout: Duration,
    /// Bindings evicted per second by the taint manager.
    #[arg(long, default_value_t = 0.5, value_parser = parse_rate)]
    pub resource_eviction_rate: f64,
    /// Concurrent reconciles per controller.
    #[arg(long, default_value_t = 5)]
    pub concurrent_syncs: usize,
    /// Client-side rate limits towards the control plane and the members.
    #[command(flatten)]
    pub rate_limits: ApiRateLimits,
    /// karmada-webhook's validations, served and registered.
    #[command(flatten)]
    pub webhook: WebhookArgs,
    /// Karmada's aggregated API server (`cluster.karmada.io` with `clusters/{name}/proxy`), served and registered.
    #[command(flatten)]
    pub aggregated: AggregatedApiArgs,
}

/// How long the controller manager waits at start for the aggregator to route `cluster.karmada.io` to the
/// aggregated API server it registered, before starting the controllers anyway (they retry what fails).
const AGGREGATED_API_WAIT: Duration = Duration::from_secs(30);

/// Parses a duration flag as Karmada's Go flags read one (`500ms`, `10s`, `1m30s`, `1h`): jiff's friendly
/// format is a superset of Go's `time.ParseDuration` for the values a flag takes.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let parsed: jiff::SignedDuration = text
        .parse()
        .map_err(|err| format!("{text:?} is not a duration like 10s or 1m30s: {err}"))?;
    Duration::try_from(parsed).map_err(|_| format!("{text:?} is negative"))
}

/// Reads `--no-execute-taint-eviction-purge-mode`: Karmada accepts `Directly` and `Gracefully` only.
fn parse_purge_mode(text: &str) -> Result<PurgeMode, String> {
    match text {
        "Directly" => Ok(PurgeMode::Directly),
        "Gracefully" => Ok(PurgeMode::Gracefully),
        _ => Err(format!("{text:?} is not a purge mode: use Directly or Gracefully")),
    }
}

/// Reads `--resource-eviction-rate`: a positive number of evictions per second.
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("{text:?} is not a positive number of evictions per second")),
    }
}

/// Karmada's leader election flags, with its defaults.
#[derive(Debug, Clone, clap::Args)]
pub struct LeaderElectionFlags {
    /// Gain leadership on a Lease before running the controllers (`--leader-elect=false` runs at once): for
    /// replicated controller managers.
    #[arg(long = "leader-elect", default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub enabled: bool,
    /// The namespace of the Lease.
    #[arg(long = "leader-elect-resource-namespace", default_value = namespaces::KARMADA_SYSTEM)]
    pub resource_namespace: String,
    /// How long other candidates wait after the Lease last changed before they may take it: the longest a
    /// stopped leader is left in place.
    #[arg(long = "leader-elect-lease-duration", default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal; shorter than the lease duration.
    #[arg(long = "leader-elect-renew-deadline", default_value = "10s", value_parser = parse_duration)]
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    #[arg(long = "leader-elect-retry-period", default_value = "2s", value_parser = parse_duration)]
    pub retry_period: Duration,
}

impl LeaderElectionFlags {
    /// The election these flags ask for, for this process, if any.
    fn election(&self) -> anyhow::Result<Option<LeaderElection>> {
        if !self.enabled {
            return Ok(None);
        }
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "flotilla".to_owned());
        let identity = format!("{host}_{}", std::process::id());
        let mut election = LeaderElection::new(&self.resource_namespace, LEASE_NAME, &identity);
        election.lease_duration = self.lease_duration;
        election.renew_deadline = self.renew_deadline;
        election.retry_period = self.retry_period;
        election
            .validate()
            .context("invalid --leader-elect-lease-duration, --leader-elect-renew-deadline or --leader-elect-retry-period")?;
        Ok(Some(election))
    }
}

/// Runs the controllers until SIGINT or SIGTERM (or until leadership is lost).
pub async fn run(args: Args) -> anyhow::Result<()> {
    let election = args.leader_election.election()?;
    // The webhook, the aggregated API server and the election itself write whether or not this replica
    // leads; the controllers' client writes only while it does.
    let client = args
        .control_plane
        .limited_client(args.rate_limits.kube_api())
        .await
        .context("failed to reach the control plane")?;
    let fence = election.as_ref().map(|election| &election.fence);
    let controllers_client = args
        .control_plane
        .fenced_client(args.rate_limits.kube_api(), fence)
        .await
        .context("failed to reach the control plane")?;
    let feature_gates = merged_feature_gates(&args.feature_gates)?;
    let webhook = args.webhook.settings(&feature_gates)?;
    let aggregated = args.aggregated.settings()?;
    let skipped = compile_namespace_patterns(&args.skipped_propagating_namespaces)
        .context("invalid --skipped-propagating-namespaces")?;
    let controllers = Options {
        workers: args.concurrent_syncs.max(1),
        skipped_propagating_namespaces: skipped,
        skipped_propagating_apis: args.skipped_propagating_apis.clone(),
        cluster_status_update_frequency: args.cluster_status_update_frequency,
        cluster_failure_threshold: args.cluster_failure_threshold,
        cluster_success_threshold: args.cluster_success_threshold,
        cluster_monitor_period: args.cluster_monitor_period,
        cluster_monitor_grace_period: args.cluster_monitor_grace_period,
        cluster_startup_grace_period: args.cluster_startup_grace_period,
        feature_gates,
        cluster_api: args.rate_limits.cluster_api(),
        controllers: args.controllers.clone(),
        enable_taint_manager: args.enable_taint_manager,
        enable_no_execute_taint_eviction: args.enable_no_execute_taint_eviction,
        no_execute_taint_eviction_purge_mode: args.no_execute_taint_eviction_purge_mode,
        graceful_eviction_timeout: args.graceful_eviction_timeout,
        resource_eviction_rate: args.resource_eviction_rate,
        write_fence: election.as_ref().map(|election| election.fence.clone()),
        ..Options::default()
    };
    let leader_election = match election {
        Some(config) => {
            ensure_namespace(&client, &config.namespace).await?;
            Some(Election {
                config,
                client: client.clone(),
            })
        }
        None => None,
    };
    // Served whether or not this replica leads, as karmada-webhook runs beside the elected controllers.
    let webhook = match &webhook {
        Some(settings) => Some(karmada_webhook::start(&client, settings).await?),
        None => None,
    };
    // Served whether or not this replica leads, as karmada-aggregated-apiserver runs beside the controllers.
    let aggregated = match &aggregated {
        Some(settings) => {
            let running = aggregated_apiserver::start(&client, settings).await?;
            if settings.register.is_some()
                && let Err(error) =
                    aggregated_apiserver::wait_available(&client, AGGREGATED_API_WAIT).await
            {
                tracing::warn!(error = %format!("{error:#}"), "starting the controllers anyway; they retry what fails");
            }
            Some(running)
        }
        None => None,
    };
    let (interpreter, sync) = flotilla_interpreter::config::control_plane(client.clone())
        .context("failed to assemble the resource interpreter")?;
    let sync = tokio::spawn(sync);
    let options = ManagerOptions {
        controllers,
        admin_addr: Some(args.metrics_addr),
        leader_election,
        disable_events: false,
    };
    let mut manager = manager::start(controllers_client, Arc::new(interpreter), options)
        .await
        .context("failed to start the controllers")?;
    tracing::info!(metrics = ?manager.admin_addr(), "controller manager started");
    let ended = tokio::select! {
        () = crate::shutdown_signal() => None,
        result = manager.wait() => Some(result),
    };
    sync.abort();
    // The controllers stop first: they read and write Clusters through the aggregated API this process serves,
    // and the webhook decides their writes.
    let stopped = match ended {
        None => manager
            .shutdown()
            .await
            .context("the controllers did not stop cleanly"),
        Some(result) => result.context("the controllers stopped"),
    };
    if let Some(webhook) = webhook {
        webhook.shutdown().await;
    }
    if let Some(aggregated) = aggregated {
        aggregated.shutdown().await;
    }
    stopped
}

async fn ensure_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match api.create(&PostParams::default(), &namespace).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(err) => Err(err)
            .with_context(|| format!("failed to create namespace {name} for the leader lease")),
    }
}

/// The gates of every `--feature-gates` value, merged as Karmada's map flag merges them: a later entry for a gate
/// wins, and a gate named on its own wins over `AllAlpha`/`AllBeta` wherever it stands.
fn merged_feature_gates(values: &[String]) -> anyhow::Result<FeatureGates> {
    FeatureGates::parse(&values.join(",")).context("invalid --feature-gates")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_controllers::features::Feature;

    #[test]
    fn repeated_feature_gates_merge_and_the_later_entry_wins() {
        let values = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let gates =
            merged_feature_gates(&values(&["AllAlpha=true,AllBeta=true", "Failover=false"])).unwrap();
        assert!(!gates.enabled(Feature::Failover));
        assert!(gates.enabled(Feature::PropagationPolicyPreemption));
        let gates = merged_feature_gates(&values(&["Failover=false", "Failover=true"])).unwrap();
        assert!(gates.enabled(Feature::Failover));
        assert!(!merged_feature_gates(&[]).unwrap().enabled(Feature::Failover));
        let err = merged_feature_gates(&values(&["Failover=maybe"])).unwrap_err();
        assert!(format!("{err:#}").contains("--feature-gates"), "{err:#}");
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        // Go refuses a number without a unit, and so does Karmada's flag.
        assert!(parse_duration("7").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("-5s").is_err());
    }

    #[test]
    fn eviction_flags_take_karmadas_values_only() {
        assert_eq!(parse_purge_mode("Directly"), Ok(PurgeMode::Directly));
        assert_eq!(parse_purge_mode("Gracefully"), Ok(PurgeMode::Gracefully));
        assert!(parse_purge_mode("Never").is_err());
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("fast").is_err());
    }
}
