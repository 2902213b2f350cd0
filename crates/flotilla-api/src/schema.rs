//! Schema helpers for fields whose generated schema says more or less than the field's Go counterpart in
//! Karmada: free-form JSON (raw manifests and statuses), resource quantities, and Go `int`s.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::Value;

/// What a Quantity written as a string must look like: a signed decimal number with an optional binary (`Ki`,
/// `Mi`, ...), decimal (`m`, `k`, `M`, ...) or exponent (`e3`) suffix.
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// An object whose fields are not checked: `x-kubernetes-preserve-unknown-fields`, as Karmada's raw JSON.
pub(crate) fn preserve_unknown_object(_generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// Any JSON value, unchecked: `x-kubernetes-preserve-unknown-fields` without a type, as Karmada's
/// `apiextensionsv1.JSON` fields (override values).
pub(crate) fn preserve_unknown_value(_generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// For a map of Quantities (a resource list): each value, when a string, must be a quantity, so the API server
/// refuses a request such as `cpu: lots` as Karmada's does.
///
/// A field transform rather than part of the CRD post-processing: a Quantity's schema is the bare
/// int-or-string marker, indistinguishable from an IntOrString's (which takes `50%`), so only the field's type
/// says which it is.
pub(crate) fn quantities(schema: &mut Schema) {
    if let Some(values) = schema
        .get_mut("additionalProperties")
        .and_then(Value::as_object_mut)
    {
        values.insert("pattern".to_owned(), QUANTITY_PATTERN.into());
    }
}

/// For a field Karmada declares as Go `int`: no `format`, as Karmada's CRDs have it, since Go's `int` has the
/// platform's width. Flotilla holds the field as an `i64`, which schemars would describe as `int64`.
pub(crate) fn go_int(schema: &mut Schema) {
    schema.remove("format");
}
