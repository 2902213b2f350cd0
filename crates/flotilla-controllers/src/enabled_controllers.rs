//! Karmada's `--controllers`: which of karmada-controller-manager's controllers run.
//! Entries are `*` (every controller on by default), `name` (enable) and `-name` (disable); the first entry
//! naming a controller decides it, and without one a controller runs only under `*` and when it is on by
//! default. Karmada checks no names, so neither does this.
//!
//! Flotilla always runs the controllers it has that Karmada runs by default, so only Karmada's controllers off
//! by default, `agentcsrapproving`, `applicationFailover`, `unifiedAuth` and `workloadRebalancer` are switched
//! here;
//! [`ControllerSelection::without_effect`] names the other settings, which the binary reports instead of
//! silently ignoring them.

use std::fmt;

/// `--controllers` name of the agent CSR approving controller.
pub(crate) const AGENT_CSR_APPROVING: &str = "agentcsrapproving";
/// `--controllers` name of the application failover controllers (one per binding kind).
pub(crate) const APPLICATION_FAILOVER: &str = "applicationFailover";
/// `--controllers` name of the deployment replicas syncer.
pub(crate) const DEPLOYMENT_REPLICAS_SYNCER: &str = "deploymentReplicasSyncer";
/// `--controllers` name of the HPA scale-target marker.
pub(crate) const HPA_SCALE_TARGET_MARKER: &str = "hpaScaleTargetMarker";
/// `--controllers` name of the unified-auth controller.
pub(crate) const UNIFIED_AUTH: &str = "unifiedAuth";
/// `--controllers` name of the workload rebalancer controller.
pub(crate) const WORKLOAD_REBALANCER: &str = "workloadRebalancer";

/// karmada-agent's `--controllers` name of its client certificate rotation.
pub const CERT_ROTATION: &str = "certRotation";

/// karmada-agent's controllers that are off unless its `--controllers` names them.
const AGENT_DISABLED_BY_DEFAULT: &[&str] = &[CERT_ROTATION];

/// Karmada's controllers that are off unless `--controllers` names them.
const DISABLED_BY_DEFAULT: &[&str] = &[HPA_SCALE_TARGET_MARKER, DEPLOYMENT_REPLICAS_SYNCER];

/// The controllers Flotilla lets `--controllers` switch: its off-by-default ones, `agentcsrapproving`,
/// `applicationFailover`, `unifiedAuth` and `workloadRebalancer`.
const SWITCHABLE: &[&str] = &[
    HPA_SCALE_TARGET_MARKER,
    DEPLOYMENT_REPLICAS_SYNCER,
    AGENT_CSR_APPROVING,
    APPLICATION_FAILOVER,
    UNIFIED_AUTH,
    WORKLOAD_REBALANCER,
];

/// A `--controllers` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerSelection {
    entries: Vec<String>,
}

impl Default for ControllerSelection {
    /// Karmada's default: `*`.
    fn default() -> Self {
        ControllerSelection {
            entries: vec!["*".to_owned()],
        }
    }
}

impl fmt::Display for ControllerSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.entries.join(","))
    }
}

impl ControllerSelection {
    /// Reads a comma-separated `--controllers` value (empty entries are skipped).
    ///
    /// # Errors
    /// None: Karmada accepts any name.
    pub fn parse(text: &str) -> Result<Self, std::convert::Infallible> {
        Ok(ControllerSelection {
            entries: text
                .split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_owned)
                .collect(),
        })
    }

    /// What Karmada's own deployment (`artifacts/deploy/karmada-controller-manager.yaml`) runs:
    /// `*,hpaScaleTargetMarker,deploymentReplicasSyncer`, limited to what Flotilla has.
    pub fn karmada_deployment() -> Self {
        let mut entries = vec!["*".to_owned()];
        entries.extend(
            SWITCHABLE
                .iter()
                .filter(|s| DISABLED_BY_DEFAULT.contains(s))
                .map(|&s| s.to_owned()),
        );
        ControllerSelection { entries }
    }

    /// Whether controller `name` runs (Karmada's `IsControllerEnabled`).
    pub fn enabled(&self, name: &str) -> bool {
        self.selects(name, DISABLED_BY_DEFAULT)
    }

    /// Whether the agent's controller `name` runs, as karmada-agent reads its own `--controllers`.
    pub fn agent_enabled(&self, name: &str) -> bool {
        self.selects(name, AGENT_DISABLED_BY_DEFAULT)
    }

    fn selects(&self, name: &str, disabled_by_default: &[&str]) -> bool {
        let mut star = false;
        for entry in &self.entries {
            if entry == name {
                return true;
            }
            if entry.strip_prefix('-') == Some(name) {
                return false;
            }
            star |= entry == "*";
        }
        star && !disabled_by_default.contains(&name)
    }

    /// Entries that switch a controller away from its default that Flotilla cannot switch: a controller
    /// Flotilla does not have, or one it always runs (also a selection without `*`, which in Karmada runs
    /// nothing unnamed).
    pub fn without_effect(&self) -> Vec<String> {
        let no_star = (!self.entries.iter().any(|e| e == "*")).then(|| "(no *)".to_owned());
        self.entries
            .iter()
            .filter(|e| *e != "*")
            .filter(|e| {
                let name = e.strip_prefix('-').unwrap_or(e);
                !SWITCHABLE.contains(&name)
                    && self.enabled(name) != ControllerSelection::default().enabled(name)
            })
            .cloned()
            .chain(no_star)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYNCER: &str = "deploymentReplicasSyncer";

    #[test]
    fn the_agent_rotates_certificates_only_when_asked() {
        let parse = |s| ControllerSelection::parse(s).unwrap_or_default();
        assert!(!parse("*").agent_enabled(CERT_ROTATION));
        assert!(parse("*,certRotation").agent_enabled(CERT_ROTATION));
        assert!(!parse("-certRotation,certRotation").agent_enabled(CERT_ROTATION));
    }

    #[test]
    fn star_runs_only_the_default_controllers() {
        let default = ControllerSelection::default();
        assert!(default.enabled("binding"));
        assert!(!default.enabled(SYNCER));
        assert!(default.enabled("applicationFailover"));
        let off = ControllerSelection::parse("*,-applicationFailover").unwrap_or_default();
        assert!(!off.enabled("applicationFailover"));
        assert!(off.without_effect().is_empty());
        assert!(default.without_effect().is_empty());
        // Karmada runs its unified-auth controller by default, and `-unifiedAuth` stops it.
        assert!(default.enabled("unifiedAuth"));
        let off = ControllerSelection::parse("*,-unifiedAuth").unwrap_or_default();
        assert!(!off.enabled("unifiedAuth"));
        assert!(off.without_effect().is_empty());
        // Likewise the agent CSR approver.
        assert!(default.enabled("agentcsrapproving"));
        let off = ControllerSelection::parse("*,-agentcsrapproving").unwrap_or_default();
        assert!(!off.enabled("agentcsrapproving"));
        assert!(off.without_effect().is_empty());
        // Likewise the workload rebalancer.
        assert!(default.enabled("workloadRebalancer"));
        let off = ControllerSelection::parse("*,-workloadRebalancer").unwrap_or_default();
        assert!(!off.enabled("workloadRebalancer"));
        assert!(off.without_effect().is_empty());
    }

    #[test]
    fn first_naming_entry_decides() {
        let on = ControllerSelection::parse("*,deploymentReplicasSyncer").unwrap_or_default();
        assert!(on.enabled(SYNCER));
        assert!(on.without_effect().is_empty());
        let off =
            ControllerSelection::parse("-deploymentReplicasSyncer,deploymentReplicasSyncer,*")
                .unwrap_or_default();
        assert!(!off.enabled(SYNCER));
        // Without `*`, only what is named runs.
        let only = ControllerSelection::parse("deploymentReplicasSyncer").unwrap_or_default();
        assert!(only.enabled(SYNCER));
        assert!(!only.enabled("binding"));
    }

    #[test]
    fn settings_flotilla_cannot_honour_are_named() {
        let selection = ControllerSelection::parse("*,hpaScaleTargetMarker,-binding,cluster")
            .unwrap_or_default();
        assert_eq!(selection.without_effect(), ["-binding"]);
        assert!(
            ControllerSelection::karmada_deployment().enabled(SYNCER),
            "Karmada's deployment runs the syncer"
        );
        assert_eq!(
            ControllerSelection::karmada_deployment().to_string(),
            "*,hpaScaleTargetMarker,deploymentReplicasSyncer"
        );
    }
}
