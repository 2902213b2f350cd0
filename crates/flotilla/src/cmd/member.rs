//! `flotilla member stop|start NAME`: takes a member of a running `flotilla up` away and brings it back, through
//! the control socket in its data dir. Stopping ends the member's API server, so the control plane's
//! connections to it are refused and, after `--cluster-failure-threshold`, its Cluster turns not Ready, as when
//! a real member's API server goes down; nothing is deleted. Starting serves the same store on the same
//! address again. The kube and kind worlds have no such switch: point the Cluster's `spec.apiEndpoint` at a dead
//! address and restore it, as Karmada's own e2e does (docs/FAILOVER.md).

use std::path::PathBuf;

use super::up::{control, default_data_dir};

/// Arguments of `flotilla member`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// What to do with the member.
    #[command(subcommand)]
    pub action: Action,
    /// The data dir of the running `flotilla up` (default `~/.flotilla`).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
}

/// What `flotilla member` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Action {
    /// Stop member NAME's API server (and simulator): connections are refused, nothing is deleted.
    Stop {
        /// The member (`member1` ..).
        name: String,
    },
    /// Serve member NAME again, on the same address with the same objects.
    Start {
        /// The member (`member1` ..).
        name: String,
    },
}

/// Sends the request to the running `up` and prints what it did.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let dir = match args.data_dir {
        Some(dir) => dir,
        None => default_data_dir()?,
    };
    let request = match &args.action {
        Action::Stop { name } => format!("stop {name}"),
        Action::Start { name } => format!("start {name}"),
    };
    let done = control::request(&dir, &request).await?;
    println!("{done}");
    Ok(())
}
