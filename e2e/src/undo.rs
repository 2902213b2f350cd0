//! Changes a scenario makes to the control plane that must be undone even when it fails, because the kube world
//! is shared by every e2e test run after it (a member taken away, a cluster-scoped policy). [`Undo::run`] undoes
//! the change on the scenario's way out; an `Undo` dropped without it (an early `?`, a panic) undoes the change
//! on a thread of its own, with a runtime and a client of its own, before the drop returns. An in-process
//! environment is left alone: it ends with the scenario, and its servers run on the very runtime the drop
//! blocks.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use kube::Client;

use crate::env::{Env, client_for};

/// The undoing action: given a client of the control plane.
type Action =
    Box<dyn FnOnce(Client) -> Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>> + Send>;

/// A change to undo.
pub struct Undo {
    what: String,
    karmada_config: PathBuf,
    karmada_context: String,
    /// The environment ends with the scenario (and would not answer while the drop blocks its runtime).
    in_process: bool,
    action: Option<Action>,
}

impl Undo {
    /// `action` undoes `what` (a phrase for messages, e.g. "restore member2's apiEndpoint") on `env`'s control
    /// plane.
    pub fn new<F, Fut>(env: &Env, what: impl Into<String>, action: F) -> Undo
    where
        F: FnOnce(Client) -> Fut + Send + 'static,
        Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        Undo {
            what: what.into(),
            karmada_config: env.karmada_config.clone(),
            karmada_context: env.karmada_context.clone(),
            in_process: env.owned.is_some(),
            action: Some(Box::new(move |client| Box::pin(action(client)))),
        }
    }

    /// Undoes the change now, with `client`.
    ///
    /// # Errors
    /// When undoing fails.
    pub async fn run(mut self, client: &Client) -> anyhow::Result<()> {
        match self.action.take() {
            Some(action) => action(client.clone()).await,
            None => Ok(()),
        }
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        let Some(action) = self.action.take() else {
            return;
        };
        if self.in_process {
            return;
        }
        // The scenario's runtime may be the current thread, blocked in this drop: a client made on it could
        // not make progress, so the undoing gets a runtime and a client of its own.
        let config = self.karmada_config.clone();
        let context = self.karmada_context.clone();
        let undone = std::thread::spawn(move || -> anyhow::Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let client = client_for(&config, Some(&context)).await?;
                action(client).await
            })
        })
        .join();
        match undone {
            Ok(Ok(())) => eprintln!("e2e: {} (on the way out of a failed scenario)", self.what),
            Ok(Err(e)) => eprintln!("e2e: failed to {}: {e:#}", self.what),
            Err(_) => eprintln!("e2e: failed to {}: the undoing thread panicked", self.what),
        }
    }
}
