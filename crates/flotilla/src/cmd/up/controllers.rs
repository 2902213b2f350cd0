//! The controllers `flotilla up` runs in-process (karmada-controller-manager with the resource interpreter), as
//! Karmada's deployment runs them. They can be stopped and started again while the API servers keep running,
//! which is what a control-plane restart looks like to the members and what tests of recovery need.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use flotilla_controllers::manager::{self, ManagerHandle, ManagerOptions};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// How long the controllers may take to start (their interpreter lists its configuration first).
pub(crate) const CONTROLLERS_TIMEOUT: Duration = Duration::from_secs(30);

/// The controllers and their interpreter's configuration watch.
struct Running {
    manager: ManagerHandle,
    watch: JoinHandle<()>,
}

/// The in-process controllers of `flotilla up`.
pub struct InProcessControllers {
    control: kube::Client,
    options: ManagerOptions,
    running: Mutex<Option<Running>>,
}

impl InProcessControllers {
    /// Starts the controllers against `control` with `options` and waits until they are ready.
    ///
    /// # Errors
    /// When the interpreter or the controllers cannot start, or are not ready within [`CONTROLLERS_TIMEOUT`].
    pub async fn start(
        control: kube::Client,
        options: ManagerOptions,
    ) -> anyhow::Result<InProcessControllers> {
        let running = launch(&control, options.clone()).await?;
        // A restart serves the status page where this start did (with port 0, the port it picked).
        let options = ManagerOptions {
            admin_addr: running.manager.admin_addr(),
            ..options
        };
        Ok(InProcessControllers {
            control,
            options,
            running: Mutex::new(Some(running)),
        })
    }

    /// Where the status page and `/metrics` are served.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.options.admin_addr
    }

    /// The controllers' Prometheus metrics in text format; `None` while they are stopped or being restarted.
    pub fn metrics(&self) -> Option<String> {
        let running = self.running.try_lock().ok()?;
        running
            .as_ref()
            .map(|r| r.manager.metrics().encode())
    }

    /// Stops the controllers; the API servers, members and agents keep running.
    pub async fn stop(&self) {
        if let Some(running) = self.running.lock().await.take() {
            if let Err(e) = running.manager.shutdown().await {
                tracing::warn!(error = %e, "the controllers stopped with an error");
            }
            running.watch.abort();
        }
    }

    /// Starts the controllers unless they run; they resume from what the control plane holds.
    ///
    /// # Errors
    /// As [`InProcessControllers::start`].
    pub async fn start_again(&self) -> anyhow::Result<()> {
        let mut running = self.running.lock().await;
        if running.is_none() {
            *running = Some(launch(&self.control, self.options.clone()).await?);
        }
        Ok(())
    }

    /// Stops the controllers and starts them again.
    ///
    /// # Errors
    /// As [`InProcessControllers::start`].
    pub async fn restart(&self) -> anyhow::Result<()> {
        self.stop().await;
        self.start_again().await
    }
}

async fn launch(control: &kube::Client, options: ManagerOptions) -> anyhow::Result<Running> {
    let (interpreter, watch) = flotilla_interpreter::config::control_plane(control.clone())
        .context("failed to assemble the resource interpreter")?;
    let watch = tokio::spawn(watch);
    let started = manager::start(control.clone(), Arc::new(interpreter), options).await;
    let manager = match started {
        Ok(manager) => manager,
        Err(e) => {
            watch.abort();
            return Err(e).context("failed to start the controllers");
        }
    };
    if tokio::time::timeout(CONTROLLERS_TIMEOUT, manager.wait_ready())
        .await
        .is_err()
    {
        watch.abort();
        let _ = manager.shutdown().await;
        anyhow::bail!(
            "the controllers did not start within {}s",
            CONTROLLERS_TIMEOUT.as_secs()
        );
    }
    Ok(Running { manager, watch })
}
