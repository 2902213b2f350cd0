//! The defaults Karmada's mutating admission webhook applies to policies, as pure
//! functions: Flotilla has no webhook, so the detector applies them when it reads a policy and the scheduler
//! applies them in memory to every placement it reads.
//!
//! Guarantees: every function is idempotent (applying it twice equals applying it once).

use flotilla_api::policy::v1alpha1::{
    FailoverBehavior, Placement, PropagationSpec, PurgeMode, ReplicaDivisionPreference,
    ReplicaSchedulingType, ResourceSelector, SpreadConstraint, SpreadFieldValue,
};

/// The grace period the webhook sets for graceful application failover when none is given.
pub const DEFAULT_GRACE_PERIOD_SECONDS: i32 = 600;

/// The selector group/version and kind that force `propagateDeps` (multi-cluster services).
const SERVICE_IMPORT: (&str, &str) = ("multicluster.x-k8s.io/v1alpha1", "ServiceImport");

/// Spread-constraint defaults: neither field nor label ⇒ `spreadByField: cluster`; `minGroups: 0` ⇒ 1.
pub fn default_spread_constraints(constraints: &mut [SpreadConstraint]) {
    for constraint in constraints {
        if constraint.spread_by_label.is_empty() && constraint.spread_by_field.is_none() {
            constraint.spread_by_field = Some(SpreadFieldValue::Cluster);
        }
        if constraint.min_groups == 0 {
            constraint.min_groups = 1;
        }
    }
}

/// Divided scheduling without a division preference gets `Weighted` (without it the scheduler refuses the
/// placement).
pub fn default_division_preference(placement: &mut Placement) {
    if let Some(strategy) = placement.replica_scheduling.as_mut()
        && strategy.replica_scheduling_type == ReplicaSchedulingType::Divided
        && strategy.replica_division_preference.is_none()
    {
        strategy.replica_division_preference = Some(ReplicaDivisionPreference::Weighted);
    }
}

/// Every placement default: spread constraints and division preference.
pub fn default_placement(placement: &mut Placement) {
    default_spread_constraints(&mut placement.spread_constraints);
    default_division_preference(placement);
}

/// Graceful application failover without a grace period gets 600 seconds.
pub fn default_failover(failover: &mut FailoverBehavior) {
    if let Some(app) = failover.application.as_mut()
        && app.purge_mode == PurgeMode::Gracefully
        && app.grace_period_seconds.is_none()
    {
        app.grace_period_seconds = Some(DEFAULT_GRACE_PERIOD_SECONDS);
    }
}

/// Whether a selector names ServiceImports, which makes the webhook force `propagateDeps`.
fn is_service_import(selector: &ResourceSelector) -> bool {
    (selector.api_version.as_str(), selector.kind.as_str()) == SERVICE_IMPORT
}

/// Every spec default of a PropagationPolicy (`namespace` = the policy's namespace) or a
/// ClusterPropagationPolicy (`namespace` = `None`): empty selector namespaces filled (PP only), placement
/// defaults, `propagateDeps` for ServiceImport selectors, failover grace period. Permanent ids and finalizers
/// are not spec defaults and stay with the caller.
pub fn default_propagation_spec(spec: &mut PropagationSpec, namespace: Option<&str>) {
    if let Some(namespace) = namespace {
        for selector in &mut spec.resource_selectors {
            if selector.namespace.is_empty() {
                selector.namespace = namespace.to_owned();
            }
        }
    }
    default_placement(&mut spec.placement);
    if spec.resource_selectors.iter().any(is_service_import) {
        spec.propagate_deps = true;
    }
    if let Some(failover) = spec.failover.as_mut() {
        default_failover(failover);
    }
}

/// Fills empty selector namespaces of an OverridePolicy with its own namespace (the OP webhook's only
/// default; ClusterOverridePolicies have none).
pub fn default_override_selectors(selectors: &mut [ResourceSelector], namespace: &str) {
    for selector in selectors {
        if selector.namespace.is_empty() {
            selector.namespace = namespace.to_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::policy::v1alpha1::{ApplicationFailoverBehavior, ReplicaSchedulingStrategy};

    use super::*;

    #[test]
    fn divided_gets_weighted_and_duplicated_is_untouched() {
        let mut p = Placement {
            replica_scheduling: Some(ReplicaSchedulingStrategy::default()),
            ..Default::default()
        };
        default_placement(&mut p);
        let s = p.replica_scheduling.as_ref().unwrap();
        assert_eq!(
            s.replica_division_preference,
            Some(ReplicaDivisionPreference::Weighted)
        );

        let mut p = Placement {
            replica_scheduling: Some(ReplicaSchedulingStrategy {
                replica_scheduling_type: ReplicaSchedulingType::Duplicated,
                ..Default::default()
            }),
            ..Default::default()
        };
        default_placement(&mut p);
        assert_eq!(
            p.replica_scheduling.unwrap().replica_division_preference,
            None
        );

        let mut p = Placement::default();
        default_placement(&mut p);
        assert_eq!(
            p,
            Placement::default(),
            "absent replicaScheduling stays absent (Duplicated)"
        );
    }

    #[test]
    fn spread_constraint_defaults() {
        let mut c = vec![
            SpreadConstraint::default(),
            SpreadConstraint {
                spread_by_label: "team".into(),
                min_groups: 2,
                ..Default::default()
            },
            SpreadConstraint {
                spread_by_field: Some(SpreadFieldValue::Region),
                ..Default::default()
            },
        ];
        default_spread_constraints(&mut c);
        assert_eq!(c[0].spread_by_field, Some(SpreadFieldValue::Cluster));
        assert_eq!(c[0].min_groups, 1);
        assert_eq!(c[1].spread_by_field, None);
        assert_eq!(c[1].min_groups, 2);
        assert_eq!(c[2].spread_by_field, Some(SpreadFieldValue::Region));
        assert_eq!(c[2].max_groups, 0, "maxGroups is never defaulted");
    }

    #[test]
    fn propagation_spec_defaults_are_idempotent() {
        let mut spec = PropagationSpec {
            resource_selectors: vec![ResourceSelector {
                api_version: SERVICE_IMPORT.0.into(),
                kind: SERVICE_IMPORT.1.into(),
                ..Default::default()
            }],
            failover: Some(FailoverBehavior {
                application: Some(ApplicationFailoverBehavior::default()),
                cluster: None,
            }),
            ..Default::default()
        };
        default_propagation_spec(&mut spec, Some("ns1"));
        assert_eq!(spec.resource_selectors[0].namespace, "ns1");
        assert!(spec.propagate_deps);
        let app = spec
            .failover
            .as_ref()
            .and_then(|f| f.application.as_ref())
            .unwrap();
        assert_eq!(app.grace_period_seconds, Some(DEFAULT_GRACE_PERIOD_SECONDS));
        let once = spec.clone();
        default_propagation_spec(&mut spec, Some("ns1"));
        assert_eq!(spec, once);

        let mut cpp = PropagationSpec {
            resource_selectors: vec![ResourceSelector::default()],
            ..Default::default()
        };
        default_propagation_spec(&mut cpp, None);
        assert_eq!(
            cpp.resource_selectors[0].namespace, "",
            "CPP selectors keep an empty namespace"
        );
    }
}
