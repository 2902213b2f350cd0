//! The controller manager's settings: karmada-controller-manager's flags, by Karmada's names and with its
//! defaults. Each controller's `Context::new` takes from them only the settings that controller uses, so no
//! controller holds the others'.

use std::time::Duration;

use flotilla_api::policy::v1alpha1::PurgeMode;
use flotilla_client::RateLimit;
use flotilla_client::leader::Fence;
use regex::Regex;

use crate::enabled_controllers::ControllerSelection;
use crate::features::FeatureGates;
use crate::runtime::Backoff;

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
    /// The leader election's fence: member clients write only while it allows (the control-plane client is
    /// built fenced by whoever builds it). `None` without leader election.
    pub write_fence: Option<Fence>,
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
            write_fence: None,
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
