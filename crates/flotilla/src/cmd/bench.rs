//! `flotilla bench`: the propagation benchmark (issue 5, Speed). In one process it starts the embedded
//! environment of `flotilla up` on free ports, then propagates N Deployment templates to M members with one
//! PropagationPolicy and reports: time to ready and RSS of the environment, time until every member object
//! exists, time until every template's status is aggregated, p50/p99 template-to-member latency, the writes
//! per template by resource and verb on the control plane and on the members (from the servers'
//! `apiserver_request_total`, once the writes have settled), CPU and peak RSS.
//!
//! With `--kubeconfig` and `--members-kubeconfig` it measures any control plane with joined members instead
//! (the `kube` mode of `hack/local-up.sh`, say), and the CPU of the controller process `--controller-pid`.
//! Either way it then replays the same writes from a plain client (`capacity`) and reports the ratio of the
//! propagation's time to the replay's: how much of the API servers' own speed Flotilla uses.
//!
//! Results go to stdout as `key: value` lines (`--json` for one JSON object); progress to stderr.

mod capacity;
mod measure;
pub mod writes;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use super::kube_access;
use crate::cmd::up::{Environment, UpConfig};

/// Arguments of `flotilla bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Number of Deployment templates to propagate.
    #[arg(long, default_value_t = 1000)]
    pub templates: usize,
    /// Number of member clusters (every template goes to all of them, Duplicated).
    #[arg(long, default_value_t = 3)]
    pub members: usize,
    /// Replicas of each template.
    #[arg(long, default_value_t = 1)]
    pub replicas: i32,
    /// Concurrent create requests.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Milliseconds the members' simulated workload controllers take to report status.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub simulator_delay_ms: u64,
    /// Data dir (default: a temporary directory, removed afterwards).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout_secs: u64,
    /// Only measure how long the environment takes to be ready and how much memory it then uses.
    #[arg(long)]
    pub up_only: bool,
    /// Run the controllers without publishing Kubernetes Events (to measure what events cost).
    #[arg(long)]
    pub no_events: bool,
    /// Print the results as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Skip replaying the propagation's writes from a plain client.
    #[arg(long)]
    pub no_capacity: bool,
    /// Measure the control plane of this kubeconfig (with members joined) instead of an embedded environment.
    #[arg(long, requires = "members_kubeconfig")]
    pub kubeconfig: Option<PathBuf>,
    /// Context in --kubeconfig (default: its current context).
    #[arg(long, requires = "kubeconfig")]
    pub context: Option<String>,
    /// Kubeconfig with one context per member, named as its Cluster; the first --members contexts, in name
    /// order, are propagated to.
    #[arg(long, requires = "kubeconfig")]
    pub members_kubeconfig: Option<PathBuf>,
    /// The process running the controllers, whose CPU is reported (with --kubeconfig).
    #[arg(long, requires = "kubeconfig")]
    pub controller_pid: Option<u32>,
    /// Where the controllers serve `/metrics` (with --kubeconfig; `flotilla controller-manager
    /// --metrics-addr`), for their reconciles and the Events they dropped.
    #[arg(long, requires = "kubeconfig", value_name = "URL")]
    pub controller_metrics_url: Option<String>,
}

/// Runs the benchmark and prints its figures.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let report = match (&args.kubeconfig, &args.members_kubeconfig) {
        (Some(control), Some(members)) => external(&args, control, members).await?,
        _ => embedded(&args).await?,
    };
    if args.json {
        println!("{report}");
    } else if let Some(fields) = report.as_object() {
        for (key, value) in fields {
            println!("{key}: {value}");
        }
    }
    Ok(())
}

/// The propagation on a control plane and members someone else runs; the templates' namespace is deleted
/// afterwards and the run ends when Flotilla has deleted it everywhere, so that a second run starts clean.
async fn external(
    args: &Args,
    control: &std::path::Path,
    members_config: &std::path::Path,
) -> anyhow::Result<serde_json::Value> {
    let control = kube_access::client(Some(control), args.context.as_deref())
        .await
        .context("failed to reach the control plane")?;
    let file = kube::config::Kubeconfig::read_from(members_config)
        .with_context(|| format!("failed to read {}", members_config.display()))?;
    let mut names: Vec<String> = file.contexts.iter().map(|c| c.name.clone()).collect();
    names.sort();
    if names.len() < args.members {
        anyhow::bail!(
            "{} has {} contexts, fewer than --members {}",
            members_config.display(),
            names.len(),
            args.members
        );
    }
    let mut members = Vec::new();
    for name in names.into_iter().take(args.members) {
        let client = kube_access::client(Some(members_config), Some(&name))
            .await
            .with_context(|| format!("failed to reach member {name}"))?;
        members.push((name, client));
    }
    let target = measure::Target {
        control: control.clone(),
        members,
        controller_pid: args.controller_pid,
        controller_metrics_url: args.controller_metrics_url.clone(),
    };
    let result = measure::propagation(&target, args).await;
    // The replay removed them already, unless it did not run or the run failed before it.
    measure::remove_templates(&target).await;
    let mut report = json!({"members": args.members, "kubeconfig": true});
    if let (Some(into), Some(from)) = (report.as_object_mut(), result?.as_object()) {
        into.extend(from.clone());
    }
    Ok(report)
}

/// The propagation on an embedded environment started for it.
async fn embedded(args: &Args) -> anyhow::Result<serde_json::Value> {
    let temp = match &args.data_dir {
        Some(_) => None,
        None => Some(
            tempfile::Builder::new()
                .prefix("flotilla-bench-")
                .tempdir()
                .context("failed to create a temporary data dir")?,
        ),
    };
    let dir = match (&args.data_dir, &temp) {
        (Some(dir), _) => dir.clone(),
        (None, Some(temp)) => temp.path().to_path_buf(),
        (None, None) => anyhow::bail!("no data dir"),
    };
    let mut config = UpConfig::new(dir);
    config.port = 0;
    config.members = args.members;
    config.simulator_delay = Duration::from_millis(args.simulator_delay_ms);
    // Propagation is measured, not the member-side ReplicaSets and Pods a real cluster's controllers would add.
    config.simulator_children = false;
    config.events = !args.no_events;

    let started = tokio::time::Instant::now();
    let environment = Environment::start(&config, &|line| eprintln!("bench: {line}")).await?;
    let ready = started.elapsed();
    let ready_rss = measure::rss_bytes();
    let mut report = json!({
        "members": args.members,
        "events": !args.no_events,
        "up_ready_ms": ready.as_millis(),
        "up_rss_mb": ready_rss.map(measure::mb),
    });
    if !args.up_only {
        let target = measure::Target {
            control: environment.control_client.clone(),
            members: environment
                .members
                .iter()
                .map(|m| (m.name.clone(), m.client.clone()))
                .collect(),
            controller_pid: None,
            controller_metrics_url: environment
                .status_url
                .as_ref()
                .map(|page| format!("{page}metrics")),
        };
        let result = measure::propagation(&target, args).await;
        match result {
            Ok(figures) => {
                if let (Some(into), Some(from)) = (report.as_object_mut(), figures.as_object()) {
                    into.extend(from.clone());
                }
            }
            Err(e) => {
                environment.shutdown().await;
                return Err(e);
            }
        }
    }
    report["peak_rss_mb"] = json!(measure::peak_rss_bytes().map(measure::mb));
    environment.shutdown().await;
    Ok(report)
}
