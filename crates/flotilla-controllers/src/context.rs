//! The state every controller shares: the control-plane client, events, metrics, the interpreter, shared
//! informers, member-cluster access, discovery, and the options the manager was started with.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::policy::v1alpha1::PurgeMode;
use kube::Client;
use regex::Regex;

use crate::controllers::work_status::ConditionOutbox;
use crate::enabled_controllers::ControllerSelection;
use crate::events::{EventRecorder, EventSink};
use crate::features::FeatureGates;
use crate::interpreter::Interpreter;
use crate::member::Members;
use crate::metrics::Metrics;
use crate::resources::Resources;
use crate::runtime::{Backoff, Informers};
use flotilla_client::RateLimit;

/// Everything a controller needs, shared by all of them (cheap to clone: every field is a handle).
#[derive(Clone)]
pub struct Context {
    /// Client of the control-plane API server (the "karmada-apiserver").
    pub client: Client,
    /// Where events go; [`Context::recorder`] gives a controller its reporter.
    pub events: EventSink,
    /// Metrics of every controller, in the registry `/metrics` serves.
    pub metrics: Metrics,
    /// The resource interpreter (every layer, in precedence order).
    pub interpreter: Arc<dyn Interpreter>,
    /// Informers on the control plane, shared between controllers.
    pub informers: Informers,
    /// Served resources of the control plane (discovery), refreshed as CRDs come and go.
    pub resources: Resources,
    /// Clients and informers of member clusters.
    pub members: Members,
    /// How the manager was configured.
    pub options: Arc<Options>,
    /// Work conditions from the execution controller, written by the work status controller.
    pub(crate) work_conditions: ConditionOutbox,
}

impl Context {
    /// A context over `client`; `events` decides where events go.
    pub fn new(
        client: Client,
        interpreter: Arc<dyn Interpreter>,
        events: EventSink,
        metrics: Metrics,
        options: Options,
    ) -> Self {
        let options = Arc::new(options);
        Context {
            informers: Informers::new(client.clone(), "control-plane"),
            resources: Resources::new(client.clone()),
            members: Members::new(
                client.clone(),
                options.member_request_timeout,
                options.cluster_api,
            ),
            client,
            events,
            metrics,
            interpreter,
            options,
            work_conditions: ConditionOutbox::default(),
        }
    }

    /// An event recorder reporting as `flotilla-<controller>`.
    pub fn recorder(&self, controller: &str) -> EventRecorder {
        self.events.recorder(controller)
    }
}

/// Settings of the controller manager; [`Options::default`] gives Karmada's defaults.
#[derive(Clone, Debug)]
pub struct Options {
    /// Backoff of transient reconcile failures.
    pub backoff: Backoff,
    /// Concurrent reconciles per controller (Karmada's `--concurrent-*-syncs`, 5 by default).
    pub workers: usize,
    /// Namespaces (full-match regexes) whose objects are never propagated (`--skipped-propagating-namespaces`,
    /// default `kube-.*`).
    pub skipped_propagating_namespaces: Vec<Regex>,
    /// Extra APIs never propagated (`--skipped-propagating-apis`: `;`-separated `group`, `group/version` or
    /// `group/version/Kind1,Kind2`).
    pub skipped_propagating_apis: String,
    /// How often the detector re-runs discovery (Karmada: 30 s); CRD changes trigger it sooner.
    pub discovery_interval: Duration,
    /// How often cluster status is collected (`--cluster-status-update-frequency`, 10 s).
    pub cluster_status_update_frequency: Duration,
    /// How long a cluster must look healthy before Ready turns True again (`--cluster-success-threshold`).
    pub cluster_success_threshold: Duration,
    /// How long a cluster must look unhealthy before Ready turns False (`--cluster-failure-threshold`).
    pub cluster_failure_threshold: Duration,
    /// Timeout of requests to member clusters (Karmada: 32 s).
    pub member_request_timeout: Duration,
    /// Pull clusters: how long a cluster's Lease lasts (agent `--cluster-lease-duration`, 40 s) and the
    /// fraction of it after which the agent renews it (`--cluster-lease-renew-interval-fraction`, 0.25).
    pub cluster_lease_duration: Duration,
    /// See [`Options::cluster_lease_duration`].
    pub cluster_lease_renew_interval_fraction: f64,
    /// Pull clusters: how often the control plane checks their Lease (`--cluster-monitor-period`, 5 s), how
    /// long without a renewal or a Ready change before Ready turns Unknown (`--cluster-monitor-grace-period`,
    /// 40 s), and how long after creation a cluster may post no status at all (`--cluster-startup-grace-period`,
    /// 60 s).
    pub cluster_monitor_period: Duration,
    /// See [`Options::cluster_monitor_period`].
    pub cluster_monitor_grace_period: Duration,
    /// See [`Options::cluster_monitor_period`].
    pub cluster_startup_grace_period: Duration,
    /// Name of the scheduler whose bindings the scheduler handles (`default-scheduler`).
    pub scheduler_name: String,
    /// Karmada's feature gates (`--feature-gates`).
    pub feature_gates: FeatureGates,
    /// Client-side rate limit of each member's client (`--cluster-api-qps`, `--cluster-api-burst`).
    pub cluster_api: RateLimit,
    /// Which of Karmada's controllers run (`--controllers`).
    pub controllers: ControllerSelection,
    /// The taint manager runs (`--enable-taint-manager`, true; it also needs the `Failover` gate).
    pub enable_taint_manager: bool,
    /// The taint manager evicts bindings from clusters with untolerated NoExecute taints
    /// (`--enable-no-execute-taint-eviction`, false).
    pub enable_no_execute_taint_eviction: bool,
    /// How a binding without `spec.failover.cluster` leaves a NoExecute-tainted cluster
    /// (`--no-execute-taint-eviction-purge-mode`: `Directly` or `Gracefully`, the default).
    pub no_execute_taint_eviction_purge_mode: PurgeMode,
    /// How long a graceful eviction task without `gracePeriodSeconds` lasts (`--graceful-eviction-timeout`,
    /// 10 min).
    pub graceful_eviction_timeout: Duration,
    /// Bindings the taint manager evicts per second (`--resource-eviction-rate`, 0.5).
    pub resource_eviction_rate: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            backoff: Backoff::default(),
            workers: 5,
            skipped_propagating_namespaces: default_skipped_namespaces(),
            skipped_propagating_apis: String::new(),
            discovery_interval: Duration::from_secs(30),
            cluster_status_update_frequency: Duration::from_secs(10),
            cluster_success_threshold: Duration::from_secs(30),
            cluster_failure_threshold: Duration::from_secs(30),
            member_request_timeout: Duration::from_secs(32),
            cluster_lease_duration: Duration::from_secs(40),
            cluster_lease_renew_interval_fraction: 0.25,
            cluster_monitor_period: Duration::from_secs(5),
            cluster_monitor_grace_period: Duration::from_secs(40),
            cluster_startup_grace_period: Duration::from_secs(60),
            scheduler_name: flotilla_api::policy::v1alpha1::DEFAULT_SCHEDULER_NAME.to_owned(),
            feature_gates: FeatureGates::default(),
            cluster_api: RateLimit::default(),
            controllers: ControllerSelection::default(),
            enable_taint_manager: true,
            enable_no_execute_taint_eviction: false,
            no_execute_taint_eviction_purge_mode: PurgeMode::Gracefully,
            graceful_eviction_timeout: Duration::from_secs(600),
            resource_eviction_rate: 0.5,
        }
    }
}

/// Compiles `--skipped-propagating-namespaces` entries, each anchored (`^<re>$`) as Karmada does.
///
/// # Errors
/// The first entry that is not a valid regular expression, with the parser's message.
pub fn compile_namespace_patterns(patterns: &[String]) -> Result<Vec<Regex>, regex::Error> {
    patterns
        .iter()
        .map(|p| Regex::new(&format!("^(?:{p})$")))
        .collect()
}

fn default_skipped_namespaces() -> Vec<Regex> {
    // A constant pattern: compiling it cannot fail, and if it somehow did, skipping nothing is the safe side.
    compile_namespace_patterns(&["kube-.*".to_owned()]).unwrap_or_default()
}

/// Whether objects in `namespace` are never propagated: reserved namespaces (`karmada-system`,
/// `karmada-cluster`, `karmada-es-*`) and those matching a skip pattern.
pub fn namespace_skipped(options: &Options, namespace: &str) -> bool {
    !namespace.is_empty()
        && (flotilla_api::names::namespaces::is_reserved(namespace)
            || options
                .skipped_propagating_namespaces
                .iter()
                .any(|re| re.is_match(namespace)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_skips_kube_namespaces_and_reserved_ones_only() {
        let options = Options::default();
        for ns in [
            "kube-system",
            "kube-public",
            "karmada-system",
            "karmada-cluster",
            "karmada-es-m1",
        ] {
            assert!(namespace_skipped(&options, ns), "{ns}");
        }
        for ns in ["", "default", "app", "my-kube-x"] {
            assert!(!namespace_skipped(&options, ns), "{ns}");
        }
    }
}
