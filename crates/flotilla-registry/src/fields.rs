//! Field selectors (`fieldSelector=metadata.name=web,status.phase!=Running`).
//!
//! Two steps, as in the real server: [`FieldSelector::parse`] checks the grammar (terms joined by `,`, operators
//! `!=`, `==`, `=` tried in that order, `\` escaping `\`, `,` and `=` in values), then
//! [`FieldSelector::for_kind`] checks every field against what the kind supports, renaming legacy aliases
//! (Pod `spec.host`) the way upstream's field-label conversion functions do. Both steps fail with the real
//! server's `400 BadRequest` message.
//!
//! Matching reads the field values out of the object's JSON. A field the object lacks reads as the empty string
//! (booleans and counters read as upstream's Go zero values, `false` and `0`), so `spec.nodeName=` selects
//! unscheduled pods exactly as on a real cluster.

use crate::kind_info::KindInfo;
use crate::validation::format::go_quote;
use serde_json::Value;

/// A field selector that failed to parse or names a field the kind does not support.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FieldSelectorError {
    /// The real server's message, e.g. `field label not supported: spec.foo`.
    pub message: String,
}

impl FieldSelectorError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The `400 BadRequest` Status the API server answers with.
    pub fn to_status(&self) -> kube::core::Status {
        kube::core::Status::failure(&self.message, "BadRequest").with_code(400)
    }
}

/// One `field=value` or `field!=value` term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The field, e.g. `metadata.name`.
    pub field: String,
    /// The unescaped value.
    pub value: String,
    /// `true` for `!=`.
    pub negated: bool,
}

/// A parsed field selector: the AND of its terms.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

impl FieldSelector {
    /// Parses the grammar of a `fieldSelector` query value (already URL-decoded).
    ///
    /// Guarantees: empty terms (`a=b,,c=d`, a trailing comma) are skipped as upstream skips them; terms come out
    /// sorted by their text, as upstream sorts them.
    ///
    /// Errors: a term without operator (`invalid selector: '<sel>'; can't understand '<term>'`), an unknown escape
    /// (`invalid field selector: invalid escape sequence: \x`) or an unescaped `,`/`=` in a value.
    pub fn parse(input: &str) -> Result<Self, FieldSelectorError> {
        let mut parts = split_terms(input);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let (field, op, rhs) = split_term(part).ok_or_else(|| {
                FieldSelectorError::new(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                ))
            })?;
            terms.push(Term {
                field: field.to_string(),
                value: unescape_value(rhs)?,
                negated: op == "!=",
            });
        }
        Ok(Self { terms })
    }

    /// Checks every field against what `kind` supports and applies upstream's renames.
    ///
    /// Errors: an unsupported field, worded per kind as the real server words it: `"<f>" is not a known field
    /// selector: only "metadata.name", "metadata.namespace"` for kinds without extra fields and custom resources,
    /// `field label not supported: <f>` (Pod, Node, Namespace, Secret, Event, ...), `field label "<f>" not
    /// supported for "<Kind>"` (ConfigMap, Service, ServiceAccount, ...).
    pub fn for_kind(mut self, kind: &KindInfo<'_>) -> Result<Self, FieldSelectorError> {
        let rules = KindRules::of(kind);
        for term in &mut self.terms {
            term.field = rules.convert(&term.field)?;
        }
        Ok(self)
    }

    /// [`FieldSelector::parse`] followed by [`FieldSelector::for_kind`].
    pub fn parse_for_kind(input: &str, kind: &KindInfo<'_>) -> Result<Self, FieldSelectorError> {
        Self::parse(input)?.for_kind(kind)
    }

    /// The terms.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The exact `metadata.name` this selector requires, if it has such a term (lets the store do a point read).
    pub fn required_name(&self) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == "metadata.name" && !t.negated)
            .map(|t| t.value.as_str())
    }

    /// Whether `object` matches every term. Call on a selector that went through [`FieldSelector::for_kind`].
    pub fn matches(&self, object: &Value) -> bool {
        self.terms
            .iter()
            .all(|t| (field_value(object, &t.field) == t.value) != t.negated)
    }
}

/// Splits on commas that are not escaped by a backslash; escapes stay in the terms.
fn split_terms(input: &str) -> Vec<&str> {
    if input.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in input.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&input[start..i]);
            start = i + 1;
        }
    }
    terms.push(&input[start..]);
    terms
}

/// Splits at the first operator; at each position `!=` is tried before `==` before `=`, so `a==b` never leaves
/// a stray `=` in the value.
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        for op in ["!=", "==", "="] {
            if term[i..].starts_with(op) {
                return Some((&term[..i], op, &term[i + op.len()..]));
            }
        }
    }
    None
}

fn unescape_value(s: &str) -> Result<String, FieldSelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(FieldSelectorError::new(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Upstream formats the rune with %v, which prints its code point number.
            ',' | '=' => {
                return Err(FieldSelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err(FieldSelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}

/// How a kind's field-label conversion words its refusal.
enum Refusal {
    /// `DefaultMetaV1FieldSelectorConversion`: kinds without a conversion function, and custom resources.
    NotKnown,
    /// `field label not supported: <f>`.
    NotSupported,
    /// `field label "<f>" not supported for "<Kind>"`.
    NotSupportedFor(String),
    /// `field label "<f>" not supported for batchv1.Job`.
    Job,
}

/// The fields one kind accepts, the renames it applies and how it refuses the rest.
struct KindRules {
    fields: Vec<String>,
    renames: &'static [(&'static str, &'static str)],
    refusal: Refusal,
}

const POD_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];
const CORE_EVENT_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];
// events.k8s.io Events are a view of the stored core Events (`crate::kinds::core::events`), so, as upstream's field
// label conversion does, their selectable fields are renamed to the core fields the objects hold.
const EVENTS_V1_FIELDS: &[&str] = &["metadata.name", "metadata.namespace", "reason", "type"];
const EVENTS_V1_RENAMES: &[(&str, &str)] = &[
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reportingController", "reportingComponent"),
];
const META_ONLY_CORE_KINDS: &[&str] = &[
    "Endpoints",
    "ResourceQuota",
    "PersistentVolumeClaim",
    "Service",
    "ServiceAccount",
    "ConfigMap",
    "LimitRange",
    "PodTemplate",
];

fn owned(fields: &[&str]) -> Vec<String> {
    fields.iter().map(|f| (*f).to_string()).collect()
}

impl KindRules {
    fn of(kind: &KindInfo<'_>) -> Self {
        let meta = || owned(&["metadata.name", "metadata.namespace"]);
        let simple = |fields: &[&str]| Self {
            fields: owned(fields),
            renames: &[],
            refusal: Refusal::NotSupported,
        };
        if let Some(version) = kind.crd_version {
            let mut fields = meta();
            let selectable = version
                .get("selectableFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            fields.extend(
                selectable
                    .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                    .map(|p| p.trim_start_matches('.').to_string()),
            );
            return Self {
                fields,
                renames: &[],
                refusal: Refusal::NotKnown,
            };
        }
        match (kind.group, kind.kind) {
            ("", "Pod") => Self {
                fields: owned(POD_FIELDS),
                renames: &[("spec.host", "spec.nodeName")],
                refusal: Refusal::NotSupported,
            },
            ("", "Event") => simple(CORE_EVENT_FIELDS),
            ("events.k8s.io", "Event") => Self {
                fields: owned(EVENTS_V1_FIELDS),
                renames: EVENTS_V1_RENAMES,
                refusal: Refusal::NotSupported,
            },
            ("", "Node") => simple(&["metadata.name", "spec.unschedulable"]),
            ("", "Namespace") => simple(&["metadata.name", "status.phase"]),
            ("", "Secret") => simple(&["metadata.name", "metadata.namespace", "type"]),
            ("", "PersistentVolume") => simple(&["metadata.name"]),
            ("", "ReplicationController") | ("apps", "ReplicaSet") => {
                simple(&["metadata.name", "metadata.namespace", "status.replicas"])
            }
            ("batch", "Job") => Self {
                fields: owned(&["metadata.name", "metadata.namespace", "status.successful"]),
                renames: &[],
                refusal: Refusal::Job,
            },
            ("", k) if META_ONLY_CORE_KINDS.contains(&k) => Self {
                fields: meta(),
                renames: &[],
                refusal: Refusal::NotSupportedFor(k.to_string()),
            },
            _ => Self {
                fields: meta(),
                renames: &[],
                refusal: Refusal::NotKnown,
            },
        }
    }

    fn convert(&self, field: &str) -> Result<String, FieldSelectorError> {
        if let Some((_, to)) = self.renames.iter().find(|(from, _)| *from == field) {
            return Ok((*to).to_string());
        }
        if self.fields.iter().any(|f| f == field) {
            return Ok(field.to_string());
        }
        Err(FieldSelectorError::new(match &self.refusal {
            Refusal::NotKnown => format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(field)
            ),
            Refusal::NotSupported => format!("field label not supported: {field}"),
            Refusal::NotSupportedFor(kind) => {
                format!(
                    "field label {} not supported for {}",
                    go_quote(field),
                    go_quote(kind)
                )
            }
            Refusal::Job => format!(
                "field label {} not supported for batchv1.Job",
                go_quote(field)
            ),
        }))
    }
}

/// The string value a field selector compares, read from the object's JSON as upstream's per-kind
/// `ToSelectableFields` functions compute it.
fn field_value(object: &Value, field: &str) -> String {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let at = |path: &str| render(dotted(object, path));
    match (kind, field) {
        // Upstream exposes only the first pod IP, preferring the plural field.
        ("Pod", "status.podIP") => render(
            object
                .pointer("/status/podIPs/0/ip")
                .or_else(|| object.pointer("/status/podIP")),
        ),
        ("Pod", "spec.hostNetwork") | ("Node", "spec.unschedulable") => dotted(object, field)
            .and_then(Value::as_bool)
            .unwrap_or(false)
            .to_string(),
        ("Event", "source") if object.get("involvedObject").is_some() => {
            let component = at("source.component");
            if component.is_empty() {
                at("reportingComponent")
            } else {
                component
            }
        }
        ("Job", "status.successful") => dotted(object, "status.succeeded")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .to_string(),
        ("ReplicaSet" | "ReplicationController", "status.replicas") => dotted(object, field)
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .to_string(),
        _ => at(field),
    }
}

fn dotted<'v>(object: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(object, |v, key| v.get(key))
}

fn render(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests;
