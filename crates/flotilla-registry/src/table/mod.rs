//! `meta.k8s.io` Table responses for `kubectl get`.
//!
//! kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and prints the columns it gets back, so the
//! columns here are the real server's: the built-in printers' columns for the common kinds (Pod's
//! READY/STATUS/RESTARTS, Deployment's READY/UP-TO-DATE/AVAILABLE, ...), a CRD version's
//! `additionalPrinterColumns` (or an implied Age) for custom resources, and the generic Name / Created At table
//! for everything else. Ages are rendered as kubectl shows them (`5m10s`, `3h`, `4d2h`).

mod cells;
mod hpa;
pub mod jsonpath;
mod printers;

// The frame of a Table and the ages in it are shared with the aggregated API server.
pub(crate) use flotilla_apimachinery::duration::{age_of, human_duration};
pub(crate) use flotilla_apimachinery::table::{
    CREATION_TIMESTAMP_DESCRIPTION as AGE_DESCRIPTION, Column, name_column,
};
pub use flotilla_apimachinery::table::{IncludeObject, TableOptions};

use crate::kind_info::KindInfo;
use crate::kinds::Columns;
use jsonpath::JsonPath;
use serde_json::Value;

/// How the rows of one kind are built.
enum Printer {
    /// A built-in printer.
    Builtin(Columns),
    /// A custom resource's printer columns (JSONPath per column).
    Custom(Vec<(Column, Option<JsonPath>)>),
    /// Name and Created At.
    Default,
}

impl Printer {
    fn for_kind(kind: &KindInfo<'_>) -> Self {
        if let Some(version) = kind.crd_version {
            return Printer::Custom(custom_columns(version));
        }
        match crate::kinds::find_kind(kind.group, kind.kind).map(|b| b.printer) {
            Some(crate::kinds::Printer::Columns(c)) => Printer::Builtin(c),
            Some(crate::kinds::Printer::Default) | None => Printer::Default,
        }
    }

    fn columns(&self) -> Vec<Column> {
        match self {
            Printer::Builtin(b) => b.columns(),
            Printer::Custom(cols) => std::iter::once(name_column())
                .chain(cols.iter().map(|(c, _)| c.clone()))
                .collect(),
            Printer::Default => vec![
                name_column(),
                Column::new("Created At", "date").describe(AGE_DESCRIPTION),
            ],
        }
    }

    fn cells(&self, obj: &Value, now: i64) -> Vec<Value> {
        let name = Value::String(str_at(obj, "/metadata/name").to_string());
        match self {
            Printer::Builtin(b) => b.cells(obj, now),
            Printer::Custom(cols) => std::iter::once(name)
                .chain(
                    cols.iter()
                        .map(|(col, path)| custom_cell(obj, col, path.as_ref(), now)),
                )
                .collect(),
            Printer::Default => vec![
                name,
                Value::String(str_at(obj, "/metadata/creationTimestamp").to_string()),
            ],
        }
    }
}

/// A CRD version's printer columns; a version without any gets an Age column, as upstream implies one.
fn custom_columns(version: &Value) -> Vec<(Column, Option<JsonPath>)> {
    let declared = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    let Some(declared) = declared else {
        let age = Column::new("Age", "date").describe(AGE_DESCRIPTION);
        return vec![(age, JsonPath::parse(".metadata.creationTimestamp").ok())];
    };
    declared
        .iter()
        .map(|c| {
            let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
            let ty = match text("type") {
                "integer" => "integer",
                "number" => "number",
                "boolean" => "boolean",
                "date" => "date",
                _ => "string",
            };
            let mut col = Column::new(text("name"), ty).describe(text("description"));
            col.priority = c.get("priority").and_then(Value::as_i64).unwrap_or(0);
            // Formats are free text in CRDs; only the well-known ones are passed on.
            col.format = match text("format") {
                "int32" => "int32",
                "int64" => "int64",
                "float" => "float",
                "double" => "double",
                "byte" => "byte",
                "date" => "date",
                "date-time" => "date-time",
                "password" => "password",
                _ => "",
            };
            (col, JsonPath::parse(text("jsonPath")).ok())
        })
        .collect()
}

fn custom_cell(obj: &Value, col: &Column, path: Option<&JsonPath>, now: i64) -> Value {
    let found = path.map(|p| p.find(obj)).unwrap_or_default();
    let Some(first) = found.first() else {
        return Value::Null;
    };
    match col.ty {
        "date" => match first.as_str() {
            Some(ts) => Value::String(age_of(ts, now)),
            None => Value::String("<invalid>".to_string()),
        },
        // Upstream prints string columns through JSONPath: every match, space separated, Go formatting.
        "string" => Value::String(
            found
                .iter()
                .map(|v| crate::patch::go_text(v))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => (*first).clone(),
    }
}

pub(crate) fn str_at<'v>(obj: &'v Value, pointer: &str) -> &'v str {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Renders `objects` of `kind` as a Table; `list_metadata` becomes the table's `metadata` (`resourceVersion`,
/// `continue`, `remainingItemCount`).
///
/// Guarantees: one row per object, in order, each with as many cells as there are columns; rows carry the
/// object `includeObject` asks for (a `PartialObjectMetadata` by default, which keeps `metadata.namespace` for
/// `kubectl get -A`).
pub fn table(
    kind: &KindInfo<'_>,
    objects: &[Value],
    list_metadata: Value,
    opts: &TableOptions<'_>,
) -> Value {
    let printer = Printer::for_kind(kind);
    flotilla_apimachinery::table::table(
        &printer.columns(),
        objects
            .iter()
            .map(|obj| (printer.cells(obj, opts.now), obj)),
        list_metadata,
        opts,
    )
}

#[cfg(test)]
mod tests;
