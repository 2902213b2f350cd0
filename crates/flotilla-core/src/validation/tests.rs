use flotilla_api::policy::v1alpha1::{OverrideSpec, PropagationSpec};
use serde_json::json;

use super::*;

fn propagation(spec: serde_json::Value) -> PropagationSpec {
    serde_json::from_value(spec).expect("a PropagationSpec")
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn a_valid_spec_has_no_errors() {
    let spec = propagation(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "web", "name": "nginx"}],
        "placement": {
            "clusterAffinities": [{"affinityName": "main", "clusterNames": ["member1"],
                "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["member2"]}]}],
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}],
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
        }
    }));
    assert_eq!(
        messages(&validate_propagation_spec(&spec, "web")),
        Vec::<String>::new()
    );
}

#[test]
fn spread_constraints_are_shown_whole() {
    let spec = propagation(json!({
        "resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}],
        "placement": {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 2}]}
    }));
    assert_eq!(
        messages(&validate_propagation_spec(&spec, "")),
        [
            "spec.placement.spreadConstraints[0]: Invalid value: {\"spreadByField\":\"cluster\",\"maxGroups\":1,\"minGroups\":2}: maxGroups lower than minGroups is not allowed"
        ]
    );
}

#[test]
fn selectors_stay_in_the_policy_namespace_and_terms_are_named_once() {
    let spec = propagation(json!({
        "resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "other"}],
        "placement": {"clusterAffinities": [
            {"affinityName": "a", "clusterNames": ["m1"]},
            {"affinityName": "a", "clusterNames": ["m2"]}
        ]}
    }));
    let found = messages(&validate_propagation_spec(&spec, "web"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with(": each affinity term in a policy must have a unique name"));
    assert_eq!(
        found[1],
        "spec.resourceSelectors[0].namespace: Invalid value: \"other\": namespace of resource selector must be the same as the namespace of the policy"
    );
}

#[test]
fn override_rules_exclude_the_single_rule_form_and_field_overriders_need_a_document() {
    let spec: OverrideSpec = serde_json::from_value(json!({
        "targetCluster": {"clusterNames": ["m1"]},
        "overrideRules": [{"overriders": {
            "fieldOverrider": [{"fieldPath": "data/config"}],
            "labelsOverrider": [{"operator": "add", "value": {"bad key!": "v"}}]
        }}]
    }))
    .expect("an OverrideSpec");
    let found = messages(&validate_override_spec(&spec, "web"));
    assert_eq!(
        found,
        [
            "spec.targetCluster: Invalid value: {\"clusterNames\":[\"m1\"]}: overrideRules and targetCluster can't co-exist".to_owned(),
            "spec.overrideRules[0].overriders.labelsOverrider[0].value: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_owned(),
            "spec.overrideRules[0].overriders.fieldOverrider[0]: Required value: FieldOverrider must have either JSON or YAML set".to_owned(),
            format!("spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath: Invalid value: \"data/config\": {POINTER_ERROR}"),
        ]
    );
}
