//! Readiness of the interpreter: named gates (one per configuration source) that must all open before any call is
//! dispatched, so no layer is ever consulted before it loaded its configuration (Karmada's webhook layer fails
//! calls until then and its customization layer passes them over: docs/INTERPRETER.md).

use std::sync::Arc;

use tokio::sync::watch;

/// The set of gates; cheap to clone, every clone sees the same gates.
#[derive(Clone, Debug)]
pub struct Readiness {
    state: Arc<watch::Sender<Vec<(&'static str, bool)>>>,
}

/// One gate, opened by whoever loads that configuration (a reflector after its initial list).
#[derive(Clone, Debug)]
pub struct ReadyGate {
    name: &'static str,
    state: Arc<watch::Sender<Vec<(&'static str, bool)>>>,
}

impl Readiness {
    /// No gates: ready at once.
    pub fn new() -> Readiness {
        Readiness {
            state: Arc::new(watch::Sender::new(Vec::new())),
        }
    }

    /// Adds a closed gate named `name` (e.g. `customizations`); the interpreter is not ready until it opens.
    pub fn gate(&self, name: &'static str) -> ReadyGate {
        self.state.send_modify(|gates| gates.push((name, false)));
        ReadyGate {
            name,
            state: self.state.clone(),
        }
    }

    /// Whether every gate is open.
    pub fn is_ready(&self) -> bool {
        self.pending().is_none()
    }

    /// The first gate still closed, if any.
    pub fn pending(&self) -> Option<&'static str> {
        self.state
            .borrow()
            .iter()
            .find(|(_, open)| !open)
            .map(|(name, _)| *name)
    }

    /// Waits until every gate is open.
    pub async fn wait(&self) {
        let mut receiver = self.state.subscribe();
        // The sender lives as long as `self`, so the channel cannot close while we wait.
        let _ = receiver
            .wait_for(|gates| gates.iter().all(|(_, open)| *open))
            .await;
    }
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness::new()
    }
}

impl ReadyGate {
    /// Opens the gate (idempotent).
    pub fn set_ready(&self) {
        self.state.send_modify(|gates| {
            for (name, open) in gates.iter_mut() {
                if *name == self.name {
                    *open = true;
                }
            }
        });
    }

    /// The gate's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}
