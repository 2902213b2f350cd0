//! The processes a scenario restarts: the Pull member's agent and the control plane's controllers. member3 is the
//! Pull member in both worlds. In the embedded world both run inside the environment the test started
//! (`flotilla up`'s in-process agent and controllers). In the kube world they are the `flotilla agent` and
//! `flotilla controller-manager` processes `hack/local-up.sh` started: their pids are in `DATA_DIR/agent-member3.pid`
//! and `DATA_DIR/flotilla-up.pid`, and `DATA_DIR/agent-member3.sh` and `DATA_DIR/controller-manager.sh` start them
//! again (the latter waits until the manager is ready). `DATA_DIR` is `FLOTILLA_E2E_DATA_DIR`, else the `data`
//! directory beside `FLOTILLA_E2E_KUBE_DIR` (as hack/test.sh lays them out: `<world>/kube` and `<world>/data`).

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;
use flotilla::cmd::up::Environment;

use crate::{Env, World, wait_for};

/// The member `flotilla up` and `hack/local-up.sh` register in Pull mode.
pub const PULL_MEMBER: &str = "member3";

/// A process a scenario can restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restartable {
    /// The Pull member's agent.
    Agent,
    /// The control plane's controllers (karmada-controller-manager).
    Controllers,
}

impl Env {
    /// Stops `what` and starts it again, as an operator restarting karmada-agent or the controller manager would.
    ///
    /// # Errors
    /// When this environment's processes cannot be reached (an external embedded environment), or `what` cannot
    /// be stopped or started.
    pub async fn restart(&self, what: Restartable) -> anyhow::Result<()> {
        self.restart_with(what, &[]).await
    }

    /// Like [`Env::restart`], with `flags` added to the process's command line in the kube world (the scripts
    /// `hack/local-up.sh` wrote pass their arguments on; a later `--feature-gates` entry wins over the script's).
    /// The embedded world's in-process controllers and agent take no flags: `flags` must be empty there.
    ///
    /// # Errors
    /// As [`Env::restart`], and when the embedded world is asked for flags.
    pub async fn restart_with(&self, what: Restartable, flags: &[&str]) -> anyhow::Result<()> {
        match self.world {
            World::Embedded => {
                anyhow::ensure!(
                    flags.is_empty(),
                    "the embedded world's {what:?} take no flags (asked for {flags:?})"
                );
                let environment = self.owned_environment()?;
                match what {
                    Restartable::Agent => agent_of(environment)?.restart().await,
                    Restartable::Controllers => controllers_of(environment)?.restart().await,
                }
            }
            World::Kube => restart_process(what, flags).await,
        }
    }

    /// Starts `what` unless it runs: what a scenario that restarts it does at its end, also when it failed, so that
    /// the shared kube world keeps its control plane and its member3.
    ///
    /// # Errors
    /// As [`Env::restart`].
    pub async fn ensure_running(&self, what: Restartable) -> anyhow::Result<()> {
        match self.world {
            World::Embedded => {
                let environment = self.owned_environment()?;
                match what {
                    Restartable::Agent => agent_of(environment)?.start_again().await,
                    Restartable::Controllers => controllers_of(environment)?.start_again().await,
                }
            }
            World::Kube => {
                let process = Background::locate(what)?;
                if process.running().is_none() {
                    process.start(&[])?;
                }
                Ok(())
            }
        }
    }

    fn owned_environment(&self) -> anyhow::Result<&Environment> {
        self.owned.as_ref().context(
            "this embedded environment was not started by the test (KARMADA_KUBECONFIG): its processes cannot be \
             restarted from here",
        )
    }
}

/// Stops the kube world's `what` and starts it again with `flags` added: also what an [`crate::Undo`] of a
/// restart with flags runs, without an [`Env`].
///
/// # Errors
/// When the process cannot be located, stopped or started.
pub async fn restart_process(what: Restartable, flags: &[&str]) -> anyhow::Result<()> {
    let process = Background::locate(what)?;
    process.stop().await?;
    process.start(flags)
}

fn agent_of(environment: &Environment) -> anyhow::Result<&flotilla::cmd::up::InProcessAgent> {
    environment
        .agent
        .as_ref()
        .context("the embedded environment has no Pull member agent")
}

fn controllers_of(
    environment: &Environment,
) -> anyhow::Result<&flotilla::cmd::up::InProcessControllers> {
    environment
        .controllers
        .as_ref()
        .context("the embedded environment runs no controllers")
}

/// A kube-world process as `hack/local-up.sh` left it.
struct Background {
    pid_file: PathBuf,
    script: PathBuf,
    /// A word of its command line (`agent`, `controller-manager`).
    subcommand: &'static str,
}

impl Background {
    fn locate(what: Restartable) -> anyhow::Result<Background> {
        let data_dir = match std::env::var_os("FLOTILLA_E2E_DATA_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => std::env::var_os("FLOTILLA_E2E_KUBE_DIR")
                .map(PathBuf::from)
                .and_then(|kube| kube.parent().map(|p| p.join("data")))
                .context(
                    "FLOTILLA_E2E_KUBE_DIR (or FLOTILLA_E2E_DATA_DIR) must name the kube world",
                )?,
        };
        let process = match what {
            Restartable::Agent => Background {
                pid_file: data_dir.join(format!("agent-{PULL_MEMBER}.pid")),
                script: data_dir.join(format!("agent-{PULL_MEMBER}.sh")),
                subcommand: "agent",
            },
            Restartable::Controllers => Background {
                pid_file: data_dir.join("flotilla-up.pid"),
                script: data_dir.join("controller-manager.sh"),
                subcommand: "controller-manager",
            },
        };
        anyhow::ensure!(
            process.script.is_file(),
            "{} is missing: the kube world's data dir (FLOTILLA_E2E_DATA_DIR) was not started by hack/local-up.sh \
             (with 3 members for the agent)",
            process.script.display()
        );
        Ok(process)
    }

    /// The process's pid when it runs.
    fn running(&self) -> Option<u32> {
        let pid: u32 = std::fs::read_to_string(&self.pid_file)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // A zombie (state Z after the command's closing parenthesis) has stopped already.
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        let ours = cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == self.subcommand.as_bytes());
        (ours && !zombie).then_some(pid)
    }

    async fn stop(&self) -> anyhow::Result<()> {
        let Some(pid) = self.running() else {
            return Ok(());
        };
        let status = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .context("failed to run kill")?;
        anyhow::ensure!(status.success(), "kill -TERM {pid} failed");
        wait_for(
            &format!("flotilla {} (pid {pid}) to stop", self.subcommand),
            || async {
                match self.running() {
                    Some(pid) => Err(format!("pid {pid} still runs")),
                    None => Ok(()),
                }
            },
        )
        .await
    }

    fn start(&self, flags: &[&str]) -> anyhow::Result<()> {
        let status = Command::new("bash")
            .arg(&self.script)
            .args(flags)
            .status()
            .with_context(|| format!("failed to run {}", self.script.display()))?;
        anyhow::ensure!(
            status.success(),
            "{} failed: {status}",
            self.script.display()
        );
        Ok(())
    }
}
