//! The top-level command line: `flotilla <subcommand> [flags]`.
//!
//! The subcommands themselves are listed once, in [`crate::cmd`].

pub(crate) use crate::cmd::Command;

/// Flotilla: Karmada's multi-cluster control plane in one binary.
///
/// Propagates Kubernetes objects to member clusters by PropagationPolicy, with Karmada's API, resource
/// interpreter and controllers.
#[derive(Debug, clap::Parser)]
#[command(name = "flotilla", version, propagate_version = true)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}
