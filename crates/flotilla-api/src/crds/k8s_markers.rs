//! What Kubernetes' own types declare about their schemas beyond what k8s-openapi's schemas say.
//!
//! Karmada's CRDs embed Kubernetes types (label and node selectors, `metav1.Condition`), and the Go declarations
//! of those types carry markers that CRD generators turn into schema keywords:
//! - selectors are atomic (`x-kubernetes-map-type: atomic` on the struct, `x-kubernetes-list-type: atomic` on
//!   its lists), so server-side apply gives a selector one owner and replaces it whole rather than merging two
//!   managers' requirements into one that neither wrote;
//! - a Condition's fields have lengths, patterns and an enum, so the API server refuses a malformed condition.
//!
//! k8s-openapi's schemas carry none of these, and a field's doc comment replaces its type's description, so an
//! embedded type cannot be found by name. [`apply`] finds each one by comparing every subtree of a generated
//! schema with the type's own generated schema, descriptions aside, and adds what the type declares. Any new
//! field of one of these types gets the keywords without being named here.
//!
//! Quantity is not among them: its schema is the bare int-or-string marker, which IntOrString shares, so the
//! fields holding quantities add its pattern themselves (`crate::schema::quantities`).

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, LabelSelectorRequirement,
};
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::structural;

/// A Condition's `type`: a CamelCase name, optionally prefixed by a DNS subdomain and `/`.
const CONDITION_TYPE_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

/// A Condition's `reason`: a CamelCase identifier (commas and colons allowed inside).
const CONDITION_REASON_PATTERN: &str = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$";

/// One Kubernetes type: its schema as it appears inlined in a CRD, and the keywords its Go declaration adds.
struct Declared {
    /// The type's generated schema, normalized as CRD schemas are.
    schema: Value,
    /// Keywords to add, each at a path relative to the type's node (`""` for the node itself; property names
    /// joined by `.`, as [`structural::node_mut`] reads them).
    keywords: Vec<(&'static str, Value)>,
}

impl Declared {
    fn of<T: JsonSchema>(keywords: Vec<(&'static str, Value)>) -> Self {
        let mut schema = super::schema_generator()
            .into_root_schema_for::<T>()
            .to_value();
        structural::normalize(&mut schema);
        Self { schema, keywords }
    }

    fn add_to(&self, node: &mut Value) {
        for (path, keywords) in &self.keywords {
            if let (Some(target), Some(keywords)) = (
                structural::node_mut(node, path).and_then(Value::as_object_mut),
                keywords.as_object(),
            ) {
                target.extend(keywords.clone());
            }
        }
    }
}

/// The Kubernetes types Karmada's CRDs embed whose declarations add keywords, with those keywords.
///
/// A type nested in another is listed on its own (LabelSelectorRequirement in LabelSelector, NodeSelectorTerm
/// in NodeSelector): it is then found wherever it appears, nested or not (Karmada's FieldSelector holds
/// NodeSelectorRequirements directly).
fn declared() -> Vec<Declared> {
    let atomic_struct = || json!({"x-kubernetes-map-type": "atomic"});
    let atomic_list = || json!({"x-kubernetes-list-type": "atomic"});
    vec![
        Declared::of::<LabelSelector>(vec![
            ("", atomic_struct()),
            ("matchExpressions", atomic_list()),
        ]),
        Declared::of::<LabelSelectorRequirement>(vec![("values", atomic_list())]),
        Declared::of::<NodeSelector>(vec![
            ("", atomic_struct()),
            ("nodeSelectorTerms", atomic_list()),
        ]),
        Declared::of::<NodeSelectorTerm>(vec![
            ("", atomic_struct()),
            ("matchExpressions", atomic_list()),
            ("matchFields", atomic_list()),
        ]),
        Declared::of::<NodeSelectorRequirement>(vec![("values", atomic_list())]),
        Declared::of::<Condition>(vec![
            (
                "type",
                json!({"maxLength": 316, "pattern": CONDITION_TYPE_PATTERN}),
            ),
            (
                "reason",
                json!({"maxLength": 1024, "minLength": 1, "pattern": CONDITION_REASON_PATTERN}),
            ),
            ("message", json!({"maxLength": 32768})),
            ("status", json!({"enum": ["True", "False", "Unknown"]})),
            ("observedGeneration", json!({"minimum": 0})),
        ]),
    ]
}

/// Adds, wherever a normalized CRD schema embeds one of the Kubernetes types above, the keywords that type
/// declares.
pub(super) fn apply(schema: &mut Value) {
    mark(schema, &declared());
}

/// Marks `node`'s subtree bottom-up, having compared `node` with the types first: every comparison then sees the
/// subtree as generated, before any keyword is added to it.
fn mark(node: &mut Value, declared: &[Declared]) {
    let found: Vec<&Declared> = declared
        .iter()
        .filter(|d| same_schema(node, &d.schema))
        .collect();
    if let Some(object) = node.as_object_mut() {
        structural::for_each_subschema(object, |sub| mark(sub, declared));
    }
    for d in found {
        d.add_to(node);
    }
}

/// Whether two schemas are the same apart from their descriptions (a field's doc comment replaces its type's).
fn same_schema(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let keywords = |m: &Map<String, Value>| m.keys().filter(|k| *k != "description").count();
    keywords(a) == keywords(b)
        && a.iter()
            .filter(|(k, _)| *k != "description")
            .all(|(k, va)| {
                b.get(k).is_some_and(|vb| match k.as_str() {
                    // Property names are data here, not keywords: a property called `description` counts.
                    "properties" => same_schemas_by_name(va, vb),
                    "items" | "additionalProperties" | "not" => same_schema(va, vb),
                    "anyOf" | "oneOf" | "allOf" => same_schema_lists(va, vb),
                    _ => va == vb,
                })
            })
}

fn same_schemas_by_name(a: &Value, b: &Value) -> bool {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(name, va)| b.get(name).is_some_and(|vb| same_schema(va, vb)))
        }
        _ => a == b,
    }
}

fn same_schema_lists(a: &Value, b: &Value) -> bool {
    match (a.as_array(), b.as_array()) {
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_schema(x, y)),
        _ => a == b,
    }
}
