//! Karmada's feature gates, by Karmada's names and with Karmada's defaults, parsed from
//! `--feature-gates` as Kubernetes components parse it (`A=true,B=false`, plus `AllAlpha` and `AllBeta`).
//!
//! Every gate Karmada knows is accepted, so a flag copied from a Karmada deployment works unchanged. Gates whose
//! feature Flotilla does not have yet are named by [`FeatureGates::without_effect`], so the binary can say so
//! instead of silently ignoring them.

use std::collections::BTreeMap;
use std::fmt;

/// A feature gate's maturity, which `AllAlpha` and `AllBeta` select by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Alpha,
    Beta,
}

/// The gates Flotilla consults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// `Failover`: the ClusterTaintPolicy controller and the taint manager's NoExecute eviction run.
    Failover,
    /// `GracefulEviction`: application failover may evict with `purgeMode: Gracefully` (the graceful eviction
    /// controller itself always runs, as in Karmada).
    GracefulEviction,
    /// `StatefulFailoverInjection`: application failover records `statePreservation` results in its eviction
    /// tasks and the binding controller injects them as labels into the copy on the new cluster.
    StatefulFailoverInjection,
    /// `PropagateDeps`: the dependencies distributor runs.
    PropagateDeps,
    /// `CustomizedClusterResourceModeling`: a Cluster without resource models gets the default ones.
    CustomizedClusterResourceModeling,
    /// `PropagationPolicyPreemption`: a policy with `spec.preemption: Always` takes templates over from policies
    /// of lower priority.
    PropagationPolicyPreemption,
    /// `WorkloadAffinity`: bindings carry their `placement.workloadAffinity` groups and the scheduler keeps a
    /// group's workloads together (affinity) or apart (anti-affinity).
    WorkloadAffinity,
    /// `MultiplePodTemplatesScheduling`: bindings carry the components GetComponents reports and a workload
    /// held to one cluster is placed where a whole set of its components fits.
    MultiplePodTemplatesScheduling,
    /// `PriorityBasedScheduling`: the detector writes the PriorityClass value a policy's `schedulePriority`
    /// names into its ResourceBindings, and the scheduler's queue orders by it, with backoff and unschedulable
    /// queues; without it the queue is first-in first-out and rate-limited.
    PriorityBasedScheduling,
    /// `ControllerPriorityQueue`: a controller's reconciles of objects its informer's first list brought wait
    /// behind those of objects that changed since, so after a restart changes are handled before the backlog.
    ControllerPriorityQueue,
    /// `ResourceQuotaEstimate`: requirements that InterpretReplica gives without a namespace get the
    /// template's, so a quota-aware estimator could charge them to it. Flotilla runs no scheduler estimator,
    /// and its interpreters do not yet copy the pod template's `priorityClassName` into the requirements as
    /// Karmada's native ones do under the gate, so the namespace is the gate's only effect here.
    ResourceQuotaEstimate,
}

impl Feature {
    /// Karmada's name of the gate.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Failover => "Failover",
            Feature::GracefulEviction => "GracefulEviction",
            Feature::StatefulFailoverInjection => "StatefulFailoverInjection",
            Feature::PropagateDeps => "PropagateDeps",
            Feature::CustomizedClusterResourceModeling => "CustomizedClusterResourceModeling",
            Feature::PropagationPolicyPreemption => "PropagationPolicyPreemption",
            Feature::WorkloadAffinity => "WorkloadAffinity",
            Feature::MultiplePodTemplatesScheduling => "MultiplePodTemplatesScheduling",
            Feature::PriorityBasedScheduling => "PriorityBasedScheduling",
            Feature::ControllerPriorityQueue => "ControllerPriorityQueue",
            Feature::ResourceQuotaEstimate => "ResourceQuotaEstimate",
        }
    }
}

/// One of Karmada's gates: its name, default, stage, and whether Flotilla has the feature it switches.
struct Gate {
    name: &'static str,
    default: bool,
    stage: Stage,
    implemented: bool,
}

const fn gate(name: &'static str, default: bool, stage: Stage, implemented: bool) -> Gate {
    Gate {
        name,
        default,
        stage,
        implemented,
    }
}

/// Karmada's gates as of Karmada v1.19, defaults and stages included. A gate that is not
/// `implemented` is accepted and reported, never silently honoured.
const GATES: &[Gate] = &[
    gate("Failover", false, Stage::Beta, true),
    gate("GracefulEviction", true, Stage::Beta, true),
    gate("PropagateDeps", true, Stage::Beta, true),
    gate("CustomizedClusterResourceModeling", true, Stage::Beta, true),
    gate("PropagationPolicyPreemption", false, Stage::Alpha, true),
    gate("MultiClusterService", false, Stage::Alpha, false),
    gate("ResourceQuotaEstimate", false, Stage::Alpha, true),
    gate("StatefulFailoverInjection", false, Stage::Alpha, true),
    gate("PriorityBasedScheduling", true, Stage::Beta, true),
    gate("FederatedQuotaEnforcement", false, Stage::Alpha, false),
    gate("LoggingAlphaOptions", false, Stage::Alpha, false),
    gate("LoggingBetaOptions", true, Stage::Beta, false),
    gate("ContextualLogging", true, Stage::Beta, false),
    gate("MultiplePodTemplatesScheduling", false, Stage::Alpha, true),
    gate("ControllerPriorityQueue", true, Stage::Beta, true),
    gate("WorkloadAffinity", false, Stage::Alpha, true),
    gate("SchedulingOvercommitProtection", false, Stage::Alpha, false),
];

/// A `--feature-gates` value that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FeatureGateError {
    /// An entry without `=`.
    #[error("missing bool value for {0}")]
    MissingValue(String),
    /// A gate Karmada does not have.
    #[error("unrecognized feature gate: {0}")]
    Unknown(String),
    /// A value Go's `strconv.ParseBool` refuses.
    #[error("invalid value of {gate}={value}, err: {value:?} is not a bool")]
    NotABool {
        /// The gate.
        gate: String,
        /// What was given.
        value: String,
    },
}

/// The state of every gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    enabled: BTreeMap<&'static str, bool>,
}

impl Default for FeatureGates {
    fn default() -> Self {
        FeatureGates {
            enabled: GATES.iter().map(|g| (g.name, g.default)).collect(),
        }
    }
}

impl fmt::Display for FeatureGates {
    /// The gates that differ from Karmada's defaults, as `--feature-gates` would set them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let changed: Vec<String> = GATES
            .iter()
            .filter(|g| self.enabled.get(g.name) != Some(&g.default))
            .map(|g| format!("{}={}", g.name, !g.default))
            .collect();
        f.write_str(&changed.join(","))
    }
}

impl FeatureGates {
    /// What Karmada's own local-up enables (`AllAlpha=true,AllBeta=true`), limited to the gates whose feature
    /// Flotilla has, so that `flotilla up` behaves as Karmada's development setup does.
    pub fn local_up() -> Self {
        let mut gates = FeatureGates::default();
        for gate in GATES.iter().filter(|g| g.implemented) {
            gates.enabled.insert(gate.name, true);
        }
        gates
    }

    /// Karmada's defaults changed by a `--feature-gates` value (see [`FeatureGates::with`]).
    ///
    /// # Errors
    /// As [`FeatureGates::with`].
    pub fn parse(text: &str) -> Result<Self, FeatureGateError> {
        FeatureGates::default().with(text)
    }

    /// These gates changed by a `--feature-gates` value: comma-separated `Name=bool` entries, where `AllAlpha`
    /// and `AllBeta` set every gate of that stage and a gate named on its own wins over them, whatever the
    /// order.
    ///
    /// # Errors
    /// The first entry that names no Karmada gate, has no `=`, or whose value is not a Go bool.
    pub fn with(mut self, text: &str) -> Result<Self, FeatureGateError> {
        let gates = &mut self;
        let mut stages: Vec<(Stage, bool)> = Vec::new();
        let mut named: Vec<(&'static str, bool)> = Vec::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, value) = entry
                .split_once('=')
                .ok_or_else(|| FeatureGateError::MissingValue(entry.to_owned()))?;
            let (name, value) = (name.trim(), value.trim());
            let on = parse_bool(value).ok_or_else(|| FeatureGateError::NotABool {
                gate: name.to_owned(),
                value: value.to_owned(),
            })?;
            match name {
                "AllAlpha" => stages.push((Stage::Alpha, on)),
                "AllBeta" => stages.push((Stage::Beta, on)),
                _ => {
                    let gate = GATES
                        .iter()
                        .find(|g| g.name == name)
                        .ok_or_else(|| FeatureGateError::Unknown(name.to_owned()))?;
                    named.push((gate.name, on));
                }
            }
        }
        for (stage, on) in stages {
            for gate in GATES.iter().filter(|g| g.stage == stage) {
                gates.enabled.insert(gate.name, on);
            }
        }
        gates.enabled.extend(named);
        Ok(self)
    }

    /// Whether `feature` is on.
    pub fn enabled(&self, feature: Feature) -> bool {
        self.enabled.get(feature.name()).copied().unwrap_or(false)
    }

    /// Gates set away from Karmada's default whose feature Flotilla does not have, so the setting has no
    /// effect.
    pub fn without_effect(&self) -> Vec<&'static str> {
        GATES
            .iter()
            .filter(|g| !g.implemented && self.enabled.get(g.name) != Some(&g.default))
            .map(|g| g.name)
            .collect()
    }
}

/// Go's `strconv.ParseBool`.
fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_karmadas() {
        let gates = FeatureGates::default();
        assert!(gates.enabled(Feature::PropagateDeps));
        assert!(gates.enabled(Feature::CustomizedClusterResourceModeling));
        assert!(!gates.enabled(Feature::PropagationPolicyPreemption));
        assert!(gates.enabled(Feature::PriorityBasedScheduling));
        assert!(gates.without_effect().is_empty());
        assert_eq!(gates.to_string(), "");
    }

    #[test]
    fn local_up_enables_only_what_flotilla_has() {
        let gates = FeatureGates::local_up();
        assert!(gates.enabled(Feature::Failover));
        assert!(gates.enabled(Feature::PropagationPolicyPreemption));
        assert!(gates.enabled(Feature::WorkloadAffinity));
        assert!(gates.enabled(Feature::MultiplePodTemplatesScheduling));
        assert!(gates.enabled(Feature::StatefulFailoverInjection));
        assert!(gates.enabled(Feature::GracefulEviction));
        assert!(gates.without_effect().is_empty());
        assert_eq!(
            gates.to_string(),
            "Failover=true,PropagationPolicyPreemption=true,ResourceQuotaEstimate=true,StatefulFailoverInjection=true,MultiplePodTemplatesScheduling=true,WorkloadAffinity=true"
        );
    }

    #[test]
    fn named_gates_win_over_stages_in_any_order() {
        let gates =
            FeatureGates::parse("PropagationPolicyPreemption=false, AllAlpha=true,PropagateDeps=0")
                .unwrap_or_default();
        assert!(!gates.enabled(Feature::PropagationPolicyPreemption));
        assert!(!gates.enabled(Feature::PropagateDeps));
        assert!(gates.enabled(Feature::WorkloadAffinity));
        assert!(gates.without_effect().contains(&"MultiClusterService"));
        assert!(!gates.without_effect().contains(&"WorkloadAffinity"));
        assert!(!gates.without_effect().contains(&"Failover"));
        let gates = FeatureGates::parse("AllAlpha=true,AllBeta=true").unwrap_or_default();
        assert!(gates.enabled(Feature::PropagationPolicyPreemption));
        assert!(gates.enabled(Feature::Failover));
        assert!(!gates.without_effect().contains(&"Failover"));
        assert!(gates.without_effect().contains(&"MultiClusterService"));
        assert!(gates.enabled(Feature::PriorityBasedScheduling));
        let gates = FeatureGates::parse("AllBeta=false").unwrap_or_default();
        assert!(!gates.enabled(Feature::PriorityBasedScheduling));
        assert!(!gates.without_effect().contains(&"PriorityBasedScheduling"));
    }

    #[test]
    fn bad_values_are_refused_with_the_entry() {
        assert_eq!(
            FeatureGates::parse("Preemption=true"),
            Err(FeatureGateError::Unknown("Preemption".into()))
        );
        assert_eq!(
            FeatureGates::parse("PropagateDeps"),
            Err(FeatureGateError::MissingValue("PropagateDeps".into()))
        );
        let err = FeatureGates::parse("PropagateDeps=yes").err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some(r#"invalid value of PropagateDeps=yes, err: "yes" is not a bool"#.to_owned())
        );
    }
}
