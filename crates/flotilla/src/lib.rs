//! The `flotilla` binary's composition root: command-line arguments and the subcommands that assemble the
//! library crates.
//!
//! Contract: the command line is what users, scripts and tests rely on, so flags may grow but what a subcommand
//! prints or writes changes only with a reason. Every subcommand has `--help`; results go to stdout, logs to stderr
//! (tracing, `RUST_LOG` honoured); a failure exits non-zero with one line `error: <context>: <cause>: ...` on
//! stderr.

pub(crate) mod cli;
pub mod cmd;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use tracing_subscriber::EnvFilter;

/// Parses the command line, runs the subcommand and reports its outcome as an exit code.
pub fn main() -> ExitCode {
    // clap prints help, version and usage errors itself and exits (0 for help, 2 for usage errors).
    let cli = cli::Cli::parse();
    init_logging();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// Runs a parsed command line on a Tokio runtime.
///
/// # Errors
/// Whatever the subcommand failed with, with context naming what it was doing.
pub fn run(cli: cli::Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    runtime.block_on(cli.command.run())
}

/// The error and its causes joined with `: `, on one line.
fn one_line(err: &anyhow::Error) -> String {
    format!("{err:#}").replace(['\n', '\r'], " ")
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`).
fn init_logging() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // kube-client warns "Server cert bypassed" on every TLS handshake with a member whose certificate is not
    // verified; the member client reports that once per cluster instead.
    let filter = match "kube_client::client::tls=error".parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    // A second initialisation (tests calling `main` twice) keeps the first subscriber.
    // Colour only for a person at a terminal: a log redirected to a file (hack/local-up.sh's
    // flotilla-up.log) or read by a program gets plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Resolves when the process receives SIGINT or SIGTERM: long-running subcommands shut down cleanly then.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    // Without a SIGTERM handler, Ctrl-C still stops us; if even that cannot be installed, run until killed.
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}
