//! Making generated schemas structural, and checking that they are.
//!
//! Kubernetes accepts only structural schemas for CRDs: every node names its `type` (except int-or-string and
//! preserve-unknown-fields nodes), no `$ref`, no `anyOf`/`oneOf`/`allOf`/`not` carrying types, no object with
//! both `properties` and `additionalProperties`. kube's derive already inlines references and hoists enums;
//! [`normalize`] removes what is left (`nullable`, `title`, unknown formats, float bounds) so the YAML reads like
//! Karmada's, and [`violations`] checks the result.

use serde_json::{Map, Value, json};

/// Formats the Kubernetes API server knows; any other is dropped.
const KNOWN_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "duration",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "password",
];

const SCHEMA_TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

/// Rewrites a generated schema in place so that it is structural and minimal.
pub fn normalize(schema: &mut Value) {
    let Some(node) = schema.as_object_mut() else {
        return;
    };
    for key in [
        "nullable",
        "title",
        "$schema",
        "definitions",
        "$defs",
        "uniqueItems",
    ] {
        node.remove(key);
    }
    if node.get("default") == Some(&Value::Null) {
        node.remove("default");
    }
    if let Some(format) = node.get("format").and_then(Value::as_str)
        && !KNOWN_FORMATS.contains(&format)
    {
        node.remove("format");
    }
    for bound in ["minimum", "maximum"] {
        if let Some(value) = node.get(bound).and_then(Value::as_f64)
            && value.fract() == 0.0
            && let Some(int) = node.get(bound).and_then(Value::as_f64).map(|v| v as i64)
        {
            node.insert(bound.to_owned(), json!(int));
        }
    }
    if node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        // The one anyOf form structural schemas allow: it tells clients both encodings are valid.
        node.remove("type");
        // k8s-openapi's Quantity doc is a page long and would repeat under every resource list.
        if node
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| d.starts_with("Quantity is a fixed-point"))
        {
            node.remove("description");
        }
        node.insert(
            "anyOf".to_owned(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
        return;
    }
    if let Some(Value::Bool(allowed)) = node.get("additionalProperties") {
        if *allowed {
            node.insert(
                "x-kubernetes-preserve-unknown-fields".to_owned(),
                Value::Bool(true),
            );
        }
        node.remove("additionalProperties");
    }
    for_each_subschema(node, normalize);
}

/// Lists every way `schema` is not a structural schema as Kubernetes defines it, each with its JSON path.
pub fn violations(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    check(schema, "", &mut found);
    found
}

fn check(schema: &Value, path: &str, found: &mut Vec<String>) {
    let Some(node) = schema.as_object() else {
        found.push(format!("{path}: schema is not an object"));
        return;
    };
    let mut fail = |what: String| {
        found.push(format!(
            "{}: {what}",
            if path.is_empty() { "." } else { path }
        ))
    };
    for key in [
        "$ref",
        "$schema",
        "definitions",
        "$defs",
        "nullable",
        "allOf",
        "oneOf",
        "not",
        "uniqueItems",
    ] {
        if node.contains_key(key) {
            fail(format!("forbidden keyword {key}"));
        }
    }
    let int_or_string = node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let preserve = node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if let Some(any_of) = node.get("anyOf")
        && !(int_or_string && *any_of == json!([{"type": "integer"}, {"type": "string"}]))
    {
        fail("anyOf other than the int-or-string form".to_owned());
    }
    match node.get("type").and_then(Value::as_str) {
        Some(kind) if !SCHEMA_TYPES.contains(&kind) => fail(format!("unknown type {kind}")),
        Some(_) if int_or_string => fail("int-or-string node with a type".to_owned()),
        Some("array") if !node.contains_key("items") => fail("array without items".to_owned()),
        Some(_) => {}
        None if node.contains_key("type") => fail("type is not a string".to_owned()),
        None if !(int_or_string || preserve) => fail("missing type".to_owned()),
        None => {}
    }
    if let Some(format) = node.get("format").and_then(Value::as_str)
        && !KNOWN_FORMATS.contains(&format)
    {
        fail(format!("unknown format {format}"));
    }
    if node.contains_key("properties") && node.contains_key("additionalProperties") {
        fail("both properties and additionalProperties".to_owned());
    }
    if let Some(extra) = node.get("additionalProperties")
        && !extra.is_object()
    {
        fail("additionalProperties is not a schema".to_owned());
    }
    if let Some(required) = node.get("required").and_then(Value::as_array) {
        let properties = node.get("properties").and_then(Value::as_object);
        for name in required.iter().filter_map(Value::as_str) {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                fail(format!("required property {name} is not declared"));
            }
        }
    }
    let kind = node.get("type").and_then(Value::as_str);
    for (keyword, value) in node
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| ("enum", v))
        .chain(node.get("default").map(|v| ("default", v)))
    {
        if let Some(kind) = kind
            && !value_has_type(value, kind)
        {
            fail(format!("{keyword} value {value} is not of type {kind}"));
        }
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            check(sub, &format!("{path}.{name}"), found);
        }
    }
    if let Some(items) = node.get("items") {
        check(items, &format!("{path}[]"), found);
    }
    if let Some(extra) = node.get("additionalProperties").filter(|v| v.is_object()) {
        check(extra, &format!("{path}{{}}"), found);
    }
}

fn value_has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        _ => false,
    }
}

/// Calls `visit` on each direct subschema of `node`: properties, items, additional properties, combinators.
pub(super) fn for_each_subschema(node: &mut Map<String, Value>, mut visit: impl FnMut(&mut Value)) {
    if let Some(properties) = node.get_mut("properties").and_then(Value::as_object_mut) {
        properties.values_mut().for_each(&mut visit);
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = node.get_mut(key).filter(|v| v.is_object()) {
            visit(sub);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(subs) = node.get_mut(key).and_then(Value::as_array_mut) {
            subs.iter_mut().for_each(&mut visit);
        }
    }
}

/// The schema node at a dotted path of property names (`[]` steps into array items), if present.
pub fn node_mut<'a>(schema: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    path.split('.')
        .filter(|step| !step.is_empty())
        .try_fold(schema, |node, step| {
            let (name, into_items) = match step.strip_suffix("[]") {
                Some(name) => (name, true),
                None => (step, false),
            };
            let child = node.get_mut("properties")?.get_mut(name)?;
            if into_items {
                child.get_mut("items")
            } else {
                Some(child)
            }
        })
}
