//! Karmada's validation of a new Cluster (`pkg/apis/cluster/validation`, `ValidateCluster`), for what the
//! Cluster CRD's schema cannot say, with Karmada's field paths and messages (its oddities included: `spec.Zone`,
//! `spec.Zones` without an index, `spec.spec` when `zone` and `zones` are both set, and proxy URL errors that
//! say `apiEndpoint`).
//!
//! - **The name** is a DNS-1123 label of at most 48 characters, because the execution namespace
//!   `karmada-es-<name>` must stay a label of at most 63. A `generateName` prefix is
//!   refused when no name made from it can pass: a generated name adds five random lower-case alphanumerics.
//! - **The spec**: `syncMode` (`Push` or `Pull`, listed as Karmada lists them), `apiEndpoint` and `proxyURL` as
//!   Go's URL parser reads them, the Secret references' names and namespaces, `provider`, `region`, `zone` and
//!   `zones` as label values, and the taints (keys, values, the `NoSchedule` and `NoExecute` effects, each key
//!   and effect once).
//!
//! Left to the CRD's schema: field types and required fields it declares, and `resourceModels`, whose checks
//! Karmada makes after normalising the models (the cluster controller normalises them here).
//!
//! Only creates are judged here (a POST, or an apply that creates): a Cluster stored before these checks existed
//! must stay writable, if only to remove its finalizers.

use flotilla_apimachinery::go_url as url;

use flotilla_apimachinery::field::FieldError;
use flotilla_apimachinery::validation::{
    is_dns1123_label, is_qualified_name, is_valid_label_value,
};
use serde_json::{Value, json};

/// Karmada's longest cluster name: `karmada-es-` plus the name must fit a 63-character label.
const CLUSTER_NAME_MAX_LENGTH: usize = 48;
/// The characters `generateName` adds to its prefix.
const GENERATED_SUFFIX_LENGTH: usize = 5;
/// `syncMode`'s values, in the order Karmada's message lists them.
const SYNC_MODES: [&str; 2] = ["Pull", "Push"];
/// The taint effects a Cluster may carry.
const TAINT_EFFECTS: [&str; 2] = ["NoSchedule", "NoExecute"];
/// The end of every `apiEndpoint` format error.
const ENDPOINT_FORM: &str = "; desired format: hostname, hostname:port, IP or IP:port";

/// Karmada's errors for a new Cluster `object` (JSON as the caller sent it); `name` is the name a request's path
/// gives when the body need not (an apply). Empty when the Cluster may be created.
pub(crate) fn validate_new_cluster(object: &Value, name: Option<&str>) -> Vec<FieldError> {
    let mut errors = validate_metadata(object, name);
    let empty = json!({});
    let spec = object
        .get("spec")
        .filter(|spec| spec.is_object())
        .unwrap_or(&empty);
    errors.extend(validate_spec(spec));
    errors
}

/// The name, or the `generateName` prefix it is to be made from.
fn validate_metadata(object: &Value, path_name: Option<&str>) -> Vec<FieldError> {
    let text = |key: &str| {
        object
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
    };
    let name = text("name").or(path_name).unwrap_or_default();
    let prefix = text("generateName").unwrap_or_default();
    let mut errors = Vec::new();
    if !name.is_empty() {
        for message in cluster_name(name) {
            errors.push(FieldError::invalid("metadata.name", name, message));
        }
    } else if !prefix.is_empty() {
        for message in generate_name_prefix(prefix) {
            errors.push(FieldError::invalid(
                "metadata.generateName",
                prefix,
                message,
            ));
        }
    } else {
        errors.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    }
    errors
}

/// Karmada's `ValidateClusterName`.
fn cluster_name(name: &str) -> Vec<String> {
    if name.len() > CLUSTER_NAME_MAX_LENGTH {
        return vec![format!(
            "must be no more than {CLUSTER_NAME_MAX_LENGTH} characters"
        )];
    }
    is_dns1123_label(name)
}

/// Why no name made from `prefix` (plus five random lower-case alphanumerics) can be a cluster name.
fn generate_name_prefix(prefix: &str) -> Vec<String> {
    let longest = CLUSTER_NAME_MAX_LENGTH - GENERATED_SUFFIX_LENGTH;
    if prefix.len() > longest {
        return vec![format!(
            "must be no more than {longest} characters: a generated name adds {GENERATED_SUFFIX_LENGTH} random \
             characters and a cluster name must be no more than {CLUSTER_NAME_MAX_LENGTH} characters"
        )];
    }
    // Any lower-case alphanumeric stands for the random suffix.
    is_dns1123_label(&format!("{prefix}a"))
}

/// Karmada's `ValidateClusterSpec`, but for `resourceModels`.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let text = |key: &str| spec.get(key).and_then(Value::as_str);
    let mut errors = Vec::new();
    // A value of another type is the schema's to refuse.
    if spec.get("syncMode").is_none_or(Value::is_string) {
        let mode = text("syncMode").unwrap_or_default();
        if mode.is_empty() {
            errors.push(FieldError::required("spec.syncMode", ""));
        }
        if !SYNC_MODES.contains(&mode) {
            errors.push(FieldError::not_supported(
                "spec.syncMode",
                mode,
                &SYNC_MODES,
            ));
        }
    }
    if let Some(endpoint) = text("apiEndpoint").filter(|endpoint| !endpoint.is_empty()) {
        errors.extend(api_endpoint(endpoint));
    }
    for reference in ["secretRef", "impersonatorSecretRef"] {
        if let Some(reference) = spec
            .get(reference)
            .filter(|r| r.is_object())
            .map(|r| (reference, r))
        {
            errors.extend(secret_reference(reference.0, reference.1));
        }
    }
    if let Some(proxy) = text("proxyURL").filter(|proxy| !proxy.is_empty()) {
        errors.extend(proxy_url(proxy));
    }
    errors.extend(placement(spec));
    if let Some(taints) = spec.get("taints").and_then(Value::as_array) {
        errors.extend(cluster_taints(taints));
    }
    errors
}

/// Karmada's `ValidateClusterAPIEndpoint` (HTTPS not forced).
fn api_endpoint(endpoint: &str) -> Vec<FieldError> {
    const FIELD: &str = "spec.apiEndpoint";
    let url = match url::parse(endpoint) {
        Ok(url) => url,
        Err(error) => {
            return vec![FieldError::invalid(
                FIELD,
                endpoint,
                format!("apiEndpoint must be a valid URL: {error}{ENDPOINT_FORM}"),
            )];
        }
    };
    let mut errors = Vec::new();
    if url.host.is_empty() {
        errors.push(FieldError::invalid(
            FIELD,
            "",
            format!("host must be provided{ENDPOINT_FORM}"),
        ));
    }
    errors.extend(url.disallowed_parts(FIELD));
    errors
}

fn proxy_url(proxy: &str) -> Vec<FieldError> {
    const FIELD: &str = "spec.proxyURL";
    match url::parse(proxy) {
        Err(error) => vec![FieldError::invalid(
            FIELD,
            proxy,
            format!("apiEndpoint must be a valid URL: {error}"),
        )],
        Ok(url) if !["http", "https", "socks5"].contains(&url.scheme.as_str()) => {
            vec![FieldError::invalid(
                FIELD,
                proxy,
                format!(
                    "unsupported scheme {}, must be http, https, or socks5",
                    flotilla_apimachinery::validation::go_quote(&url.scheme)
                ),
            )]
        }
        Ok(_) => Vec::new(),
    }
}

/// A Secret reference's namespace and name must be given (the schema requires the keys, not their values).
fn secret_reference(field: &str, reference: &Value) -> Vec<FieldError> {
    ["namespace", "name"]
        .into_iter()
        .filter(|key| {
            reference
                .get(key)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        })
        .filter(|key| reference.get(key).is_none_or(Value::is_string))
        .map(|key| FieldError::required(format!("spec.{field}.{key}"), ""))
        .collect()
}

/// Karmada's `validateClusterSpecForFieldSelector`: provider, region, zone and zones are label values.
fn placement(spec: &Value) -> Vec<FieldError> {
    let text = |key: &str| spec.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut errors = Vec::new();
    for (key, value) in [("provider", text("provider")), ("region", text("region"))] {
        let problems = is_valid_label_value(value);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(
                format!("spec.{key}"),
                value,
                problems.join("; "),
            ));
        }
    }
    let zones: Vec<&str> = spec
        .get("zones")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let zone = text("zone");
    if !zone.is_empty() && !zones.is_empty() {
        errors.push(FieldError::type_invalid(
            "spec.spec",
            spec.clone(),
            "Zone and Zones cannot co-exist",
        ));
        return errors;
    }
    for value in std::iter::once(zone)
        .filter(|zone| !zone.is_empty())
        .chain(zones.iter().copied())
    {
        let problems = is_valid_label_value(value);
        if !problems.is_empty() {
            let field = if zones.is_empty() {
                "spec.Zone"
            } else {
                "spec.Zones"
            };
            errors.push(FieldError::invalid(field, value, problems.join("; ")));
        }
    }
    errors
}

/// Karmada's `ValidateClusterTaints` (kube's node taint rules, with the effects a Cluster may have).
fn cluster_taints(taints: &[Value]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (index, taint) in taints.iter().enumerate() {
        let at = format!("spec.taints[{index}]");
        let text = |key: &str| taint.get(key).and_then(Value::as_str).unwrap_or_default();
        let (key, value, effect) = (text("key"), text("value"), text("effect"));
        for message in is_qualified_name(key) {
            errors.push(FieldError::invalid(format!("{at}.key"), key, message));
        }
        let problems = is_valid_label_value(value);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(
                format!("{at}.value"),
                value,
                problems.join(";"),
            ));
        }
        if effect.is_empty() {
            errors.push(FieldError::required(format!("{at}.effect"), ""));
        } else if !TAINT_EFFECTS.contains(&effect) {
            errors.push(FieldError::not_supported(
                format!("{at}.effect"),
                effect,
                &TAINT_EFFECTS,
            ));
        }
        if seen.contains(&(effect, key)) {
            let mut duplicate = FieldError::duplicate(at, taint.clone());
            duplicate.detail = "taints must be unique by key and effect pair".to_owned();
            errors.push(duplicate);
            continue;
        }
        seen.push((effect, key));
    }
    errors
}

#[cfg(test)]
mod tests;
