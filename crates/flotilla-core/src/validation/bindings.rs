//! Karmada's validation of a ResourceBinding: its dependencies annotation must read as a list of dependency
//! references, and, with `MultiplePodTemplatesScheduling`, its components need names, each used once.

use std::collections::{BTreeMap, HashSet};

use flotilla_api::names::annotations;
use flotilla_api::work::v1alpha2::Component;
use flotilla_apimachinery::field::FieldError;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Deserialize;

/// A dependency reference as Go's decoder reads one: every field may be absent or null, unknown fields are
/// ignored, and a field of the wrong type fails the whole annotation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[expect(dead_code, reason = "read only to check that the annotation decodes")]
struct DependencyReference {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    label_selector: Option<LabelSelector>,
}

/// The errors of a binding's annotations: a dependencies annotation that is not a JSON list of dependency
/// references.
pub fn validate_binding_annotations(annotations: &BTreeMap<String, String>) -> Vec<FieldError> {
    let Some(dependencies) = annotations.get(annotations::DEPENDENCIES) else {
        return Vec::new();
    };
    match serde_json::from_str::<Option<Vec<Option<DependencyReference>>>>(dependencies) {
        Ok(_) => Vec::new(),
        Err(_) => vec![FieldError::invalid(
            format!("metadata.annotations.{}", annotations::DEPENDENCIES),
            dependencies.as_str(),
            "annotation value must be a valid JSON",
        )],
    }
}

/// The errors of a binding's components: an empty name, or one an earlier component already has.
pub fn validate_components(components: &[Component]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, component) in components.iter().enumerate() {
        let at = format!("spec.components[{i}].name");
        if component.name.is_empty() {
            errors.push(FieldError::invalid(
                at,
                "",
                "component names must be non-empty",
            ));
        } else if !names.insert(component.name.as_str()) {
            errors.push(FieldError::invalid(
                at,
                component.name.as_str(),
                "component names must be unique",
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_apimachinery::field::aggregate_message;

    fn annotated(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(annotations::DEPENDENCIES.to_owned(), value.to_owned())])
    }

    #[test]
    fn dependencies_must_decode_as_references() {
        assert!(validate_binding_annotations(&BTreeMap::new()).is_empty());
        for fine in [
            "[]",
            "null",
            r#"[{"apiVersion":"v1","kind":"ConfigMap","name":"a","extra":1}]"#,
            r#"[{"kind":"Secret"},null]"#,
        ] {
            assert!(
                validate_binding_annotations(&annotated(fine)).is_empty(),
                "{fine}"
            );
        }
        for bad in ["{", "{}", r#"[{"kind":1}]"#, "[1]"] {
            let errors = validate_binding_annotations(&annotated(bad));
            assert_eq!(
                aggregate_message(&errors),
                format!(
                    "metadata.annotations.resourcebinding.karmada.io/dependencies: Invalid value: {}: annotation value must be a valid JSON",
                    serde_json::Value::from(bad)
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn component_names_are_required_and_unique() {
        let component = |name: &str| Component {
            name: name.to_owned(),
            replicas: 1,
            replica_requirements: None,
        };
        let errors = validate_components(&[component("a"), component(""), component("a")]);
        assert_eq!(
            aggregate_message(&errors),
            r#"[spec.components[1].name: Invalid value: "": component names must be non-empty, spec.components[2].name: Invalid value: "a": component names must be unique]"#
        );
        assert!(validate_components(&[component("a"), component("b")]).is_empty());
    }
}
