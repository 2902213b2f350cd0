//! Label selectors: the `labelSelector` query grammar and `metav1.LabelSelector` objects.
//!
//! [`Selector::parse`] follows the real API server's parser token for token, including its quirks: `in`/`notin`
//! are keywords only in operator position (`x in (in)` is fine), `x in ()` means the single empty value, `x=`
//! means `x` equals the empty string, and `>`/`<` take integers. Error messages are the real server's, so a
//! client sees the same `400` text either way.
//!
//! The input is the already URL-decoded query value (the HTTP layer turns `+` into a space first).

use crate::validation::FieldError;
use crate::validation::format::{go_quote, is_qualified_name, is_valid_label_value};
use serde_json::{Map, Value};
use std::fmt;

/// A label selector that failed to parse or convert; the message is the real server's wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    /// The full message, e.g. `unable to parse requirement: found '', expected: identifier`.
    pub message: String,
}

impl SelectorError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The `400 BadRequest` Status the API server answers for a bad `labelSelector` query parameter.
    pub fn to_status(&self) -> kube::core::Status {
        kube::core::Status::failure(&self.message, "BadRequest").with_code(400)
    }
}

/// How a [`Requirement`] relates its key to its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operator {
    /// `key=value`.
    Equals,
    /// `key==value`.
    DoubleEquals,
    /// `key!=value`: matches when the key is absent or has another value.
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)`: matches when the key is absent or has none of the values.
    NotIn,
    /// `key`: the key is present.
    Exists,
    /// `!key`: the key is absent.
    DoesNotExist,
    /// `key>n`: present with an integer value greater than n.
    GreaterThan,
    /// `key<n`: present with an integer value less than n.
    LessThan,
}

/// One clause of a selector: a key, an operator and (for binary operators) sorted, deduplicated values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Builds a requirement with upstream's checks: label-key syntax, value count per operator, integer values
    /// for `>`/`<` and label-value syntax for every value.
    ///
    /// Errors: every violation, aggregated as upstream does (`values[0][key]: Invalid value: ...`).
    pub fn new(
        key: &str,
        operator: Operator,
        mut values: Vec<String>,
    ) -> Result<Self, SelectorError> {
        let mut errs = Vec::new();
        let key_errs = is_qualified_name(key);
        if !key_errs.is_empty() {
            errs.push(FieldError::invalid("key", key, key_errs.join("; ")));
        }
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                errs.push(FieldError::invalid(
                    "values",
                    values.clone(),
                    "for 'in', 'notin' operators, values set can't be empty",
                ));
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(FieldError::invalid(
                    "values",
                    values.clone(),
                    "exact-match compatibility requires one single value",
                ));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                errs.push(FieldError::invalid(
                    "values",
                    values.clone(),
                    "values set must be empty for exists and does not exist",
                ));
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(FieldError::invalid(
                        "values",
                        values.clone(),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(FieldError::invalid(
                            format!("values[{i}]"),
                            v.as_str(),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let value_errs = is_valid_label_value(v);
            if !value_errs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("values[{i}][{key}]"),
                    v.as_str(),
                    value_errs.join("; "),
                ));
            }
        }
        if !errs.is_empty() {
            return Err(SelectorError::new(
                flotilla_apimachinery::field::aggregate_message(&errs),
            ));
        }
        values.sort();
        values.dedup();
        Ok(Self {
            key: key.to_string(),
            operator,
            values,
        })
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted and deduplicated.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether `labels` (a label map; `None` = no labels) satisfies this requirement.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .map(|v| v.as_str().unwrap_or_default());
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => value.is_some_and(has),
            Operator::NotIn | Operator::NotEquals => !value.is_some_and(has),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(actual), [wanted]) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.as_slice(),
                ) else {
                    return false;
                };
                let Ok(wanted) = wanted.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            Operator::DoesNotExist => return write!(f, "!{}", self.key),
            Operator::Exists => return write!(f, "{}", self.key),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
            Operator::In => return write!(f, "{} in ({})", self.key, self.values.join(",")),
            Operator::NotIn => return write!(f, "{} notin ({})", self.key, self.values.join(",")),
        };
        write!(f, "{}{op}{}", self.key, self.values.join(","))
    }
}

/// A parsed label selector: the AND of its requirements, or the selector that matches nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// The selector that matches every object (the empty string).
    pub fn everything() -> Self {
        Self::default()
    }

    /// The selector that matches no object (a `null` `metav1.LabelSelector`).
    pub fn nothing() -> Self {
        Self {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Parses a `labelSelector` query value (already URL-decoded).
    ///
    /// Guarantees: the requirements come out sorted by key, as upstream sorts them; an empty or all-whitespace
    /// string gives [`Selector::everything`].
    ///
    /// Errors: any grammar or syntax violation, with the real server's message, e.g.
    /// `unable to parse requirement: <nil>: Invalid value: "app:x": name part must consist of ...`.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = parser::parse(input)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// Converts a `metav1.LabelSelector` (`matchLabels` and `matchExpressions`) as upstream's
    /// `LabelSelectorAsSelector` does: `null` matches nothing, `{}` matches everything.
    ///
    /// Errors: a non-object selector, an unknown operator (`"Foo" is not a valid label selector operator`), or
    /// a requirement that fails [`Requirement::new`].
    pub fn from_label_selector(selector: &Value) -> Result<Self, SelectorError> {
        let obj = match selector {
            Value::Null => return Ok(Self::nothing()),
            Value::Object(obj) => obj,
            other => {
                return Err(SelectorError::new(format!(
                    "label selector must be an object, got {other}"
                )));
            }
        };
        let mut requirements = Vec::new();
        if let Some(labels) = obj.get("matchLabels").filter(|v| !v.is_null()) {
            let labels = labels
                .as_object()
                .ok_or_else(|| SelectorError::new("matchLabels must be a map of strings"))?;
            for (k, v) in labels {
                let v = v.as_str().ok_or_else(|| {
                    SelectorError::new(format!("matchLabels[{k}] must be a string"))
                })?;
                requirements.push(Requirement::new(k, Operator::Equals, vec![v.to_string()])?);
            }
        }
        if let Some(exprs) = obj.get("matchExpressions").filter(|v| !v.is_null()) {
            let exprs = exprs
                .as_array()
                .ok_or_else(|| SelectorError::new("matchExpressions must be a list"))?;
            for expr in exprs {
                requirements.push(expression_requirement(expr)?);
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether the selector matches every object.
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether a label map matches (`labels` is the JSON `metadata.labels` value; absent or `null` = no labels).
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        if self.nothing {
            return false;
        }
        let labels = labels.and_then(Value::as_object);
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether an object (its `metadata.labels`) matches.
    pub fn matches_object(&self, object: &Value) -> bool {
        self.matches(object.pointer("/metadata/labels"))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

fn expression_requirement(expr: &Value) -> Result<Requirement, SelectorError> {
    let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
    let op_name = expr
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let operator = match op_name {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        other => {
            return Err(SelectorError::new(format!(
                "{} is not a valid label selector operator",
                go_quote(other)
            )));
        }
    };
    let values = match expr.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect(),
        Some(_) => {
            return Err(SelectorError::new(
                "matchExpressions values must be a list of strings",
            ));
        }
    };
    Requirement::new(key, operator, values)
}

mod parser;

#[cfg(test)]
mod tests;
