//! OpenAPI v3 validation of custom resources against their structural schema, with upstream's messages.

use super::{flag, property};
use crate::validation::FieldError;
use crate::validation::format::go_quote;
use serde_json::{Map, Value};

/// Validates `object` against its CRD version's `schema`: `type` (and `nullable`), `enum`, `required`,
/// `minimum`/`maximum` (with exclusive forms), `multipleOf`, `minLength`/`maxLength`, `pattern`,
/// `minItems`/`maxItems`, `uniqueItems`, `minProperties`/`maxProperties`, `format` for integers and date-times,
/// `x-kubernetes-int-or-string`, list-type `set`/`map` uniqueness, and `allOf`/`anyOf`/`oneOf`/`not`.
///
/// Guarantees: `metadata` at the root is skipped (ObjectMeta has its own validation); errors carry field paths
/// such as `spec.items[1].name`, in document order.
pub(crate) fn validate(object: &Value, schema: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Value::Object(map) = object {
        validate_object_fields(map, schema, "", true, &mut errors);
    }
    errors
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn validate_object_fields(
    map: &Map<String, Value>,
    schema: &Value,
    path: &str,
    root: bool,
    errors: &mut Vec<FieldError>,
) {
    for req in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if root && req == "metadata" {
            continue;
        }
        if !map.contains_key(req) {
            errors.push(FieldError::required(join(path, req), ""));
        }
    }
    for (k, v) in map {
        if root && matches!(k.as_str(), "metadata" | "apiVersion" | "kind") {
            continue;
        }
        if let Some(child) = property(schema, k) {
            validate_value(v, child, &join(path, k), errors);
        }
    }
    check_count(
        map.len(),
        schema,
        ("maxProperties", "minProperties", "properties"),
        path,
        errors,
    );
}

fn validate_value(value: &Value, schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if value.is_null() {
        if !flag(schema, "nullable") && schema.get("type").is_some() {
            let ty = schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            errors.push(FieldError::type_invalid(
                path,
                "null",
                format!("{path} in body must be of type {ty}: \"null\""),
            ));
        }
        return;
    }
    if !type_ok(value, schema, path, errors) {
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let supported: Vec<String> = allowed
            .iter()
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
            .collect();
        let refs: Vec<&str> = supported.iter().map(String::as_str).collect();
        errors.push(FieldError::not_supported(path, value.clone(), &refs));
    }
    match value {
        Value::Object(map) => validate_object_fields(map, schema, path, false, errors),
        Value::Array(items) => validate_array(items, schema, path, errors),
        Value::String(s) => validate_string(s, schema, path, errors),
        Value::Number(_) => validate_number(value, schema, path, errors),
        _ => {}
    }
    validate_combinators(value, schema, path, errors);
}

/// Checks `type`; returns whether the remaining checks make sense.
fn type_ok(value: &Value, schema: &Value, path: &str, errors: &mut Vec<FieldError>) -> bool {
    let actual = json_type(value);
    if flag(schema, "x-kubernetes-int-or-string") {
        if matches!(actual, "integer" | "string") {
            return true;
        }
        errors.push(FieldError::type_invalid(
            path,
            actual,
            format!(
                "{path} in body must be of type integer,string: {}",
                go_quote(actual)
            ),
        ));
        return false;
    }
    let Some(expected) = schema.get("type").and_then(Value::as_str) else {
        return true;
    };
    let ok = match expected {
        "number" => matches!(actual, "integer" | "number"),
        "integer" => {
            actual == "integer"
                || value
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && actual == "number")
        }
        other => other == actual,
    };
    if !ok {
        errors.push(FieldError::type_invalid(
            path,
            actual,
            format!(
                "{path} in body must be of type {expected}: {}",
                go_quote(actual)
            ),
        ));
    }
    ok
}

fn validate_string(s: &str, schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let len = s.chars().count() as u64;
    if let Some(max) = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .filter(|m| len > *m)
    {
        errors.push(FieldError::too_long(path, max as usize));
    }
    if let Some(min) = schema
        .get("minLength")
        .and_then(Value::as_u64)
        .filter(|m| len < *m)
    {
        errors.push(FieldError::invalid(
            path,
            s,
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        match regex::Regex::new(pattern) {
            Ok(re) if !re.is_match(s) => {
                errors.push(FieldError::invalid(
                    path,
                    s,
                    format!("{path} in body should match '{pattern}'"),
                ));
            }
            Ok(_) => {}
            Err(_) => errors.push(FieldError::invalid(
                path,
                s,
                format!("the schema pattern '{pattern}' does not compile"),
            )),
        }
    }
    if schema.get("format").and_then(Value::as_str) == Some("date-time")
        && s.parse::<jiff::Timestamp>().is_err()
    {
        errors.push(FieldError::invalid(
            path,
            s,
            format!("{path} in body must be of type date-time: {}", go_quote(s)),
        ));
    }
}

fn validate_number(value: &Value, schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(n) = value.as_f64() else { return };
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let shown = || value.clone();
    if let Some(min) = num("minimum") {
        if flag(schema, "exclusiveMinimum") && n <= min {
            errors.push(FieldError::invalid(
                path,
                shown(),
                format!("{path} in body should be greater than {min}"),
            ));
        } else if n < min {
            errors.push(FieldError::invalid(
                path,
                shown(),
                format!("{path} in body should be greater than or equal to {min}"),
            ));
        }
    }
    if let Some(max) = num("maximum") {
        if flag(schema, "exclusiveMaximum") && n >= max {
            errors.push(FieldError::invalid(
                path,
                shown(),
                format!("{path} in body should be less than {max}"),
            ));
        } else if n > max {
            errors.push(FieldError::invalid(
                path,
                shown(),
                format!("{path} in body should be less than or equal to {max}"),
            ));
        }
    }
    if let Some(m) = num("multipleOf").filter(|m| *m > 0.0 && (n / m).fract() != 0.0) {
        errors.push(FieldError::invalid(
            path,
            shown(),
            format!("{path} in body should be a multiple of {m}"),
        ));
    }
    let range = match schema.get("format").and_then(Value::as_str) {
        Some("int32") => Some((f64::from(i32::MIN), f64::from(i32::MAX))),
        _ => None,
    };
    if let Some((lo, hi)) = range.filter(|(lo, hi)| n < *lo || n > *hi) {
        errors.push(FieldError::invalid(
            path,
            shown(),
            format!("{path} in body should be within {lo} and {hi}"),
        ));
    }
}

fn validate_array(items: &[Value], schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    check_count(
        items.len(),
        schema,
        ("maxItems", "minItems", "items"),
        path,
        errors,
    );
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            validate_value(item, item_schema, &format!("{path}[{i}]"), errors);
        }
    }
    let list_type = schema.get("x-kubernetes-list-type").and_then(Value::as_str);
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let identity = |item: &Value| -> Value {
        match list_type {
            Some("map") => Value::Object(
                keys.iter()
                    .map(|k| {
                        (
                            (*k).to_string(),
                            item.get(*k).cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect(),
            ),
            _ => item.clone(),
        }
    };
    if flag(schema, "uniqueItems") || matches!(list_type, Some("set" | "map")) {
        let mut seen: Vec<Value> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let id = identity(item);
            if seen.contains(&id) {
                errors.push(FieldError::duplicate(format!("{path}[{i}]"), id));
            } else {
                seen.push(id);
            }
        }
    }
}

/// `maxProperties`/`minProperties` or `maxItems`/`minItems`: `keys` names the two keywords and the noun.
fn check_count(
    count: usize,
    schema: &Value,
    keys: (&str, &str, &str),
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let (max_key, min_key, noun) = keys;
    let limit = |k: &str| {
        schema
            .get(k)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    if let Some(max) = limit(max_key).filter(|m| count > *m) {
        errors.push(FieldError::too_many(path, count, max));
    }
    if let Some(min) = limit(min_key).filter(|m| count < *m) {
        errors.push(FieldError::invalid(
            path,
            count,
            format!("{path} in body should have at least {min} {noun}"),
        ));
    }
}

fn validate_combinators(value: &Value, schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let check = |s: &Value| {
        let mut errs = Vec::new();
        validate_value(value, s, path, &mut errs);
        errs
    };
    for s in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        errors.extend(check(s));
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && !any.is_empty()
        && any.iter().all(|s| !check(s).is_empty())
    {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            "must validate at least one schema (anyOf)",
        ));
    }
    if let Some(one) = schema
        .get("oneOf")
        .and_then(Value::as_array)
        .filter(|o| !o.is_empty())
    {
        let passing = one.iter().filter(|s| check(s).is_empty()).count();
        if passing != 1 {
            errors.push(FieldError::invalid(
                path,
                value.clone(),
                "must validate one and only one schema (oneOf)",
            ));
        }
    }
    if let Some(not) = schema.get("not")
        && check(not).is_empty()
    {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            "must not validate the schema (not)",
        ));
    }
}
