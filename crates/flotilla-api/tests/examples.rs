//! Every manifest of the walkthrough (`manifests/examples/`) and of our own fixtures parses into the
//! typed structs and serializes back to the same JSON, once the CRD defaults an API server would add are
//! applied to the input.

// Helpers outside `#[test]` functions fail the test the same way: by panicking with the document's name.
#![allow(clippy::panic)]

use std::path::{Path, PathBuf};

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::config::v1alpha1::{
    ResourceInterpreterCustomization, ResourceInterpreterWebhookConfiguration,
};
use flotilla_api::crds;
use flotilla_api::decode::from_value;
use flotilla_api::policy::v1alpha1::{
    ClusterOverridePolicy, ClusterPropagationPolicy, OverridePolicy, PropagationPolicy,
};
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The walkthrough's manifests, which README.md's commands apply.
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/examples");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn typed_round_trip<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, String> {
    let typed: T = from_value(value).map_err(|e| format!("{e}: {}", e.source))?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// Parses `value` into the Rust type of its kind and serializes it back.
fn round_trip(value: &Value) -> Result<Value, String> {
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let kind = value["kind"].as_str().unwrap_or_default();
    match (api_version, kind) {
        ("policy.karmada.io/v1alpha1", "PropagationPolicy") => {
            typed_round_trip::<PropagationPolicy>(value)
        }
        ("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy") => {
            typed_round_trip::<ClusterPropagationPolicy>(value)
        }
        ("policy.karmada.io/v1alpha1", "OverridePolicy") => {
            typed_round_trip::<OverridePolicy>(value)
        }
        ("policy.karmada.io/v1alpha1", "ClusterOverridePolicy") => {
            typed_round_trip::<ClusterOverridePolicy>(value)
        }
        ("work.karmada.io/v1alpha2", "ResourceBinding") => {
            typed_round_trip::<ResourceBinding>(value)
        }
        ("work.karmada.io/v1alpha2", "ClusterResourceBinding") => {
            typed_round_trip::<ClusterResourceBinding>(value)
        }
        ("work.karmada.io/v1alpha1", "Work") => typed_round_trip::<Work>(value),
        ("cluster.karmada.io/v1alpha1", "Cluster") => typed_round_trip::<Cluster>(value),
        ("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization") => {
            typed_round_trip::<ResourceInterpreterCustomization>(value)
        }
        ("config.karmada.io/v1alpha1", "ResourceInterpreterWebhookConfiguration") => {
            typed_round_trip::<ResourceInterpreterWebhookConfiguration>(value)
        }
        ("apps/v1", "Deployment") => {
            typed_round_trip::<k8s_openapi::api::apps::v1::Deployment>(value)
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => typed_round_trip::<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        >(value),
        // The walkthrough's example custom resource: not a Karmada kind, so it has no type here.
        ("workload.example.io/v1alpha1", "Workload") => {
            typed_round_trip::<kube::api::DynamicObject>(value)
        }
        _ => Err(format!("no typed struct for {api_version} {kind}")),
    }
}

/// Applies the CRD defaults of `value`'s kind, as an API server does before storing it.
fn with_crd_defaults(value: &Value) -> Value {
    let mut value = value.clone();
    let kind = value["kind"].as_str().unwrap_or_default().to_owned();
    if let Some(crd) = crds::all().into_iter().find(|c| c.spec.names.kind == kind) {
        let props = crd.spec.versions[0]
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref());
        let schema = serde_json::to_value(props).expect("schema as JSON");
        apply_defaults(&schema, &mut value);
    }
    value
}

fn apply_defaults(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, sub) in properties {
                    match object.get_mut(name) {
                        Some(child) => apply_defaults(sub, child),
                        None => {
                            if let Some(default) = sub.get("default") {
                                object.insert(name.clone(), default.clone());
                            }
                        }
                    }
                }
            }
            if let Some(extra) = schema.get("additionalProperties") {
                object
                    .values_mut()
                    .for_each(|child| apply_defaults(extra, child));
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                items
                    .iter_mut()
                    .for_each(|child| apply_defaults(item, child));
            }
        }
        _ => {}
    }
}

/// The YAML documents of every `.yaml` file in `dir`, with their file names; fails if there are none.
fn documents(dir: &Path, fill_placeholders: impl Fn(&str) -> String) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{} must exist: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no YAML files in {}", dir.display());
    let mut docs = Vec::new();
    for file in files {
        let text = fill_placeholders(&std::fs::read_to_string(&file).expect("readable"));
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let values: Vec<Value> = flotilla_yaml::from_str_multiple(&text)
            .unwrap_or_else(|e| panic!("{name} is not valid YAML: {e:?}"));
        for (index, value) in values.into_iter().enumerate() {
            docs.push((format!("{name}[{index}]"), value));
        }
    }
    docs
}

fn assert_all_round_trip(docs: &[(String, Value)]) {
    for (name, input) in docs {
        let output = round_trip(input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            output,
            with_crd_defaults(input),
            "{name} did not round-trip"
        );
        // Parsing what an API server stores yields the same object as parsing what the user wrote.
        assert_eq!(
            round_trip(&output).as_ref(),
            Ok(&output),
            "{name}: defaulted form is not stable"
        );
    }
}

fn walkthrough() -> Vec<(String, Value)> {
    // webhook-configuration.yaml leaves the address and CA for the user to fill in, as the README says.
    documents(Path::new(EXAMPLES), |text| {
        text.replace("{{webhook-address}}", "127.0.0.1")
            .replace("{{caBundle}}", "Y2EtYnVuZGxl")
    })
}

#[test]
fn walkthrough_examples_round_trip() {
    let docs = walkthrough();
    let kinds: Vec<&str> = docs
        .iter()
        .filter_map(|(_, v)| v["kind"].as_str())
        .collect();
    for kind in [
        "PropagationPolicy",
        "ClusterPropagationPolicy",
        "ResourceInterpreterCustomization",
    ] {
        assert!(
            kinds.contains(&kind),
            "the walkthrough has a {kind}: {kinds:?}"
        );
    }
    assert_all_round_trip(&docs);
}

#[test]
fn fixtures_round_trip() {
    let docs = documents(Path::new(FIXTURES), str::to_owned);
    let kinds: Vec<&str> = docs
        .iter()
        .filter_map(|(_, v)| v["kind"].as_str())
        .collect();
    for kind in [
        "ClusterPropagationPolicy",
        "OverridePolicy",
        "ClusterOverridePolicy",
        "ResourceBinding",
        "ClusterResourceBinding",
        "Work",
        "Cluster",
    ] {
        assert!(kinds.contains(&kind), "fixtures cover {kind}: {kinds:?}");
    }
    assert_all_round_trip(&docs);
}

#[test]
fn example_policy_gets_the_crd_defaults() {
    let docs = walkthrough();
    let (_, pp) = docs
        .iter()
        .find(|(name, v)| name.starts_with("workload.yaml") && v["kind"] == "PropagationPolicy")
        .expect("workload.yaml has a PropagationPolicy");
    let policy: PropagationPolicy = from_value(pp).expect("valid");
    let out = serde_json::to_value(&policy).expect("serializable");
    assert_eq!(out["spec"]["priority"], 0);
    assert_eq!(out["spec"]["preemption"], "Never");
    assert_eq!(out["spec"]["conflictResolution"], "Abort");
    assert_eq!(out["spec"]["schedulerName"], "default-scheduler");
    let weights = &policy
        .spec
        .placement
        .replica_scheduling
        .expect("set")
        .weight_preference
        .expect("set");
    assert_eq!(weights.static_weight_list.len(), 3);
}

#[test]
fn unknown_kinds_are_not_waved_through() {
    let value =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    assert!(round_trip(&value).is_err());
}
