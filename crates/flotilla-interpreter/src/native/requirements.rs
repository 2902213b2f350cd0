//! The per-replica requirements of a pod template (node claim and effective resource request), computed straight
//! from its JSON.
//!
//! The native layer, the Lua `kube.accuratePodRequirements` and the webhook SDK all answer with this, so their
//! results match exactly. Reading the borrowed JSON rather than decoding the template into k8s-openapi types
//! first makes GetReplicas several times cheaper: only node selector, tolerations, required node affinity,
//! overhead and each container's name and resources are read, and only the node-claim parts are decoded into
//! their types (they are part of the answer). Those fields are type-checked as decoding them would; a wrongly
//! typed field elsewhere in the template is not an error here. `namespace` and `priorityClassName` are never set:
//! Karmada sets them only under the `ResourceQuotaEstimate` feature gate; under it the detector fills in the
//! namespace (Flotilla does not set `priorityClassName`).

use std::collections::BTreeMap;

use flotilla_api::work::v1alpha2::{NodeClaim, ReplicaRequirements};
use k8s_openapi::api::core::v1::{NodeSelector, Toleration};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::NativeError;
use super::object::json_type;
use flotilla_apimachinery::quantity::{Format, Quantity};

/// The requirements of one replica of a pod template (`{metadata, spec}`), or `None` when it claims no node
/// constraints and requests nothing. `what` names the template in decoding errors.
///
/// # Errors
/// [`NativeError::Quantity`] when a request, limit or overhead does not parse; [`NativeError::Decode`] when a
/// field read has the wrong type.
pub fn template_requirements(
    template: &Value,
    what: impl Fn() -> String,
) -> Result<Option<ReplicaRequirements>, NativeError> {
    match template {
        Value::Null => Ok(None),
        Value::Object(map) => match map.get("spec") {
            None | Some(Value::Null) => Ok(None),
            Some(spec) => spec_requirements(spec, || format!("spec of {}", what())),
        },
        other => Err(mistyped(&what, "", other, "a PodTemplateSpec object")),
    }
}

/// [`template_requirements`] for a pod spec (a Pod's own `spec`).
///
/// # Errors
/// As [`template_requirements`].
pub fn spec_requirements(
    spec: &Value,
    what: impl Fn() -> String,
) -> Result<Option<ReplicaRequirements>, NativeError> {
    let Value::Object(spec) = spec else {
        return Err(mistyped(&what, "", spec, "a PodSpec object"));
    };
    let node_claim = node_claim(spec, &what)?;
    let resource_request = effective_request(spec, &what)?;
    if node_claim.is_none() && resource_request.is_empty() {
        return Ok(None);
    }
    Ok(Some(ReplicaRequirements {
        node_claim,
        resource_request,
        ..ReplicaRequirements::default()
    }))
}

/// A field of the wrong type, worded like serde's own message.
fn mistyped(what: &dyn Fn() -> String, field: &str, value: &Value, expected: &str) -> NativeError {
    let at = if field.is_empty() {
        String::new()
    } else {
        format!(" at {field}")
    };
    NativeError::Decode {
        what: what(),
        source: serde::de::Error::custom(format!(
            "invalid type: {}, expected {expected}{at}",
            json_type(value)
        )),
    }
}

/// A present, non-null member of an object.
fn member<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// Decodes a present, non-null member into its Kubernetes type.
fn decoded<T: for<'de> Deserialize<'de>>(
    map: &Map<String, Value>,
    key: &str,
    what: &dyn Fn() -> String,
) -> Result<Option<T>, NativeError> {
    member(map, key)
        .map(|v| {
            T::deserialize(v).map_err(|source| NativeError::Decode {
                what: what(),
                source,
            })
        })
        .transpose()
}

/// Node selector, tolerations and required node affinity; `None` when the selector and the affinity are
/// absent and there are no tolerations (an empty but present selector still counts).
fn node_claim(
    spec: &Map<String, Value>,
    what: &dyn Fn() -> String,
) -> Result<Option<NodeClaim>, NativeError> {
    let node_affinity = match member(spec, "affinity") {
        None => None,
        Some(Value::Object(affinity)) => match member(affinity, "nodeAffinity") {
            None => None,
            Some(Value::Object(node_affinity)) => Some(node_affinity),
            Some(other) => {
                return Err(mistyped(what, "affinity.nodeAffinity", other, "an object"));
            }
        },
        Some(other) => return Err(mistyped(what, "affinity", other, "an object")),
    };
    let hard_node_affinity: Option<NodeSelector> = match node_affinity {
        Some(n) => decoded(n, "requiredDuringSchedulingIgnoredDuringExecution", what)?,
        None => None,
    };
    let tolerations: Vec<Toleration> = decoded(spec, "tolerations", what)?.unwrap_or_default();
    let node_selector: Option<BTreeMap<String, String>> = decoded(spec, "nodeSelector", what)?;
    if node_selector.is_none() && hard_node_affinity.is_none() && tolerations.is_empty() {
        return Ok(None);
    }
    Ok(Some(NodeClaim {
        hard_node_affinity,
        node_selector: node_selector.unwrap_or_default(),
        tolerations,
    }))
}

/// How a resource is accounted: cpu in millis, everything else in whole units.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Milli,
    Whole,
}

/// The accounting unit of a resource name, or `None` for names Karmada drops.
fn unit_of(name: &str) -> Option<Unit> {
    match name {
        "cpu" => Some(Unit::Milli),
        "memory" | "ephemeral-storage" | "pods" => Some(Unit::Whole),
        _ if is_scalar_resource(name) => Some(Unit::Whole),
        _ => None,
    }
}

/// Output format of a resource total: binary for byte counts, decimal for counts.
fn format_of(name: &str) -> Format {
    if name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-") {
        Format::BinarySi
    } else {
        Format::DecimalSi
    }
}

/// Per-resource totals in accounting units (millis for cpu), keyed by names borrowed from the template. A pod
/// requests a handful of resources, so a list searched linearly beats a map.
#[derive(Default)]
struct Totals<'a>(Vec<(&'a str, i64)>);

impl<'a> Totals<'a> {
    fn entry(&mut self, name: &'a str) -> &mut i64 {
        let index = match self.0.iter().position(|(n, _)| *n == name) {
            Some(index) => index,
            None => {
                self.0.push((name, 0));
                self.0.len() - 1
            }
        };
        &mut self.0[index].1
    }
}

/// The effective pod request: the sum over containers, raised to each init container's request, plus the
/// pod overhead; only strictly positive totals, formatted as Kubernetes prints them.
fn effective_request(
    spec: &Map<String, Value>,
    what: &dyn Fn() -> String,
) -> Result<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>, NativeError>
{
    let mut totals = Totals::default();
    for_each_request(spec, "containers", what, |name, amount| {
        let total = totals.entry(name);
        *total = total.saturating_add(amount);
    })?;
    for_each_request(spec, "initContainers", what, |name, amount| {
        let total = totals.entry(name);
        *total = (*total).max(amount);
    })?;
    match member(spec, "overhead") {
        None => {}
        Some(Value::Object(overhead)) => {
            let mut add = |name, amount| {
                let total = totals.entry(name);
                *total = total.saturating_add(amount);
            };
            accounted(overhead.iter(), &|| "overhead".to_owned(), what, &mut add)?;
        }
        Some(other) => return Err(mistyped(what, "overhead", other, "a map")),
    }
    Ok(totals
        .0
        .into_iter()
        .filter(|(_, amount)| *amount > 0)
        .map(|(name, amount)| {
            let quantity = match unit_of(name) {
                Some(Unit::Milli) => Quantity::from_milli(amount, format_of(name)),
                _ => Quantity::from_value(amount, format_of(name)),
            };
            (name.to_owned(), quantity.to_k8s())
        })
        .collect())
}

/// Calls `f` with each accounted resource of each container in `list`: its requests, with limits standing in
/// for missing requests.
fn for_each_request<'a>(
    spec: &'a Map<String, Value>,
    list: &str,
    what: &dyn Fn() -> String,
    mut f: impl FnMut(&'a str, i64),
) -> Result<(), NativeError> {
    let containers = match member(spec, list) {
        None => return Ok(()),
        Some(Value::Array(containers)) => containers,
        Some(other) => return Err(mistyped(what, list, other, "a sequence")),
    };
    for (index, container) in containers.iter().enumerate() {
        let Value::Object(container) = container else {
            return Err(mistyped(
                what,
                &format!("{list}[{index}]"),
                container,
                "a Container object",
            ));
        };
        let resources = match member(container, "resources") {
            None => continue,
            Some(Value::Object(resources)) => resources,
            Some(other) => {
                return Err(mistyped(
                    what,
                    &format!("{list}[{index}].resources"),
                    other,
                    "a ResourceRequirements object",
                ));
            }
        };
        let list_of = |key: &str| match member(resources, key) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(map)),
            Some(other) => Err(mistyped(
                what,
                &format!("{list}[{index}].resources.{key}"),
                other,
                "a map",
            )),
        };
        let requests = list_of("requests")?;
        let limits = list_of("limits")?;
        let merged = requests.into_iter().flatten().chain(
            limits
                .into_iter()
                .flatten()
                .filter(|(name, _)| requests.is_none_or(|r| !r.contains_key(*name))),
        );
        let name = match container.get("name") {
            Some(Value::String(name)) => name.as_str(),
            _ => "",
        };
        let field = || format!("spec.{list}[{name}].resources");
        accounted(merged, &field, what, &mut f)?;
    }
    Ok(())
}

/// Passes each accounted resource of a list to `f` in accounting units, dropping names Karmada does not
/// account. When several quantities do not parse, the error names the first by resource name.
fn accounted<'a>(
    list: impl Iterator<Item = (&'a String, &'a Value)>,
    field: &dyn Fn() -> String,
    what: &dyn Fn() -> String,
    f: &mut impl FnMut(&'a str, i64),
) -> Result<(), NativeError> {
    let mut first_error: Option<(&str, NativeError)> = None;
    for (name, value) in list {
        let Some(unit) = unit_of(name) else { continue };
        match quantity(value, &|| format!("{}.{name}", field()), what) {
            Ok(parsed) => f(
                name,
                match unit {
                    Unit::Milli => parsed.milli_value(),
                    Unit::Whole => parsed.value(),
                },
            ),
            Err(e) => {
                if first_error
                    .as_ref()
                    .is_none_or(|(first, _)| name.as_str() < *first)
                {
                    first_error = Some((name, e));
                }
            }
        }
    }
    match first_error {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// A quantity as Kubernetes' JSON carries it: a string, or a number (which k8s-openapi prints before parsing).
fn quantity(
    value: &Value,
    field: &dyn Fn() -> String,
    what: &dyn Fn() -> String,
) -> Result<Quantity, NativeError> {
    let printed;
    let text = match value {
        Value::String(s) => s.as_str(),
        Value::Number(n) => {
            printed = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => u.to_string(),
                (None, Some(i), _) => i.to_string(),
                (None, None, Some(f)) => f.to_string(),
                (None, None, None) => n.to_string(),
            };
            printed.as_str()
        }
        other => return Err(mistyped(what, &field(), other, "a Quantity")),
    };
    Quantity::parse(text).map_err(|source| NativeError::Quantity {
        field: field(),
        value: text.to_owned(),
        source,
    })
}

/// Kubernetes' scalar resources: extended resources, huge pages, `kubernetes.io/`-prefixed names and
/// attachable volumes.
pub fn is_scalar_resource(name: &str) -> bool {
    is_extended_resource(name)
        || name.starts_with("hugepages-")
        || name.contains("kubernetes.io/")
        || name.starts_with("attachable-volumes-")
}

/// An extended resource: a domain-qualified name outside `kubernetes.io/`, not a quota `requests.` name, that
/// is a valid qualified name once prefixed with `requests.`.
fn is_extended_resource(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if native || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}"))
}

/// Kubernetes' `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63
/// alphanumerics, `-`, `_` or `.`, starting and ending alphanumeric.
pub(crate) fn is_qualified_name(value: &str) -> bool {
    let (prefix, name) = match value.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, value),
    };
    if name.contains('/') {
        return false;
    }
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric());
    name_ok && prefix.is_none_or(is_dns_subdomain)
}

/// Kubernetes' DNS-1123 subdomain: at most 253 characters, dot-separated lower-case labels.
fn is_dns_subdomain(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 253
        && value.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && label
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphanumeric())
                && label
                    .bytes()
                    .last()
                    .is_some_and(|b| b.is_ascii_alphanumeric())
        })
}

#[cfg(test)]
#[path = "requirements_tests.rs"]
mod tests;
