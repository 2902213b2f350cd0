//! ObjectMeta validation on create and update, with upstream's field paths and wording.

use super::FieldError;
use super::format::{
    is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_path_segment_name,
};
use crate::kind_info::KindInfo;
#[cfg(test)]
pub(crate) use flotilla_apimachinery::meta::TOTAL_ANNOTATION_SIZE_LIMIT;
use flotilla_apimachinery::meta::{validate_annotations, validate_labels};
use serde_json::{Map, Value};

/// Which syntax a kind's object names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// DNS-1123 subdomain: most kinds and all custom resources.
    Dns1123Subdomain,
    /// DNS-1123 label: Namespaces.
    Dns1123Label,
    /// DNS-1035 label: Services.
    Dns1035Label,
    /// Only path-segment rules (no `/`, `%`, not `.`/`..`): RBAC objects, whose names carry `:`.
    PathSegment,
    /// No syntax at all: core `v1` Events, whose names the real server never checks (clients name them
    /// `<object>.<hex>` and from `generateName` prefixes ending in `.`); `events.k8s.io` Events are subdomains.
    Any,
}

impl NameRule {
    /// Problems with `name`; with `prefix` it is a `generateName` prefix, which may end in `-`.
    pub(crate) fn check(self, name: &str, prefix: bool) -> Vec<String> {
        // A generateName prefix gets random characters appended, so a trailing dash is fine.
        let masked;
        let name = if prefix && name.len() > 1 && name.ends_with('-') {
            masked = format!("{}a", &name[..name.len() - 1]);
            masked.as_str()
        } else {
            name
        };
        match self {
            Self::Dns1123Subdomain => is_dns1123_subdomain(name),
            Self::Dns1123Label => is_dns1123_label(name),
            Self::Dns1035Label => is_dns1035_label(name),
            Self::PathSegment if prefix => ["/", "%"]
                .iter()
                .filter(|c| name.contains(**c))
                .map(|c| format!("may not contain '{c}'"))
                .collect(),
            Self::PathSegment => is_valid_path_segment_name(name),
            Self::Any => Vec::new(),
        }
    }
}

fn string_map<'v>(
    meta: &'v Map<String, Value>,
    key: &str,
    errors: &mut Vec<FieldError>,
) -> Vec<(&'v str, &'v str)> {
    match meta.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => {
            let mut out = Vec::with_capacity(m.len());
            for (k, v) in m {
                match v.as_str() {
                    Some(s) => out.push((k.as_str(), s)),
                    None => errors.push(FieldError::type_invalid(
                        format!("metadata.{key}"),
                        v.clone(),
                        "must be a string",
                    )),
                }
            }
            out
        }
        Some(other) => {
            errors.push(FieldError::type_invalid(
                format!("metadata.{key}"),
                other.clone(),
                "must be a map of strings",
            ));
            Vec::new()
        }
    }
}

/// Validates `metadata` of an object about to be created or stored: name or generateName, namespace presence,
/// generation, labels, annotations (keys and total size), owner references, finalizers and managed fields.
///
/// Guarantees: errors come in upstream's order with its field paths (`metadata.labels`, not per key) and
/// messages, ready for [`super::invalid_status`].
pub(crate) fn validate_object_meta(
    object: &Value,
    kind: &KindInfo<'_>,
    rule: NameRule,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let meta = match object.get("metadata") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => &empty,
        Some(other) => {
            return vec![FieldError::type_invalid(
                "metadata",
                other.clone(),
                "must be an object",
            )];
        }
    };
    let text = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for msg in rule.check(generate_name, true) {
            errors.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                msg,
            ));
        }
    }
    let name = text("name");
    if name.is_empty() {
        errors.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in rule.check(name, false) {
            errors.push(FieldError::invalid("metadata.name", name, msg));
        }
        if (kind.group, kind.kind) == ("batch", "CronJob") && name.len() > 52 {
            errors.push(FieldError::invalid(
                "metadata.name",
                name,
                "must be no more than 52 characters",
            ));
        }
    }
    let namespace = text("namespace");
    if kind.namespaced {
        if namespace.is_empty() {
            errors.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in is_dns1123_label(namespace) {
                errors.push(FieldError::invalid("metadata.namespace", namespace, msg));
            }
        }
    } else if !namespace.is_empty() {
        errors.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if let Some(g) = meta
        .get("generation")
        .and_then(Value::as_i64)
        .filter(|g| *g < 0)
    {
        errors.push(FieldError::invalid(
            "metadata.generation",
            g,
            "must be greater than or equal to 0",
        ));
    }
    let labels = string_map(meta, "labels", &mut errors);
    errors.extend(validate_labels(labels, "metadata.labels"));
    let annotations = string_map(meta, "annotations", &mut errors);
    errors.extend(validate_annotations(annotations, "metadata.annotations"));
    errors.extend(validate_owner_references(meta.get("ownerReferences")));
    errors.extend(validate_finalizers(meta.get("finalizers")));
    errors.extend(validate_managed_fields(meta.get("managedFields")));
    errors
}

fn validate_owner_references(refs: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.ownerReferences";
    let mut errors = Vec::new();
    let refs = match refs {
        None | Some(Value::Null) => return errors,
        Some(Value::Array(refs)) => refs,
        Some(other) => {
            return vec![FieldError::type_invalid(
                PATH,
                other.clone(),
                "must be a list",
            )];
        }
    };
    let mut first_controller: Option<String> = None;
    for r in refs {
        let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind, name, uid) =
            (text("apiVersion"), text("kind"), text("name"), text("uid"));
        // "group/version" or "version"; anything with more slashes has no usable version.
        let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [v] | [_, v] => *v,
            _ => "",
        };
        if version.is_empty() {
            errors.push(FieldError::invalid(
                format!("{PATH}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        if kind.is_empty() {
            errors.push(FieldError::invalid(
                format!("{PATH}.kind"),
                kind,
                "kind must not be empty",
            ));
        }
        if name.is_empty() {
            errors.push(FieldError::invalid(
                format!("{PATH}.name"),
                name,
                "name must not be empty",
            ));
        }
        if uid.is_empty() {
            errors.push(FieldError::invalid(
                format!("{PATH}.uid"),
                uid,
                "uid must not be empty",
            ));
        }
        if kind == "Event" && (api_version == "v1" || api_version == "events.k8s.io/v1") {
            let gvk = match api_version.split_once('/') {
                Some((g, v)) => format!("{g}/{v}, Kind=Event"),
                None => format!("/{api_version}, Kind=Event"),
            };
            errors.push(FieldError::invalid(
                PATH,
                r.clone(),
                format!("{gvk} is disallowed from being an owner"),
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{name}");
            match &first_controller {
                Some(first) => errors.push(FieldError::invalid(
                    PATH,
                    Value::Array(refs.clone()),
                    format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errors
}

fn validate_finalizers(finalizers: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.finalizers";
    let list = match finalizers {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return vec![FieldError::type_invalid(
                PATH,
                other.clone(),
                "must be a list of strings",
            )];
        }
    };
    let mut errors = Vec::new();
    let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
    for f in &names {
        errors.extend(
            is_qualified_name(f)
                .into_iter()
                .map(|m| FieldError::invalid(PATH, *f, m)),
        );
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errors.push(FieldError::invalid(
            PATH,
            list.clone(),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errors
}

fn validate_managed_fields(entries: Option<&Value>) -> Vec<FieldError> {
    let Some(Value::Array(entries)) = entries else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let path = format!("metadata.managedFields[{i}]");
        let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
        if !matches!(text("operation"), "Apply" | "Update") {
            errors.push(FieldError::invalid(
                format!("{path}.operation"),
                text("operation"),
                "must be `Apply` or `Update`",
            ));
        }
        if !matches!(text("fieldsType"), "" | "FieldsV1") {
            errors.push(FieldError::invalid(
                format!("{path}.fieldsType"),
                text("fieldsType"),
                "must be `FieldsV1`",
            ));
        }
        errors.extend(
            super::validate_field_manager(text("manager"))
                .into_iter()
                .map(|mut err| {
                    err.field = format!("{path}.manager");
                    err
                }),
        );
    }
    errors
}

/// Validates what an update may not do to `metadata`: change name or namespace, change a non-empty uid, or add
/// finalizers to an object that is being deleted.
///
/// Assumes the caller already restored what upstream silently restores before validating (creationTimestamp,
/// deletionTimestamp, deletionGracePeriodSeconds, an empty uid).
pub(crate) fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let get = |o: &Value, k: &str| {
        o.pointer(&format!("/metadata/{k}"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    for field in ["name", "namespace", "uid"] {
        let (n, o) = (get(new, field), get(old, field));
        let unset = n.as_str().is_none_or(str::is_empty);
        if n != o && !(field == "uid" && unset) {
            errors.push(FieldError::invalid(
                format!("metadata.{field}"),
                n,
                "field is immutable",
            ));
        }
    }
    if !get(old, "deletionTimestamp").is_null() {
        let names = |v: Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let before = names(get(old, "finalizers"));
        let mut added: Vec<String> = names(get(new, "finalizers"))
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        added.sort();
        added.dedup();
        if !added.is_empty() {
            let quoted: Vec<String> = added.iter().map(|f| super::format::go_quote(f)).collect();
            errors.push(FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                ),
            ));
        }
    }
    errors
}

#[cfg(test)]
#[path = "meta_tests.rs"]
mod tests;
