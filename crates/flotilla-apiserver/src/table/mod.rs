//! `meta.k8s.io` Table responses for `kubectl get` (spec §4.5).
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

pub(crate) use printers::Columns;

use crate::kind_info::KindInfo;
use jsonpath::JsonPath;
use serde_json::{Map, Value, json};

/// Which object each row carries (`includeObject` query parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// No object.
    None,
    /// A `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses the `includeObject` query value (`None`, `Metadata`, `Object`; empty = default).
    ///
    /// Errors: any other value, as a message for a 400.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value {
            "" | "Metadata" => Ok(Self::Metadata),
            "None" => Ok(Self::None),
            "Object" => Ok(Self::Object),
            other => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"None\", \"Metadata\", \"Object\""
            )),
        }
    }
}

/// How to render a table.
#[derive(Debug, Clone, Copy)]
pub struct TableOptions<'a> {
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`, following the requested media type.
    pub api_version: &'a str,
    /// What each row carries.
    pub include_object: IncludeObject,
    /// Whether to include `columnDefinitions` (watches send them only with the first event).
    pub with_columns: bool,
    /// Current time in seconds since the epoch, for ages.
    pub now: i64,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    pub name: String,
    pub ty: &'static str,
    pub format: &'static str,
    pub priority: i64,
    pub description: String,
}

impl Column {
    pub(crate) fn new(name: &str, ty: &'static str) -> Self {
        Self {
            name: name.to_string(),
            ty,
            format: "",
            priority: 0,
            description: String::new(),
        }
    }

    pub(crate) fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }

    pub(crate) fn format(mut self, format: &'static str) -> Self {
        self.format = format;
        self
    }

    pub(crate) fn describe(mut self, description: &str) -> Self {
        self.description = description.to_string();
        self
    }

    fn to_json(&self) -> Value {
        json!({"name": self.name, "type": self.ty, "format": self.format, "description": self.description, "priority": self.priority})
    }
}

pub(crate) const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.";
pub(crate) const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.";

/// The Name column every table starts with.
pub(crate) fn name_column() -> Column {
    Column::new("Name", "string")
        .format("name")
        .describe(NAME_DESCRIPTION)
}

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
        match crate::builtins::find_kind(kind.group, kind.kind).map(|b| b.printer) {
            Some(crate::builtins::Printer::Columns(c)) => Printer::Builtin(c),
            Some(crate::builtins::Printer::Default) | None => Printer::Default,
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

/// kubectl's age of an RFC 3339 timestamp relative to `now`: `<unknown>` when unparsable.
pub fn age_of(timestamp: &str, now: i64) -> String {
    match timestamp.parse::<jiff::Timestamp>() {
        Ok(t) => human_duration(now - t.as_second()),
        Err(_) => "<unknown>".to_string(),
    }
}

/// Upstream's `duration.HumanDuration` for a number of seconds.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// The row object for `include`.
fn row_object(obj: &Value, include: IncludeObject, api_version: &str) -> Option<Value> {
    match include {
        IncludeObject::None => None,
        IncludeObject::Object => Some(obj.clone()),
        IncludeObject::Metadata => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": api_version,
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        })),
    }
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
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let mut row = Map::new();
            row.insert(
                "cells".to_string(),
                Value::Array(printer.cells(obj, opts.now)),
            );
            if let Some(o) = row_object(obj, opts.include_object, opts.api_version) {
                row.insert("object".to_string(), o);
            }
            Value::Object(row)
        })
        .collect();
    let mut out = Map::new();
    out.insert("kind".to_string(), json!("Table"));
    out.insert("apiVersion".to_string(), json!(opts.api_version));
    out.insert("metadata".to_string(), list_metadata);
    if opts.with_columns {
        out.insert(
            "columnDefinitions".to_string(),
            Value::Array(printer.columns().iter().map(Column::to_json).collect()),
        );
    }
    out.insert("rows".to_string(), Value::Array(rows));
    Value::Object(out)
}

#[cfg(test)]
mod tests;
