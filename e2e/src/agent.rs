//! The Pull member's agent, for scenarios that restart it. member3 is the Pull member in both worlds: the
//! embedded world's is served by the agent inside the environment the test started (`flotilla up`'s in-process
//! agent); the kube world's by the `flotilla agent` process `hack/local-up.sh` started, whose pid is in
//! `DATA_DIR/agent-member3.pid` and which `DATA_DIR/agent-member3.sh` starts again. `DATA_DIR` is
//! `FLOTILLA_E2E_DATA_DIR`, else the `data` directory beside `FLOTILLA_E2E_KUBE_DIR` (as hack/test.sh lays them
//! out: `<world>/kube` and `<world>/data`).

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;

use crate::{Env, World, wait_for};

/// The member `flotilla up` and `hack/local-up.sh` register in Pull mode.
pub const PULL_MEMBER: &str = "member3";

impl Env {
    /// Stops the Pull member's agent and starts it again, as an operator restarting karmada-agent would.
    ///
    /// # Errors
    /// When this environment's agent cannot be reached (an external embedded environment), or it cannot be
    /// stopped or started.
    pub async fn restart_agent(&self) -> anyhow::Result<()> {
        match self.world {
            World::Embedded => {
                let agent = self.in_process_agent()?;
                agent.restart().await
            }
            World::Kube => {
                let process = AgentProcess::locate()?;
                process.stop().await?;
                process.start()
            }
        }
    }

    /// Starts the Pull member's agent unless it runs: what a scenario that restarts it does at its end, also when
    /// it failed, so that the shared kube world keeps its member3.
    ///
    /// # Errors
    /// As [`Env::restart_agent`].
    pub async fn ensure_agent_running(&self) -> anyhow::Result<()> {
        match self.world {
            World::Embedded => self.in_process_agent()?.start_again().await,
            World::Kube => {
                let process = AgentProcess::locate()?;
                if process.running().is_none() {
                    process.start()?;
                }
                Ok(())
            }
        }
    }

    fn in_process_agent(&self) -> anyhow::Result<&flotilla::cmd::up::InProcessAgent> {
        self.owned
            .as_ref()
            .context(
                "this embedded environment was not started by the test (KARMADA_KUBECONFIG): its agent cannot be \
                 restarted from here",
            )?
            .agent
            .as_ref()
            .context("the embedded environment has no Pull member agent")
    }
}

/// The kube world's agent process, as `hack/local-up.sh` left it.
struct AgentProcess {
    pid_file: PathBuf,
    script: PathBuf,
}

impl AgentProcess {
    fn locate() -> anyhow::Result<AgentProcess> {
        let data_dir = match std::env::var_os("FLOTILLA_E2E_DATA_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => std::env::var_os("FLOTILLA_E2E_KUBE_DIR")
                .map(PathBuf::from)
                .and_then(|kube| kube.parent().map(|p| p.join("data")))
                .context(
                    "FLOTILLA_E2E_KUBE_DIR (or FLOTILLA_E2E_DATA_DIR) must name the kube world",
                )?,
        };
        let process = AgentProcess {
            pid_file: data_dir.join(format!("agent-{PULL_MEMBER}.pid")),
            script: data_dir.join(format!("agent-{PULL_MEMBER}.sh")),
        };
        anyhow::ensure!(
            process.script.is_file(),
            "{} is missing: the kube world's data dir (FLOTILLA_E2E_DATA_DIR) was not started by \
             hack/local-up.sh with 3 members",
            process.script.display()
        );
        Ok(process)
    }

    /// The agent's pid when it runs.
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
        let is_agent = String::from_utf8_lossy(&cmdline).contains("agent");
        (is_agent && !zombie).then_some(pid)
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
        wait_for(&format!("the agent (pid {pid}) to stop"), || async {
            match self.running() {
                Some(pid) => Err(format!("pid {pid} still runs")),
                None => Ok(()),
            }
        })
        .await
    }

    fn start(&self) -> anyhow::Result<()> {
        let status = Command::new("bash")
            .arg(&self.script)
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
