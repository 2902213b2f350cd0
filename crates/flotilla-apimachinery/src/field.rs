//! Field-level validation errors worded like kube-apiserver: upstream's `field.Error` and the text of the
//! `422 Invalid` Status that carries them.
//!
//! A [`FieldError`] has a JSON field path (`metadata.labels`), an [`ErrorType`] (whose reason, such as
//! `FieldValueInvalid`, becomes a Status cause), the offending value and a detail. [`invalid_message`] is the
//! Status message `<Kind[.group]> "<name>" is invalid: <errors>`; each server wraps it and one cause per error
//! ([`FieldError::reason`], [`FieldError::body`], [`FieldError::field`]) into its own Status type.

use std::fmt;

use serde_json::Value;

use crate::validation::go_quote;

/// The kind of a field error; one-to-one with the Status cause reasons (`FieldValueInvalid`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// A value that must exist was not found (`FieldValueNotFound`).
    NotFound,
    /// A required value is missing (`FieldValueRequired`).
    Required,
    /// A value that must be unique is repeated (`FieldValueDuplicate`).
    Duplicate,
    /// A malformed value (`FieldValueInvalid`).
    Invalid,
    /// A value outside an enumeration (`FieldValueNotSupported`).
    NotSupported,
    /// A well-formed value that is not allowed here (`FieldValueForbidden`).
    Forbidden,
    /// A value longer than allowed (`FieldValueTooLong`).
    TooLong,
    /// A list with too many items (`FieldValueTooMany`).
    TooMany,
    /// A list with too few items (`FieldValueTooFew`).
    TooFew,
    /// A value of the wrong JSON type (`FieldValueTypeInvalid`).
    TypeInvalid,
    /// A server-side failure unrelated to the input (`InternalError`).
    Internal,
}

impl ErrorType {
    /// The Status cause reason, e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotFound => "FieldValueNotFound",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::TooFew => "FieldValueTooFew",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::Internal => "InternalError",
        }
    }

    /// The human wording that starts the error body, e.g. `Invalid value`.
    pub fn label(self) -> &'static str {
        match self {
            Self::NotFound => "Not found",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::TooFew => "Too few",
            Self::Internal => "Internal error",
        }
    }
}

/// The offending value of a [`FieldError`].
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    /// A JSON value: strings are quoted, numbers and booleans printed, anything else written as JSON.
    Json(Value),
    /// A structure already written as Go's `json.Marshal` writes it, fields in declaration order (a
    /// `serde_json::Value` object would sort them).
    Struct(String),
}

impl From<Value> for BadValue {
    fn from(value: Value) -> Self {
        BadValue::Json(value)
    }
}

/// One field-level validation error.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// JSON path of the field, e.g. `metadata.labels` or `spec.containers[0].name`.
    pub field: String,
    /// What is wrong.
    pub error_type: ErrorType,
    /// The offending value, rendered into the message; `None` when upstream omits it.
    pub bad_value: Option<BadValue>,
    /// Free-text detail appended after the value.
    pub detail: String,
}

impl FieldError {
    /// An error of any type: the constructors below are the usual ones.
    pub fn new(
        field: impl Into<String>,
        error_type: ErrorType,
        bad_value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            error_type,
            bad_value: bad_value.map(BadValue::Json),
            detail: detail.into(),
        }
    }

    /// A malformed structure (`Invalid value: {"a":1}: <detail>`), written with `value`'s own field order as Go
    /// writes a struct. A value that cannot be written as JSON is shown as `null`.
    pub fn invalid_struct(
        field: impl Into<String>,
        value: &impl serde::Serialize,
        detail: impl Into<String>,
    ) -> Self {
        let written = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
        Self {
            field: field.into(),
            error_type: ErrorType::Invalid,
            bad_value: Some(BadValue::Struct(written)),
            detail: detail.into(),
        }
    }

    /// A malformed value (`Invalid value: "x": <detail>`).
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(field, ErrorType::Invalid, Some(value.into()), detail)
    }

    /// A missing value (`Required value[: <detail>]`).
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, ErrorType::Required, None, detail)
    }

    /// A forbidden value (`Forbidden: <detail>`).
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, ErrorType::Forbidden, None, detail)
    }

    /// A repeated value (`Duplicate value: "x"`).
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(field, ErrorType::Duplicate, Some(value.into()), "")
    }

    /// A value outside `supported` (`Unsupported value: "x": supported values: "a", "b"`).
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<Value>,
        supported: &[&str],
    ) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(field, ErrorType::NotSupported, Some(value.into()), detail)
    }

    /// A value over `max` bytes (`Too long: may not be more than <max> bytes`).
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self::new(
            field,
            ErrorType::TooLong,
            None,
            format!("may not be more than {max} {unit}"),
        )
    }

    /// A list with `actual` items where at most `max` are allowed.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        let unit = if max == 1 { "item" } else { "items" };
        Self::new(
            field,
            ErrorType::TooMany,
            Some(Value::from(actual)),
            format!("must have at most {max} {unit}"),
        )
    }

    /// A value of the wrong type (`Invalid value: "x": <detail>`, reason `FieldValueTypeInvalid`).
    pub fn type_invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(field, ErrorType::TypeInvalid, Some(value.into()), detail)
    }

    /// The same error with `prefix.` put in front of its field path (for errors built relative to a sub-object).
    #[must_use]
    pub fn under(mut self, prefix: &str) -> Self {
        self.field = join_path(prefix, &self.field);
        self
    }

    /// The Status cause reason, e.g. `FieldValueInvalid`.
    pub fn reason(&self) -> &'static str {
        self.error_type.reason()
    }

    /// The message without the field: upstream's `ErrorBody`, used as the Status cause message.
    pub fn body(&self) -> String {
        let mut s = match (self.error_type, &self.bad_value) {
            (
                ErrorType::Required
                | ErrorType::Forbidden
                | ErrorType::TooLong
                | ErrorType::Internal,
                _,
            )
            | (_, None) => self.error_type.label().to_string(),
            (_, Some(value)) => format!("{}: {}", self.error_type.label(), render_value(value)),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Joins two JSON field paths with a dot, leaving out empty parts and not doubling dots before `[`.
pub fn join_path(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => prefix.to_string(),
        _ if rest.starts_with('[') => format!("{prefix}{rest}"),
        _ => format!("{prefix}.{rest}"),
    }
}

/// Go renders simple values with `%v`, strings with `%q` and everything else as JSON.
fn render_value(value: &BadValue) -> String {
    match value {
        BadValue::Json(Value::String(s)) => go_quote(s),
        BadValue::Json(Value::Number(n)) => n.to_string(),
        BadValue::Json(Value::Bool(b)) => b.to_string(),
        BadValue::Json(other) => other.to_string(),
        BadValue::Struct(written) => written.clone(),
    }
}

/// Upstream's aggregate error text: one message as is, several deduplicated inside `[a, b]`.
pub fn aggregate_message(errors: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let msg = e.to_string();
        if !seen.contains(&msg) {
            seen.push(msg);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// The message of the `422 Invalid` Status for `errors` on object `name` of `kind` in API `group` (empty for the
/// core group): `<Kind[.group]> "<name>" is invalid: <aggregate>` (upstream's `errors.NewInvalid`).
pub fn invalid_message(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> String {
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    if errors.is_empty() {
        format!("{qualified} {} is invalid", go_quote(name))
    } else {
        format!(
            "{qualified} {} is invalid: {}",
            go_quote(name),
            aggregate_message(errors)
        )
    }
}

#[cfg(test)]
mod tests;
