//! karmada-webhook's recorded answers as the judge of ours: every request of `karmada_webhook/corpus.yaml` is
//! decided by the handler Flotilla serves at its path and compared with karmada-webhook's answer in
//! `karmada_webhook/answers.json` (whether it is allowed, the status code and message, and the object the patch
//! makes). A difference fails unless [`ALLOWED`] lists it with its reason.

#![allow(clippy::panic, clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;

use flotilla_controllers::admission::{HANDLERS, Options, Review};
use flotilla_controllers::features::FeatureGates;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use serde::Deserialize;
use serde_json::{Value, json};

const CORPUS: &str = include_str!("karmada_webhook/corpus.yaml");
/// karmada-webhook's `--feature-gates` when the answers were recorded.
const RECORDED_GATES: &str = "MultiplePodTemplatesScheduling=true";
const ANSWERS: &str = include_str!("karmada_webhook/answers.json");

/// Differences that are known, by case and part (`message`, `patch`), each with why it stays.
const ALLOWED: &[(&str, &str, &str)] = &[
    ("validate-rb-create-undecodable", "message", DECODE),
    ("validate-rb-update-old-undecodable", "message", DECODE),
    ("mutate-pp-create-undecodable", "message", DECODE),
    ("mutate-pp-create-priority-wrong-type", "message", DECODE),
    ("validate-pp-create-undecodable", "message", DECODE),
    ("validate-pp-update-old-undecodable", "message", DECODE),
    ("mutate-cpp-create-undecodable", "message", DECODE),
    ("validate-cpp-create-undecodable", "message", DECODE),
    ("mutate-op-create-undecodable", "message", DECODE),
    ("validate-op-create-undecodable", "message", DECODE),
    ("validate-cop-create-undecodable", "message", DECODE),
    ("validate-ctp-create-undecodable", "message", DECODE),
    ("validate-riwc-create-undecodable", "message", DECODE),
    (
        "mutate-rb-create-undecodable",
        "allowed",
        BINDING_LABELS_ONLY,
    ),
    (
        "mutate-rb-create-undecodable",
        "message",
        BINDING_LABELS_ONLY,
    ),
    ("mutate-rb-create-undecodable", "patch", BINDING_LABELS_ONLY),
    (
        "validate-riwc-create-rule-fields-missing",
        "allowed",
        REQUIRED,
    ),
    (
        "validate-riwc-create-rule-fields-missing",
        "message",
        REQUIRED,
    ),
    (
        "validate-riwc-create-context-versions-missing",
        "allowed",
        REQUIRED,
    ),
    (
        "validate-riwc-create-context-versions-missing",
        "message",
        REQUIRED,
    ),
    (
        "mutate-work-create-no-labels-no-manifests",
        "patch",
        "Karmada's typed round trip removes an empty manifest list; Flotilla leaves it",
    ),
    ("mutate-work-create-undecodable", "message", DECODE),
    (
        "mutate-work-create-manifest-without-kind",
        "message",
        "the refused manifest is quoted with its keys sorted (serde_json's map); Go quotes it as it was sent",
    ),
    ("mutate-work-create-job-wrong-type", "allowed", WRONG_TYPE),
    ("mutate-work-create-job-wrong-type", "message", WRONG_TYPE),
    ("mutate-work-create-job-wrong-type", "patch", WRONG_TYPE),
    (
        "validate-pp-create-failover-no-toleration-seconds",
        "allowed",
        PANIC,
    ),
    (
        "validate-pp-create-failover-no-toleration-seconds",
        "message",
        PANIC,
    ),
    (
        "validate-cpp-create-failover-no-toleration-seconds",
        "allowed",
        PANIC,
    ),
    (
        "validate-cpp-create-failover-no-toleration-seconds",
        "message",
        PANIC,
    ),
    (
        "validate-cpp-create-many-errors",
        "message",
        "k8s-openapi writes a Toleration's fields in alphabetical order, Go in declaration order",
    ),
    (
        "validate-op-create-field-overrider-both",
        "message",
        "Karmada writes an absent patch value as null inside the structure it shows; Flotilla's type leaves it out",
    ),
    (
        "mutate-pp-create-unknown-field-dropped",
        "patch",
        "Karmada's typed round trip removes fields its types do not know; an API server prunes them before any webhook sees the object",
    ),
    (
        "mutate-pp-update-defaults-no-label",
        "patch",
        "Karmada's typed round trip removes an empty finalizer list or label map, which an API server never sends",
    ),
    (
        "mutate-cpp-update-defaults-no-label",
        "patch",
        "Karmada's typed round trip removes an empty finalizer list or label map, which an API server never sends",
    ),
    (
        "mutate-op-create-selector-namespace",
        "patch",
        "Karmada's typed round trip adds an empty spec.overriders; Flotilla patches only what it defaults",
    ),
    (
        "mutate-op-create-namespaced-selectors",
        "patch",
        "Karmada's typed round trip adds an empty spec.overriders; Flotilla patches only what it defaults",
    ),
    (
        "mutate-op-create-no-selectors",
        "patch",
        "Karmada's typed round trip adds an empty spec.overriders; Flotilla patches only what it defaults",
    ),
    (
        "mutate-op-update-selector-namespace",
        "patch",
        "Karmada's typed round trip adds an empty spec.overriders; Flotilla patches only what it defaults",
    ),
    (
        "mutate-op-create-unknown-field-dropped",
        "allowed",
        "a rule without overriders (required by the CRD) is refused by Flotilla's decoding; Karmada's typed round trip fills in an empty one",
    ),
    (
        "mutate-op-create-unknown-field-dropped",
        "message",
        "a rule without overriders (required by the CRD) is refused by Flotilla's decoding; Karmada's typed round trip fills in an empty one",
    ),
    (
        "mutate-op-create-unknown-field-dropped",
        "patch",
        "a rule without overriders (required by the CRD) is refused by Flotilla's decoding; Karmada's typed round trip fills in an empty one",
    ),
];

/// Why a Job manifest with a field of the wrong type differs.
const WRONG_TYPE: &str = "Karmada fails (500) to read a Job's parallelism written as a string while pruning the manifest; Flotilla prunes the fields it removes and leaves the rest, so the member's API server refuses the Job when it is applied";

/// Why a configuration without a field the CRD requires differs.
const REQUIRED: &str = "the CRD requires the field, so an API server refuses the object by its schema before validating webhooks run; Flotilla's types refuse it at decoding (400 naming the field)";

/// Why a binding with a spec field of the wrong type differs.
const BINDING_LABELS_ONLY: &str = "Flotilla's binding mutation reads only the labels, so a spec field of the wrong type is left to the API server's schema, which refuses it; Karmada refuses it at decoding (400)";

/// Why decode errors differ.
const DECODE: &str = "serde words a decode error and names the field path; Go's encoding/json names its struct types";

/// Why an absent tolerationSeconds differs.
const PANIC: &str = "Karmada's validator dereferences an absent tolerationSeconds and panics (500); the CRD defaults it to 300, so an API server never sends it absent, and Flotilla allows it";

/// A case of the corpus.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    path: String,
    operation: String,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    object: Option<Value>,
    #[serde(default)]
    old_object: Option<Value>,
}

/// The kind (group, version, kind, resource) each handler is registered for.
fn kind_of(path: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    let resource = path.rsplit_once('-').map_or(path, |(_, r)| r);
    match resource {
        "propagationpolicy" => (
            "policy.karmada.io",
            "v1alpha1",
            "PropagationPolicy",
            "propagationpolicies",
        ),
        "clusterpropagationpolicy" => (
            "policy.karmada.io",
            "v1alpha1",
            "ClusterPropagationPolicy",
            "clusterpropagationpolicies",
        ),
        "overridepolicy" => (
            "policy.karmada.io",
            "v1alpha1",
            "OverridePolicy",
            "overridepolicies",
        ),
        "clusteroverridepolicy" => (
            "policy.karmada.io",
            "v1alpha1",
            "ClusterOverridePolicy",
            "clusteroverridepolicies",
        ),
        "work" => ("work.karmada.io", "v1alpha1", "Work", "works"),
        "resourcebinding" => (
            "work.karmada.io",
            "v1alpha2",
            "ResourceBinding",
            "resourcebindings",
        ),
        "clusterresourcebinding" => (
            "work.karmada.io",
            "v1alpha2",
            "ClusterResourceBinding",
            "clusterresourcebindings",
        ),
        "clustertaintpolicy" => (
            "policy.karmada.io",
            "v1alpha1",
            "ClusterTaintPolicy",
            "clustertaintpolicies",
        ),
        _ => (
            "config.karmada.io",
            "v1alpha1",
            "ResourceInterpreterWebhookConfiguration",
            "resourceinterpreterwebhookconfigurations",
        ),
    }
}

/// The request the case describes, as an API server sends it.
fn request(case: &Case) -> AdmissionRequest<DynamicObject> {
    let (group, version, kind, resource) = kind_of(&case.path);
    let name = case
        .object
        .as_ref()
        .or(case.old_object.as_ref())
        .and_then(|o| o.pointer("/metadata/name"))
        .cloned()
        .unwrap_or(json!(""));
    let mut request = json!({
        "uid": format!("uid-{}", case.name),
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": name,
        "operation": case.operation,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": case.object,
        "oldObject": case.old_object,
        "dryRun": false,
    });
    if let Some(namespace) = &case.namespace {
        request["namespace"] = json!(namespace);
    }
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": request,
    }))
    .unwrap_or_else(|e| panic!("case {}: not an AdmissionReview: {e}", case.name));
    review
        .try_into()
        .unwrap_or_else(|e| panic!("case {}: no request: {e}", case.name))
}

/// What is compared of one answer.
#[derive(Debug, PartialEq)]
struct Outcome {
    allowed: bool,
    code: u64,
    message: String,
    /// The case's object after the answer's patch, generated UUIDs masked.
    patched: Option<Value>,
}

/// The case's object as the answer leaves it (unchanged without a patch), generated UUIDs masked; `None` when
/// the request carries no object.
fn patched(case: &Case, patch: Option<Value>) -> Option<Value> {
    let mut object = case.object.clone()?;
    if let Some(patch) = patch {
        let operations: json_patch::Patch = serde_json::from_value(patch)
            .unwrap_or_else(|e| panic!("case {}: not a JSON patch: {e}", case.name));
        json_patch::patch(&mut object, &operations)
            .unwrap_or_else(|e| panic!("case {}: the patch does not apply: {e}", case.name));
    }
    let request = serde_json::to_string(&(&case.object, &case.old_object)).unwrap_or_default();
    mask_generated_uuids(&mut object, &request);
    Some(object)
}

/// Replaces each UUID that the request does not hold with `<uuid>`, as the recording did.
fn mask_generated_uuids(value: &mut Value, request: &str) {
    match value {
        Value::String(s) if uuid::Uuid::parse_str(s).is_ok() && !request.contains(s.as_str()) => {
            *s = "<uuid>".to_owned();
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| mask_generated_uuids(v, request)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| mask_generated_uuids(v, request)),
        _ => {}
    }
}

fn recorded(case: &Case, answer: &Value) -> Outcome {
    let mut patched = patched(case, answer.get("patch").cloned());
    // Karmada's typed round trip gives a Work or a binding an empty status. Status is a subresource: an API
    // server ignores it in a write of the object itself, so an added empty status changes nothing and is not
    // compared.
    let status_subresource = [
        "/mutate-work",
        "/mutate-resourcebinding",
        "/mutate-clusterresourcebinding",
    ];
    if status_subresource.contains(&case.path.as_str())
        && case
            .object
            .as_ref()
            .is_some_and(|o| o.get("status").is_none())
        && let Some(Value::Object(object)) = patched.as_mut()
        && object.get("status") == Some(&json!({}))
    {
        object.remove("status");
    }
    Outcome {
        allowed: answer["allowed"].as_bool().unwrap_or(false),
        code: answer
            .pointer("/status/code")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        message: answer
            .pointer("/status/message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        patched,
    }
}

fn ours(case: &Case, response: &AdmissionResponse) -> Outcome {
    let patch = response.patch.as_ref().map(|bytes| {
        serde_json::from_slice(bytes)
            .unwrap_or_else(|e| panic!("case {}: our patch is not JSON: {e}", case.name))
    });
    Outcome {
        allowed: response.allowed,
        code: u64::from(response.result.code),
        message: response.result.message.clone(),
        patched: patched(case, patch),
    }
}

#[test]
fn our_answers_are_karmada_webhooks() {
    let cases: Vec<Case> = flotilla_yaml::from_str(CORPUS).expect("the corpus parses");
    let answers: Value = serde_json::from_str(ANSWERS).expect("the answers parse");
    let handlers: BTreeMap<&str, Review> = HANDLERS.iter().copied().collect();
    // Recorded with karmada-webhook's defaults (NoExecute taints refused) and the gate of the components check.
    let options = Options {
        allow_no_execute_taint_policy: false,
        feature_gates: FeatureGates::parse(RECORDED_GATES).expect("the recorded gates parse"),
    };
    let mut compared = 0;
    let mut differences = Vec::new();
    let mut allowed_used = Vec::new();
    for case in &cases {
        let handler = handlers
            .get(case.path.as_str())
            .unwrap_or_else(|| panic!("case {}: no handler serves {}", case.name, case.path));
        let answer = answers
            .pointer(&format!("/answers/{}", case.name))
            .unwrap_or_else(|| panic!("case {} has no recorded answer", case.name));
        let theirs = recorded(case, answer);
        let ours = ours(case, &handler(&options, &request(case)));
        compared += 1;
        let parts = [
            (
                "allowed",
                theirs.allowed == ours.allowed && theirs.code == ours.code,
            ),
            ("message", theirs.message == ours.message),
            ("patch", theirs.patched == ours.patched),
        ];
        for (part, same) in parts {
            if same {
                continue;
            }
            if ALLOWED
                .iter()
                .any(|(c, p, _)| *c == case.name && *p == part)
            {
                allowed_used.push((case.name.clone(), part));
                continue;
            }
            differences.push(format!(
                "{} ({part}):\n  karmada-webhook: {theirs:?}\n  flotilla:        {ours:?}",
                case.name
            ));
        }
    }
    assert_eq!(compared, cases.len());
    let stale: Vec<_> = ALLOWED
        .iter()
        .filter(|(c, p, _)| !allowed_used.iter().any(|(uc, up)| uc == c && up == p))
        .collect();
    assert!(
        stale.is_empty(),
        "allowlist entries that no longer differ: {stale:?}"
    );
    assert!(
        differences.is_empty(),
        "{} of {compared} answers differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
