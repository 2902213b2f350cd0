//! Karmada's validation of policy specs, as its admission webhook applies it to PropagationPolicies,
//! ClusterPropagationPolicies, OverridePolicies, ClusterOverridePolicies, ClusterTaintPolicies and ResourceInterpreterWebhookConfigurations: the rules,
//! field paths and messages of Karmada's `ValidatePropagationSpec`, `ValidateOverrideSpec` and its taint policy
//! checks.
//!
//! Guarantees: errors come in Karmada's order; a structure shown as the bad value is written in the API types'
//! field order, as Go writes its structs.

use std::collections::HashSet;

use flotilla_api::policy::v1alpha1::{
    ApplicationFailoverBehavior, ClusterAffinity, ClusterAffinityTerm, ClusterTaintPolicySpec,
    FailoverBehavior, FieldSelector, OverrideSpec, OverriderOperator, Overriders, PatchOperation,
    Placement, PreemptionBehavior, PropagationSpec, PurgeMode, ReplicaDivisionPreference,
    ReplicaSchedulingStrategy, ReplicaSchedulingType, ResourceSelector, RuleWithCluster,
    SpreadConstraint, SpreadFieldValue, StatePreservation, Suspension, WorkloadAffinity,
};
use flotilla_apimachinery::field::{FieldError, join_path};
use flotilla_apimachinery::meta::{validate_annotations, validate_label_name, validate_labels};
use flotilla_apimachinery::validation::is_qualified_name;
use k8s_openapi::api::core::v1::Toleration;
use serde_json::Value;

mod bindings;
mod interpreter_webhooks;

pub use bindings::{validate_binding_annotations, validate_components};
pub use interpreter_webhooks::validate_interpreter_webhook_configuration;

/// What a JSON pointer that does not start with `/` is told (the pointer library's two joined errors).
const POINTER_ERROR: &str = "JSON pointer must be empty or start with a \"/\"\nJSON pointer error";

/// The errors of a PropagationPolicy's or ClusterPropagationPolicy's spec; `namespace` is the policy's (empty for
/// a ClusterPropagationPolicy, whose selectors may name any namespace).
pub fn validate_propagation_spec(spec: &PropagationSpec, namespace: &str) -> Vec<FieldError> {
    let mut errors = validate_placement(&spec.placement, "spec.placement");
    if spec
        .failover
        .as_ref()
        .is_some_and(|f| f.application.is_some())
        && !spec.propagate_deps
    {
        errors.push(FieldError::invalid(
            "spec.propagateDeps",
            spec.propagate_deps,
            "application failover is set, propagateDeps must be true",
        ));
    }
    if let Some(failover) = &spec.failover {
        errors.extend(validate_failover(failover, "spec.failover"));
    }
    errors.extend(validate_selector_namespaces(
        &spec.resource_selectors,
        namespace,
        "spec.resourceSelectors",
    ));
    if spec.preemption == PreemptionBehavior::Always {
        for (i, selector) in spec.resource_selectors.iter().enumerate() {
            if selector.name.is_empty() {
                errors.push(FieldError::invalid(
                    format!("spec.resourceSelectors[{i}].name"),
                    "",
                    "name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption",
                ));
            }
        }
    }
    if let Some(suspension) = &spec.suspension {
        errors.extend(validate_suspension(suspension, "spec.suspension"));
    }
    errors
}

/// Selectors of a namespaced policy must stay in its namespace.
fn validate_selector_namespaces(
    selectors: &[ResourceSelector],
    namespace: &str,
    path: &str,
) -> Vec<FieldError> {
    if namespace.is_empty() {
        return Vec::new();
    }
    selectors
        .iter()
        .enumerate()
        .filter(|(_, s)| s.namespace != namespace)
        .map(|(i, s)| {
            FieldError::invalid(
                format!("{path}[{i}].namespace"),
                s.namespace.as_str(),
                "namespace of resource selector must be the same as the namespace of the policy",
            )
        })
        .collect()
}

fn validate_suspension(suspension: &Suspension, path: &str) -> Vec<FieldError> {
    let dispatching = suspension.dispatching == Some(true);
    let on_clusters = suspension
        .dispatching_on_clusters
        .as_ref()
        .is_some_and(|c| !c.cluster_names.is_empty());
    if dispatching && on_clusters {
        // Karmada names the field twice.
        return vec![FieldError::invalid_struct(
            join_path(path, "suspension"),
            suspension,
            "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames",
        )];
    }
    Vec::new()
}

/// The errors of a placement at `path`.
pub fn validate_placement(placement: &Placement, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if placement.cluster_affinity.is_some() && !placement.cluster_affinities.is_empty() {
        errors.push(FieldError::invalid_struct(
            path,
            placement,
            "clusterAffinities cannot co-exist with clusterAffinity",
        ));
    }
    let overflow_allowed = overflow_scheduling_allowed(placement.replica_scheduling.as_ref());
    for (i, term) in placement.cluster_affinities.iter().enumerate() {
        if !term.overflow_affinities.is_empty() && !overflow_allowed {
            errors.push(FieldError::invalid_struct(
                format!("{path}.clusterAffinities[{i}].overflowAffinities"),
                &term.overflow_affinities,
                "overflowAffinities can only be used together with dynamic weight or aggregated scheduling",
            ));
        }
    }
    if let Some(affinity) = &placement.cluster_affinity {
        errors.extend(validate_cluster_affinity(
            affinity,
            &join_path(path, "clusterAffinity"),
        ));
    }
    errors.extend(validate_cluster_affinities(
        &placement.cluster_affinities,
        &join_path(path, "clusterAffinities"),
    ));
    errors.extend(validate_spread_constraints(
        &placement.spread_constraints,
        &join_path(path, "spreadConstraints"),
    ));
    if let Some(workload_affinity) = &placement.workload_affinity {
        errors.extend(validate_workload_affinity(
            workload_affinity,
            &join_path(path, "workloadAffinity"),
        ));
    }
    errors.extend(validate_cluster_tolerations(
        &placement.cluster_tolerations,
        &join_path(path, "clusterTolerations"),
    ));
    errors
}

/// Overflow tiers need replicas divided by what clusters can hold: aggregated, or weighted by a dynamic
/// weight.
fn overflow_scheduling_allowed(strategy: Option<&ReplicaSchedulingStrategy>) -> bool {
    let Some(strategy) = strategy else {
        return false;
    };
    if strategy.replica_scheduling_type != ReplicaSchedulingType::Divided {
        return false;
    }
    match &strategy.replica_division_preference {
        Some(ReplicaDivisionPreference::Aggregated) => true,
        // Karmada asks only that a dynamic weight be set, whatever its value.
        Some(ReplicaDivisionPreference::Weighted) => strategy
            .weight_preference
            .as_ref()
            .is_some_and(|w| w.dynamic_weight.is_some()),
        None | Some(ReplicaDivisionPreference::Other(_)) => false,
    }
}

fn validate_cluster_tolerations(tolerations: &[Toleration], path: &str) -> Vec<FieldError> {
    tolerations
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let operator = t.operator.as_deref()?;
            matches!(operator, "Lt" | "Gt").then(|| {
                FieldError::not_supported(
                    format!("{path}[{i}].operator"),
                    operator,
                    &["", "Exists", "Equal"],
                )
            })
        })
        .collect()
}

fn validate_workload_affinity(affinity: &WorkloadAffinity, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let keys = [
        (
            "affinity",
            affinity.affinity.as_ref().map(|a| &a.group_by_label_key),
        ),
        (
            "antiAffinity",
            affinity
                .anti_affinity
                .as_ref()
                .map(|a| &a.group_by_label_key),
        ),
    ];
    for (term, key) in keys {
        if let Some(key) = key {
            let field = format!("{path}.{term}.groupByLabelKey");
            errors.extend(
                is_qualified_name(key)
                    .into_iter()
                    .map(|m| FieldError::invalid(field.as_str(), key.as_str(), m)),
            );
        }
    }
    if let (Some(a), Some(anti)) = (&affinity.affinity, &affinity.anti_affinity)
        && a.group_by_label_key == anti.group_by_label_key
    {
        errors.push(FieldError::invalid_struct(
            path,
            affinity,
            "affinity and antiAffinity must not use the same groupByLabelKey",
        ));
    }
    errors
}

/// The errors of one cluster affinity at `path`: its field selector's keys and operators.
pub fn validate_cluster_affinity(affinity: &ClusterAffinity, path: &str) -> Vec<FieldError> {
    match &affinity.field_selector {
        Some(selector) => match field_selector_error(selector) {
            Some(detail) => vec![FieldError::invalid_struct(
                join_path(path, "fieldSelector"),
                selector,
                detail,
            )],
            None => Vec::new(),
        },
        None => Vec::new(),
    }
}

/// The first unsupported key or operator of a cluster field selector.
fn field_selector_error(selector: &FieldSelector) -> Option<String> {
    for requirement in &selector.match_expressions {
        if !matches!(requirement.key.as_str(), "provider" | "region" | "zone") {
            return Some(format!(
                "unsupported key {}, must be provider, region, or zone",
                go_quoted(&requirement.key)
            ));
        }
        if !matches!(requirement.operator.as_str(), "In" | "NotIn") {
            return Some(format!(
                "unsupported operator {}, must be In or NotIn",
                go_quoted(&requirement.operator)
            ));
        }
    }
    None
}

fn go_quoted(text: &str) -> String {
    flotilla_apimachinery::validation::go_quote(text)
}

fn validate_cluster_affinities(terms: &[ClusterAffinityTerm], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, term) in terms.iter().enumerate() {
        let term_path = format!("{path}[{i}]");
        errors.extend(
            is_qualified_name(&term.affinity_name)
                .into_iter()
                .map(|m| FieldError::invalid(term_path.as_str(), term.affinity_name.as_str(), m)),
        );
        if !names.insert(term.affinity_name.as_str()) {
            errors.push(FieldError::invalid_struct(
                path,
                &terms,
                "each affinity term in a policy must have a unique name",
            ));
        }
        errors.extend(validate_cluster_affinity(
            &term.cluster_affinity,
            &term_path,
        ));
        errors.extend(validate_overflow_affinities(term, &term_path));
    }
    errors
}

fn validate_overflow_affinities(term: &ClusterAffinityTerm, path: &str) -> Vec<FieldError> {
    if term.overflow_affinities.is_empty() {
        return Vec::new();
    }
    let mut errors = Vec::new();
    let overflow_path = join_path(path, "overflowAffinities");
    if is_empty_affinity(&term.cluster_affinity) {
        errors.push(FieldError::invalid_struct(
            overflow_path.as_str(),
            &term.overflow_affinities,
            "overflowAffinities can only be used together with the inline ClusterAffinity",
        ));
    }
    let mut names = HashSet::from([term.affinity_name.as_str()]);
    for (i, tier) in term.overflow_affinities.iter().enumerate() {
        let tier_path = format!("{overflow_path}[{i}]");
        let name_path = format!("{tier_path}.affinityName");
        let name = tier.affinity_name.as_str();
        errors.extend(
            is_qualified_name(name)
                .into_iter()
                .map(|m| FieldError::invalid(name_path.as_str(), name, m)),
        );
        if !names.insert(name) {
            errors.push(FieldError::invalid(
                name_path.as_str(),
                name,
                "overflow affinity name must be unique and must not duplicate the primary group's affinityName",
            ));
        }
        errors.extend(validate_cluster_affinity(
            &tier.cluster_affinity,
            &tier_path,
        ));
    }
    errors
}

fn is_empty_affinity(affinity: &ClusterAffinity) -> bool {
    affinity.label_selector.is_none()
        && affinity.field_selector.is_none()
        && affinity.cluster_names.is_empty()
        && affinity.exclude_clusters.is_empty()
}

fn validate_spread_constraints(constraints: &[SpreadConstraint], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // Each field seen, and whether its repetition was already reported.
    let mut seen: Vec<(&SpreadFieldValue, bool)> = Vec::new();
    for (i, constraint) in constraints.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let mut refuse = |detail: &str| {
            errors.push(FieldError::invalid_struct(at.as_str(), constraint, detail));
        };
        if constraint.spread_by_field.is_some() && !constraint.spread_by_label.is_empty() {
            refuse("spreadByLabel should not co-exist with spreadByField");
        }
        if constraint.min_groups < 0 {
            refuse("minGroups lower than 0 is not allowed");
        }
        if constraint.max_groups < 0 {
            refuse("maxGroups lower than 0 is not allowed");
        }
        if constraint.max_groups > 0 && constraint.max_groups < constraint.min_groups {
            refuse("maxGroups lower than minGroups is not allowed");
        }
        if let Some(field) = &constraint.spread_by_field {
            match seen.iter_mut().find(|(f, _)| *f == field) {
                Some((_, reported)) if !*reported => {
                    *reported = true;
                    errors.push(FieldError::invalid_struct(
                        path,
                        &constraints,
                        format!("multiple {field} spread constraints are not allowed"),
                    ));
                }
                Some(_) => {}
                None => seen.push((field, false)),
            }
        }
    }
    if !seen.is_empty() && !seen.iter().any(|(f, _)| **f == SpreadFieldValue::Cluster) {
        errors.push(FieldError::invalid_struct(
            path,
            &constraints,
            "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
        ));
    }
    errors
}

fn validate_failover(failover: &FailoverBehavior, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(application) = &failover.application {
        errors.extend(validate_application_failover(
            application,
            &join_path(path, "application"),
        ));
    }
    if let Some(preservation) = failover
        .cluster
        .as_ref()
        .and_then(|c| c.state_preservation.as_ref())
    {
        errors.extend(validate_state_preservation(
            preservation,
            &join_path(path, "cluster.statePreservation"),
        ));
    }
    errors
}

fn validate_application_failover(
    behavior: &ApplicationFailoverBehavior,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(seconds) = behavior.decision_conditions.toleration_seconds
        && seconds < 0
    {
        errors.push(FieldError::invalid(
            join_path(path, "decisionConditions.tolerationSeconds"),
            seconds,
            "must be greater than or equal to 0",
        ));
    }
    let grace_path = join_path(path, "gracePeriodSeconds");
    let graceful = behavior.purge_mode == PurgeMode::Gracefully;
    match behavior.grace_period_seconds {
        Some(seconds) if !graceful => errors.push(FieldError::invalid(
            grace_path.as_str(),
            seconds,
            "only takes effect when purgeMode is gracefully",
        )),
        None if graceful => errors.push(FieldError::invalid(
            grace_path.as_str(),
            Value::Null,
            "should not be empty when purgeMode is gracefully",
        )),
        _ => {}
    }
    if let Some(seconds) = behavior.grace_period_seconds
        && seconds <= 0
    {
        errors.push(FieldError::invalid(
            grace_path,
            seconds,
            "must be greater than 0",
        ));
    }
    if let Some(preservation) = &behavior.state_preservation {
        errors.extend(validate_state_preservation(
            preservation,
            &join_path(path, "statePreservation"),
        ));
    }
    errors
}

fn validate_state_preservation(preservation: &StatePreservation, path: &str) -> Vec<FieldError> {
    preservation
        .rules
        .iter()
        .enumerate()
        .flat_map(|(i, rule)| {
            validate_label_name(
                &rule.alias_label_name,
                &format!("{path}.rules[{i}].aliasLabelName"),
            )
        })
        .collect()
}

/// The errors of an OverridePolicy's or ClusterOverridePolicy's spec; `namespace` is the policy's (empty for a
/// ClusterOverridePolicy).
pub fn validate_override_spec(spec: &OverrideSpec, namespace: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(target) = &spec.target_cluster {
        errors.extend(validate_cluster_affinity(target, "spec.targetCluster"));
        if !spec.override_rules.is_empty() {
            errors.push(FieldError::invalid_struct(
                "spec.targetCluster",
                target,
                "overrideRules and targetCluster can't co-exist",
            ));
        }
    }
    if !is_empty_overriders(&spec.overriders) && !spec.override_rules.is_empty() {
        errors.push(FieldError::invalid_struct(
            "spec.overriders",
            &spec.overriders,
            "overrideRules and overriders can't co-exist",
        ));
    }
    for (i, rule) in spec.override_rules.iter().enumerate() {
        errors.extend(validate_override_rule(
            rule,
            &format!("spec.overrideRules[{i}]"),
        ));
    }
    errors.extend(validate_selector_namespaces(
        &spec.resource_selectors,
        namespace,
        "spec.resourceSelectors",
    ));
    errors
}

/// Whether the deprecated single-rule overriders are unset (field overriders do not count, as in Karmada).
fn is_empty_overriders(overriders: &Overriders) -> bool {
    overriders.plaintext.is_empty()
        && overriders.image_overrider.is_empty()
        && overriders.command_overrider.is_empty()
        && overriders.args_overrider.is_empty()
        && overriders.labels_overrider.is_empty()
        && overriders.annotations_overrider.is_empty()
}

fn validate_override_rule(rule: &RuleWithCluster, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let overriders = &rule.overriders;
    for (i, annotations) in overriders.annotations_overrider.iter().enumerate() {
        errors.extend(validate_annotations(
            annotations
                .value
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
            &format!("{path}.overriders.annotationsOverrider[{i}].value"),
        ));
    }
    for (i, labels) in overriders.labels_overrider.iter().enumerate() {
        errors.extend(validate_labels(
            labels.value.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            &format!("{path}.overriders.labelsOverrider[{i}].value"),
        ));
    }
    for (i, image) in overriders.image_overrider.iter().enumerate() {
        if let Some(predicate) = &image.predicate
            && !is_pointer(&predicate.path)
        {
            errors.push(FieldError::invalid(
                format!("{path}.overriders.imageOverrider[{i}].predicate.path"),
                predicate.path.as_str(),
                POINTER_ERROR,
            ));
        }
    }
    for (i, overrider) in overriders.field_overrider.iter().enumerate() {
        let at = format!("{path}.overriders.fieldOverrider[{i}]");
        if !overrider.yaml.is_empty() && !overrider.json.is_empty() {
            errors.push(FieldError::invalid_struct(
                at.as_str(),
                overrider,
                "FieldOverrider has both YAML and JSON set. Only one is allowed",
            ));
        }
        if overrider.yaml.is_empty() && overrider.json.is_empty() {
            errors.push(FieldError::required(
                at.as_str(),
                "FieldOverrider must have either JSON or YAML set",
            ));
        }
        if !is_pointer(&overrider.field_path) {
            errors.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                overrider.field_path.as_str(),
                POINTER_ERROR,
            ));
        }
        errors.extend(validate_patch_operations(
            &overrider.json,
            &format!("{at}.json"),
        ));
        errors.extend(validate_patch_operations(
            &overrider.yaml,
            &format!("{at}.yaml"),
        ));
    }
    if let Some(target) = &rule.target_cluster {
        errors.extend(validate_cluster_affinity(
            target,
            &join_path(path, "targetCluster"),
        ));
    }
    errors
}

/// Whether `path` parses as a JSON pointer: empty, or starting with `/`.
fn is_pointer(path: &str) -> bool {
    path.is_empty() || path.starts_with('/')
}

fn validate_patch_operations(operations: &[PatchOperation], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, operation) in operations.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if !is_pointer(&operation.sub_path) {
            errors.push(FieldError::invalid(
                format!("{at}.subPath"),
                operation.sub_path.as_str(),
                POINTER_ERROR,
            ));
        }
        let value_path = format!("{at}.value");
        // An absent value is shown as JSON's null.
        let value = operation.value.clone().unwrap_or(Value::Null);
        match (&operation.operator, operation.value.is_some()) {
            (OverriderOperator::Add | OverriderOperator::Replace, false) => {
                errors.push(FieldError::invalid_struct(
                    value_path,
                    &value,
                    "value is required for add or replace operation",
                ));
            }
            (OverriderOperator::Remove, true) => errors.push(FieldError::invalid_struct(
                value_path,
                &value,
                "value is not allowed for remove operation",
            )),
            _ => {}
        }
    }
    errors
}

/// The errors of a ClusterTaintPolicy's taints: a NoExecute taint unless `allow_no_execute` (an administrator's
/// choice: such a taint evicts workloads), and a key and effect repeated by a later taint.
pub fn validate_cluster_taint_policy_spec(
    spec: &ClusterTaintPolicySpec,
    allow_no_execute: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, taint) in spec.taints.iter().enumerate() {
        let at = format!("spec.taints[{i}]");
        if !allow_no_execute && taint.effect == "NoExecute" {
            errors.push(FieldError::forbidden(
                at.as_str(),
                "Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by administrators through command-line flags",
            ));
        }
        if spec.taints[i + 1..]
            .iter()
            .any(|t| t.key == taint.key && t.effect == taint.effect)
        {
            errors.push(FieldError::duplicate(
                at,
                format!(
                    "Duplicate taint with the same key({}) and effect({}) is not allowed",
                    taint.key, taint.effect
                ),
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests;
