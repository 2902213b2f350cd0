#![allow(clippy::unwrap_used)]

use flotilla_api::config::v1alpha1::ResourceInterpreterCustomization;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use serde_json::{Value, json};

use super::configuration::{
    Endpoint, mutating_webhook_configuration, validating_webhook_configuration,
};
use super::{customization, deletion_protection};

/// A request as kube-apiserver sends it, decoded as the webhook server decodes it.
fn request(
    operation: &str,
    kind: &str,
    object: Option<Value>,
    old: Option<Value>,
) -> AdmissionRequest<DynamicObject> {
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "uid-1", "kind": {"group": "", "version": "v1", "kind": kind},
            "resource": {"group": "", "version": "v1", "resource": "things"},
            "name": "web", "operation": operation, "userInfo": {},
            "object": object, "oldObject": old
        }
    }))
    .unwrap();
    review.try_into().unwrap()
}

fn labelled(value: Option<&str>) -> Value {
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"}});
    if let Some(value) = value {
        object["metadata"]["labels"] =
            json!({"resourcetemplate.karmada.io/deletion-protected": value, "app": "web"});
    }
    object
}

fn verdict(response: &AdmissionResponse) -> (bool, u16, &str) {
    (
        response.allowed,
        response.result.code,
        response.result.message.as_str(),
    )
}

const PROTECTED: &str = "This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected";

#[test]
fn deleting_a_protected_object_is_refused_with_karmadas_message() {
    let response = deletion_protection::review(&request(
        "DELETE",
        "Deployment",
        None,
        Some(labelled(Some("Always"))),
    ));
    assert_eq!(verdict(&response), (false, 403, PROTECTED));
    assert_eq!(response.result.reason, "Forbidden");
    assert_eq!(response.uid, "uid-1");
}

#[test]
fn deleting_is_allowed_without_the_label_or_with_another_value() {
    for old in [
        labelled(None),
        labelled(Some("")),
        labelled(Some("always")),
        labelled(Some("Never")),
    ] {
        let response =
            deletion_protection::review(&request("DELETE", "Deployment", None, Some(old.clone())));
        assert!(response.allowed, "{old}");
        assert_eq!(response.uid, "uid-1");
    }
}

#[test]
fn only_deletes_are_checked() {
    for operation in ["CREATE", "UPDATE", "CONNECT"] {
        let object = labelled(Some("Always"));
        let response = deletion_protection::review(&request(
            operation,
            "Deployment",
            Some(object.clone()),
            Some(object),
        ));
        assert!(response.allowed, "{operation}");
    }
}

#[test]
fn a_delete_without_the_old_object_cannot_be_decided() {
    let response = deletion_protection::review(&request("DELETE", "Namespace", None, None));
    assert_eq!((verdict(&response).0, verdict(&response).1), (false, 400));
}

fn ric(name: &str, kind: &str, customizations: Value) -> Value {
    json!({
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": name},
        "spec": {"target": {"apiVersion": "example.io/v1", "kind": kind}, "customizations": customizations}
    })
}

fn existing(objects: &[Value]) -> Vec<ResourceInterpreterCustomization> {
    objects
        .iter()
        .map(|o| serde_json::from_value(o.clone()).unwrap())
        .collect()
}

fn retain() -> Value {
    json!({"retention": {"luaScript": "function Retain(desired, observed) return desired end"}})
}

#[test]
fn a_customization_clashing_with_another_for_the_same_target_is_refused() {
    let others = existing(&[ric("first", "Widget", retain())]);
    let new = ric("second", "Widget", retain());
    let response = customization::review(
        &request(
            "CREATE",
            "ResourceInterpreterCustomization",
            Some(new),
            None,
        ),
        &others,
    );
    assert_eq!(
        verdict(&response),
        (
            false,
            403,
            "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(first)"
        )
    );
}

#[test]
fn customizations_that_do_not_clash_are_allowed() {
    let others = existing(&[
        ric("first", "Widget", retain()),
        ric("gadget", "Gadget", retain()),
        ric(
            "deps",
            "Widget",
            json!({"dependencyInterpretation": {"luaScript": "function GetDependencies(d) return {} end"}}),
        ),
    ]);
    // Another operation of the same target, the same operation of another target, dependencies (accumulated),
    // and an update of the customization itself.
    for new in [
        ric(
            "second",
            "Widget",
            json!({"healthInterpretation": {"luaScript": "function InterpretHealth(o) return true end"}}),
        ),
        ric("second", "Gizmo", retain()),
        ric(
            "more-deps",
            "Widget",
            json!({"dependencyInterpretation": {"luaScript": "function GetDependencies(d) return {} end"}}),
        ),
        ric("first", "Widget", retain()),
    ] {
        let response = customization::review(
            &request(
                "UPDATE",
                "ResourceInterpreterCustomization",
                Some(new.clone()),
                None,
            ),
            &others,
        );
        assert!(response.allowed, "{new}: {:?}", response.result);
    }
}

#[test]
fn a_script_that_does_not_compile_is_refused() {
    let new = ric(
        "broken",
        "Widget",
        json!({"replicaResource": {"luaScript": "function GetReplicas(obj) return string.format( end"}}),
    );
    let response = customization::review(
        &request(
            "CREATE",
            "ResourceInterpreterCustomization",
            Some(new),
            None,
        ),
        &[],
    );
    let (allowed, code, message) = verdict(&response);
    assert!(!allowed);
    assert_eq!(code, 403);
    assert!(
        message.starts_with("InterpreterOperation(InterpretReplica) Lua script error: "),
        "{message}"
    );
}

#[test]
fn an_object_that_is_not_a_customization_cannot_be_decided() {
    let response = customization::review(
        &request(
            "CREATE",
            "ResourceInterpreterCustomization",
            Some(json!({"metadata": {"name": "x"}, "spec": 3})),
            None,
        ),
        &[],
    );
    assert_eq!((verdict(&response).0, verdict(&response).1), (false, 400));
}

#[test]
fn the_configuration_carries_karmadas_webhooks() {
    let configuration = validating_webhook_configuration(
        &Endpoint::Url("https://127.0.0.1:8443/".to_owned()),
        Some(b"CA"),
    );
    let value = serde_json::to_value(&configuration).unwrap();
    assert_eq!(value["metadata"]["name"], "validating-config");
    let webhooks = value["webhooks"].as_array().unwrap();
    let named = |name: &str| {
        webhooks
            .iter()
            .find(|w| w["name"] == name)
            .unwrap_or_else(|| panic!("no webhook {name}"))
    };
    let customization = named("resourceinterpretercustomization.karmada.io");
    assert_eq!(
        customization["name"],
        "resourceinterpretercustomization.karmada.io"
    );
    assert_eq!(
        customization["clientConfig"]["url"],
        "https://127.0.0.1:8443/validate-resourceinterpretercustomization"
    );
    assert_eq!(
        customization["rules"],
        json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": ["config.karmada.io"], "apiVersions": ["*"], "resources": ["resourceinterpretercustomizations"], "scope": "Cluster"}])
    );
    let protection = named("resourcedeletionprotection.karmada.io");
    assert_eq!(protection["name"], "resourcedeletionprotection.karmada.io");
    assert_eq!(
        protection["clientConfig"]["url"],
        "https://127.0.0.1:8443/validate-resourcedeletionprotection"
    );
    assert_eq!(protection["clientConfig"]["caBundle"], "Q0E=");
    assert_eq!(
        protection["rules"],
        json!([{"operations": ["DELETE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "*"}])
    );
    assert_eq!(
        protection["objectSelector"],
        json!({"matchExpressions": [{"key": "resourcetemplate.karmada.io/deletion-protected", "operator": "Exists"}]})
    );
    let policy = named("clusteroverridepolicy.karmada.io");
    assert_eq!(
        (
            &policy["clientConfig"]["url"],
            &policy["rules"],
            &policy["timeoutSeconds"]
        ),
        (
            &json!("https://127.0.0.1:8443/validate-clusteroverridepolicy"),
            &json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": ["policy.karmada.io"], "apiVersions": ["*"], "resources": ["clusteroverridepolicies"], "scope": "Cluster"}]),
            &json!(3)
        )
    );
    let binding = named("resourcebinding.karmada.io");
    assert_eq!(
        (&binding["clientConfig"]["url"], &binding["sideEffects"]),
        (
            &json!("https://127.0.0.1:8443/validate-resourcebinding"),
            &json!("NoneOnDryRun")
        )
    );
    assert_eq!(
        binding["rules"][0]["operations"],
        json!(["CREATE", "UPDATE"])
    );
    assert_eq!(webhooks.len(), 9);
    for webhook in webhooks {
        assert_eq!(webhook["failurePolicy"], "Fail");
        if webhook["name"] != "resourcebinding.karmada.io" {
            assert_eq!(webhook["sideEffects"], "None");
        }
        assert_eq!(webhook["admissionReviewVersions"], json!(["v1"]));
    }

    let service = Endpoint::Service {
        namespace: "karmada-system".to_owned(),
        name: "karmada-webhook".to_owned(),
        port: None,
    };
    let value = serde_json::to_value(validating_webhook_configuration(&service, None)).unwrap();
    assert_eq!(
        value["webhooks"][8]["clientConfig"],
        json!({"service": {"namespace": "karmada-system", "name": "karmada-webhook", "path": "/validate-resourcedeletionprotection"}})
    );
}

#[test]
fn the_mutating_configuration_names_the_kinds_flotilla_defaults() {
    let configuration =
        mutating_webhook_configuration(&Endpoint::Url("https://127.0.0.1:8443".to_owned()), None);
    let value = serde_json::to_value(&configuration).unwrap();
    assert_eq!(value["metadata"]["name"], "mutating-config");
    let urls: Vec<_> = value["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["name"].clone(), w["clientConfig"]["url"].clone()))
        .collect();
    assert_eq!(
        urls,
        [
            ("propagationpolicy.karmada.io", "/mutate-propagationpolicy"),
            (
                "clusterpropagationpolicy.karmada.io",
                "/mutate-clusterpropagationpolicy"
            ),
            ("overridepolicy.karmada.io", "/mutate-overridepolicy"),
            ("resourcebinding.karmada.io", "/mutate-resourcebinding"),
            (
                "clusterresourcebinding.karmada.io",
                "/mutate-clusterresourcebinding"
            ),
            ("work.karmada.io", "/mutate-work"),
        ]
        .map(|(name, path)| (json!(name), json!(format!("https://127.0.0.1:8443{path}"))))
    );
}
