//! How a produced result is compared with a case's expected output, as Karmada's testdata runner compares.

use flotilla_api::config::v1alpha1::DependentObjectReference;
use flotilla_api::work::v1alpha2::{Component, ReplicaRequirements};
use serde_json::Value;

use flotilla_apimachinery::quantity::Quantity;

/// The marker that excludes a field of an expected object from the comparison.
const EXCLUDE: &str = "{{EXCLUDE}}";

/// Compares one named result.
///
/// # Errors
/// A description of the first difference.
pub(super) fn result(name: &str, expected: &Value, actual: &Value) -> Result<(), String> {
    match name {
        "requires" => {
            let expected = requirements(expected)?;
            let actual = requirements(actual)?;
            semantic(&expected, &actual)
        }
        "dependencies" => {
            let mut expected: Vec<DependentObjectReference> = decode(expected)?;
            let mut actual: Vec<DependentObjectReference> = decode(actual)?;
            expected.sort();
            actual.sort();
            semantic(&to_json(&expected)?, &to_json(&actual)?)
        }
        "components" => {
            let mut expected: Vec<Component> = decode(expected)?;
            let mut actual: Vec<Component> = decode(actual)?;
            for list in [&mut expected, &mut actual] {
                list.sort_by(|a, b| a.name.cmp(&b.name));
                for component in list.iter_mut() {
                    if let Some(r) = &mut component.replica_requirements {
                        canonical_quantities(&mut r.resource_request);
                    }
                }
            }
            semantic(&to_json(&expected)?, &to_json(&actual)?)
        }
        "retained" | "revised" | "aggregatedStatus" => {
            let mut expected = expected.clone();
            let mut actual = actual.clone();
            let mut excluded = Vec::new();
            excluded_paths(&expected, &mut Vec::new(), &mut excluded);
            for path in &excluded {
                remove_path(&mut expected, path);
                remove_path(&mut actual, path);
            }
            semantic(&expected, &actual)
        }
        _ => {
            // serde_json's maps keep keys sorted, so compact JSON compares like Karmada's sorted-key bytes.
            let (e, a) = (expected.to_string(), actual.to_string());
            if e == a {
                Ok(())
            } else {
                Err(format!("expected {e}, got {a}"))
            }
        }
    }
}

/// Status items keys matched case-insensitively, as Go decodes them.
pub(super) fn normalize_item_keys(items: Value) -> Value {
    const FIELDS: &[&str] = &[
        "clusterName",
        "status",
        "applied",
        "appliedMessage",
        "health",
    ];
    match items {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::Object(map) => Value::Object(
                        map.into_iter()
                            .map(|(k, v)| {
                                let key = FIELDS
                                    .iter()
                                    .find(|f| f.eq_ignore_ascii_case(&k))
                                    .map_or(k, |f| (*f).to_owned());
                                (key, v)
                            })
                            .collect(),
                    ),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    if value.is_null() {
        return serde_json::from_value(Value::Array(Vec::new())).map_err(|e| e.to_string());
    }
    serde_json::from_value(value.clone()).map_err(|e| format!("cannot decode {value}: {e}"))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

/// Requirements with quantities in canonical form, so `1` equals `1000m`.
fn requirements(value: &Value) -> Result<Value, String> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let mut requirements: ReplicaRequirements =
        serde_json::from_value(value.clone()).map_err(|e| format!("cannot decode {value}: {e}"))?;
    canonical_quantities(&mut requirements.resource_request);
    to_json(&requirements)
}

fn canonical_quantities(
    quantities: &mut std::collections::BTreeMap<
        String,
        k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    >,
) {
    for quantity in quantities.values_mut() {
        if let Ok(parsed) = Quantity::parse(&quantity.0) {
            quantity.0 = parsed.to_string();
        }
    }
}

/// Deep equality where null, absent, empty lists and empty maps are all equal; numbers must match in type.
fn semantic(expected: &Value, actual: &Value) -> Result<(), String> {
    if equal(expected, actual) {
        Ok(())
    } else {
        Err(format!("expected {expected}, got {actual}"))
    }
}

fn empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    if empty(a) && empty(b) {
        return true;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let null = Value::Null;
            x.keys()
                .chain(y.keys())
                .all(|k| equal(x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        _ => a == b,
    }
}

/// Paths (keys and decimal list indices) whose expected value is the `{{EXCLUDE}}` marker.
fn excluded_paths(value: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        Value::String(s) if s == EXCLUDE => out.push(at.clone()),
        Value::Object(map) => {
            for (k, v) in map {
                at.push(k.clone());
                excluded_paths(v, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push(i.to_string());
                excluded_paths(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn remove_path(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = value;
    for key in parents {
        let next = match at {
            Value::Object(map) => map.get_mut(key),
            Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        let Some(next) = next else { return };
        at = next;
    }
    match at {
        Value::Object(map) => {
            map.remove(last);
        }
        Value::Array(items) => {
            if let Some(item) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *item = Value::Null;
            }
        }
        _ => {}
    }
}
