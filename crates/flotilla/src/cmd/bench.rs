//! `flotilla bench`: the propagation benchmark (issue 5, Speed). In one process it starts the embedded
//! environment of `flotilla up` on free ports, then propagates N Deployment templates to M members with one
//! PropagationPolicy and reports: time to ready and RSS of the environment, time until every member object
//! exists, time until every template's status is aggregated, p50/p99 template-to-member latency, the writes
//! per template by resource and verb on the control plane and on the members (from the servers'
//! `apiserver_request_total`, once the writes have settled), CPU and peak RSS.
//!
//! Results go to stdout as `key: value` lines (`--json` for one JSON object); progress to stderr.

mod measure;
pub mod writes;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

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
}

/// Runs the benchmark and prints its figures.
pub async fn run(args: Args) -> anyhow::Result<()> {
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
        let result = measure::propagation(&environment, &args).await;
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
    if args.json {
        println!("{report}");
    } else if let Some(fields) = report.as_object() {
        for (key, value) in fields {
            println!("{key}: {value}");
        }
    }
    Ok(())
}
