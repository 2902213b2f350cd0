//! `meta.k8s.io` Tables, the answer to `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` that kubectl
//! prints: the frame k8s.io/apiserver's handlers build around a printer's columns and cells (`asTable`), so that
//! every server answers with the same shape and wording.
//!
//! Guarantees, as kube-apiserver encodes a `metav1.Table` in JSON:
//! - `columnDefinitions` is `null` when left out (a watch sends them with its first event only);
//! - `rows` is always an array, one row per object, each with its `cells` and its `object`;
//! - a row's `object` is what `includeObject` asks for: the object itself (`Object`), a
//!   `PartialObjectMetadata` of the Table's version (`Metadata`, the default) or `null` (`None`); the bookmark
//!   that ends a watch's initial events keeps its metadata whatever was asked, so clients can see its annotation.

use serde_json::{Map, Value, json};

/// `metav1.ObjectMeta`'s documentation of `name`, the description of every Name column.
pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, \
although some resources may allow a client to request the generation of an appropriate name automatically. Name is \
primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: \
https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// `metav1.ObjectMeta`'s documentation of `creationTimestamp`, the description of Age and Created At columns.
pub const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time \
when this object was created. It is not guaranteed to be set in happens-before order across separate operations. \
Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. \
Read-only. Null for lists. More info: \
https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The annotation of the bookmark that ends a watch's initial events (`k8s.io/initial-events-end`).
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// One column of a table (`metav1.TableColumnDefinition`).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The header, e.g. `Name`.
    pub name: String,
    /// The OpenAPI type of the cells: `string`, `integer`, `number`, `boolean` or `date`.
    pub ty: &'static str,
    /// The OpenAPI format, e.g. `name` for the Name column; usually empty.
    pub format: &'static str,
    /// 0 for columns kubectl always prints, 1 and more for `-o wide`.
    pub priority: i64,
    /// What the column shows.
    pub description: String,
}

impl Column {
    /// A column of priority 0 with no format and no description.
    pub fn new(name: &str, ty: &'static str) -> Self {
        Self {
            name: name.to_string(),
            ty,
            format: "",
            priority: 0,
            description: String::new(),
        }
    }

    /// The same column shown by `-o wide` only (priority 1).
    #[must_use]
    pub fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }

    /// The same column with `format`.
    #[must_use]
    pub fn format(mut self, format: &'static str) -> Self {
        self.format = format;
        self
    }

    /// The same column with `description`.
    #[must_use]
    pub fn describe(mut self, description: &str) -> Self {
        self.description = description.to_string();
        self
    }

    /// The column definition as JSON.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "type": self.ty, "format": self.format, "description": self.description,
               "priority": self.priority})
    }
}

/// The Name column every table starts with.
pub fn name_column() -> Column {
    Column::new("Name", "string")
        .format("name")
        .describe(NAME_DESCRIPTION)
}

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
    /// Parses the `includeObject` query value (`None`, `Metadata`, `Object`; empty or absent = `Metadata`).
    ///
    /// # Errors
    /// Any other value: the message of kube-apiserver's `400 BadRequest`.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value {
            "" | "Metadata" => Ok(Self::Metadata),
            "None" => Ok(Self::None),
            "Object" => Ok(Self::Object),
            other => Err(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', \
                 'Object', 'None', or empty",
                crate::validation::go_quote(other)
            )),
        }
    }
}

/// How a table is rendered.
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

/// A Table of `columns` with one row per `(cells, object)`; `list_metadata` becomes its `metadata`
/// (`resourceVersion`, and for lists `continue` and `remainingItemCount`).
pub fn table<'o>(
    columns: &[Column],
    rows: impl IntoIterator<Item = (Vec<Value>, &'o Value)>,
    list_metadata: Value,
    opts: &TableOptions<'_>,
) -> Value {
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|(cells, object)| {
            json!({"cells": cells, "object": row_object(object, opts.include_object, opts.api_version)})
        })
        .collect();
    let mut out = Map::new();
    out.insert("kind".to_string(), json!("Table"));
    out.insert("apiVersion".to_string(), json!(opts.api_version));
    out.insert("metadata".to_string(), list_metadata);
    let definitions = if opts.with_columns {
        Value::Array(columns.iter().map(Column::to_json).collect())
    } else {
        Value::Null
    };
    out.insert("columnDefinitions".to_string(), definitions);
    out.insert("rows".to_string(), Value::Array(rows));
    Value::Object(out)
}

/// The object a row carries for `include`.
fn row_object(object: &Value, include: IncludeObject, api_version: &str) -> Value {
    let ends_initial_events = object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(INITIAL_EVENTS_END))
        .is_some_and(|value| value == "true");
    match include {
        IncludeObject::Object => object.clone(),
        IncludeObject::None if !ends_initial_events => Value::Null,
        IncludeObject::Metadata | IncludeObject::None => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": api_version,
            "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn opts(include: IncludeObject) -> TableOptions<'static> {
        TableOptions {
            api_version: "meta.k8s.io/v1",
            include_object: include,
            with_columns: true,
            now: 0,
        }
    }

    fn columns() -> Vec<Column> {
        vec![
            name_column(),
            Column::new("Zones", "string").wide().describe("Zones."),
        ]
    }

    fn object() -> Value {
        json!({"apiVersion": "x.example.com/v1", "kind": "X",
               "metadata": {"name": "a", "resourceVersion": "7"}, "spec": {"zones": ["z"]}})
    }

    fn one_row(include: IncludeObject, object: &Value) -> Value {
        table(
            &columns(),
            [(vec![json!("a"), json!("z")], object)],
            json!({"resourceVersion": "7"}),
            &opts(include),
        )
    }

    #[test]
    fn tables_carry_columns_rows_and_list_metadata() {
        let object = object();
        let table = one_row(IncludeObject::Metadata, &object);
        assert_eq!(
            table,
            json!({
                "kind": "Table",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": "7"},
                "columnDefinitions": [
                    {"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION,
                     "priority": 0},
                    {"name": "Zones", "type": "string", "format": "", "description": "Zones.", "priority": 1},
                ],
                "rows": [{"cells": ["a", "z"], "object": {
                    "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"name": "a", "resourceVersion": "7"}}}],
            })
        );
    }

    #[test]
    fn rows_carry_what_include_object_asks_for() {
        let object = object();
        assert_eq!(
            one_row(IncludeObject::Object, &object)["rows"][0]["object"],
            object
        );
        let none = one_row(IncludeObject::None, &object);
        assert_eq!(none["rows"][0].get("object"), Some(&Value::Null));
        let bookmark = json!({"kind": "X", "metadata": {"resourceVersion": "9",
            "annotations": {"k8s.io/initial-events-end": "true"}}});
        assert_eq!(
            one_row(IncludeObject::None, &bookmark)["rows"][0]["object"]["kind"],
            "PartialObjectMetadata",
            "the end of the initial events keeps its annotation"
        );
    }

    #[test]
    fn later_watch_events_have_null_column_definitions() {
        let object = object();
        let later = TableOptions {
            with_columns: false,
            api_version: "meta.k8s.io/v1beta1",
            ..opts(IncludeObject::Metadata)
        };
        let table = table(&columns(), [(vec![], &object)], json!({}), &later);
        assert_eq!(table.get("columnDefinitions"), Some(&Value::Null));
        assert_eq!(table["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(
            table["rows"][0]["object"]["apiVersion"],
            "meta.k8s.io/v1beta1"
        );
        let empty = super::table(&columns(), [], json!({}), &opts(IncludeObject::Metadata));
        assert_eq!(empty["rows"], json!([]));
    }

    #[test]
    fn include_object_parses_as_kube_apiserver_does() {
        assert_eq!(IncludeObject::parse(""), Ok(IncludeObject::Metadata));
        assert_eq!(
            IncludeObject::parse("Metadata"),
            Ok(IncludeObject::Metadata)
        );
        assert_eq!(IncludeObject::parse("None"), Ok(IncludeObject::None));
        assert_eq!(IncludeObject::parse("Object"), Ok(IncludeObject::Object));
        assert_eq!(
            IncludeObject::parse("Bad"),
            Err("Unable to convert to Table as requested: includeObject: Invalid value: \"Bad\": must be \
                 'Metadata', 'Object', 'None', or empty"
                .to_owned())
        );
    }
}
