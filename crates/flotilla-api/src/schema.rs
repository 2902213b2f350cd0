//! Schema helpers for fields Karmada leaves free-form (raw manifests and statuses).

use schemars::{Schema, SchemaGenerator, json_schema};

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
