//! Validation and merging of dependency lists, applied to every layer's result: each reference needs an
//! `apiVersion`, a `kind` and a name or a valid label selector (one bad reference fails the call, as in Karmada).

use std::collections::BTreeSet;

use flotilla_api::config::v1alpha1::DependentObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::Error;
use crate::layer::LayerKind;
use crate::native::requirements::is_qualified_name;

/// Validates `refs` and, for the Lua layers, deduplicates and sorts them by apiVersion, kind, namespace and
/// name; webhook results keep their order, native ones their native order.
pub(crate) fn dependencies(
    layer: LayerKind,
    refs: Vec<DependentObjectReference>,
) -> Result<Vec<DependentObjectReference>, Error> {
    for (i, r) in refs.iter().enumerate() {
        validate(r)
            .map_err(|reason| Error::InvalidDependency(format!("dependencies[{i}]: {reason}")))?;
    }
    Ok(match layer {
        LayerKind::Customization | LayerKind::ThirdParty => {
            let unique: BTreeSet<DependentObjectReference> = refs.into_iter().collect();
            let mut sorted: Vec<_> = unique.into_iter().collect();
            // The derived order compares every field; Karmada sorts by these four only, and the selector
            // breaks ties only between references that differ in nothing else.
            sorted.sort_by(|a, b| {
                (&a.api_version, &a.kind, &a.namespace, &a.name).cmp(&(
                    &b.api_version,
                    &b.kind,
                    &b.namespace,
                    &b.name,
                ))
            });
            sorted
        }
        LayerKind::Webhook | LayerKind::Native => refs,
    })
}

/// One reference: apiVersion and kind set, a name or a valid label selector.
fn validate(r: &DependentObjectReference) -> Result<(), String> {
    if r.api_version.is_empty() {
        return Err("apiVersion: Required value: must not be empty".to_owned());
    }
    if r.kind.is_empty() {
        return Err("kind: Required value: must not be empty".to_owned());
    }
    match &r.label_selector {
        None if r.name.is_empty() => {
            Err("name, labelSelector: Required value: one of them must be set".to_owned())
        }
        Some(selector) => label_selector(&selector.0).map_err(|e| format!("labelSelector.{e}")),
        None => Ok(()),
    }
}

/// Kubernetes' `ValidateLabelSelector` without invalid label values.
fn label_selector(selector: &LabelSelector) -> Result<(), String> {
    for (key, value) in selector.match_labels.iter().flatten() {
        if !is_qualified_name(key) {
            return Err(format!(
                "matchLabels: Invalid value: {key:?}: not a qualified name"
            ));
        }
        if !is_label_value(value) {
            return Err(format!(
                "matchLabels: Invalid value: {value:?}: not a valid label value"
            ));
        }
    }
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        let values = requirement.values.as_deref().unwrap_or_default();
        match requirement.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(format!(
                    "matchExpressions[{i}].values: Required value: must be specified for In or NotIn"
                ));
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(format!(
                    "matchExpressions[{i}].values: Forbidden: may not be specified for Exists or DoesNotExist"
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                return Err(format!(
                    "matchExpressions[{i}].operator: Invalid value: {other:?}"
                ));
            }
        }
        if !is_qualified_name(&requirement.key) {
            return Err(format!(
                "matchExpressions[{i}].key: Invalid value: {:?}",
                requirement.key
            ));
        }
        if let Some(bad) = values.iter().find(|v| !is_label_value(v)) {
            return Err(format!(
                "matchExpressions[{i}].values: Invalid value: {bad:?}"
            ));
        }
    }
    Ok(())
}

/// A label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
fn is_label_value(value: &str) -> bool {
    value.is_empty()
        || (value.len() <= 63
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
            && value
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && value
                .bytes()
                .last()
                .is_some_and(|b| b.is_ascii_alphanumeric()))
}
