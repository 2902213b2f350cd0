//! Sets of field paths in the `FieldsV1` encoding of `metadata.managedFields`.
//!
//! A path element is kept in its encoded form (`f:spec`, `k:{"name":"web"}`, `v:"a"`, `i:0`), so a set is
//! the `FieldsV1` JSON tree itself: a node is a *member* when the path to it is in the set (`{}` for a leaf,
//! `".": {}` next to children) and has children for paths below it.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A set of field paths, as a tree keyed by encoded path elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    /// Whether the path leading to this node is itself in the set.
    pub member: bool,
    /// Paths continuing below this node.
    pub children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    /// A set holding just the path to this node.
    pub(super) fn leaf() -> Self {
        Self {
            member: true,
            children: BTreeMap::new(),
        }
    }

    /// Whether no path at all is in the set.
    pub(super) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    /// Adds `child` under `element`, merging with what is there.
    pub(super) fn insert(&mut self, element: String, child: FieldSet) {
        if child.is_empty() {
            return;
        }
        let slot = self.children.entry(element).or_default();
        *slot = slot.union(&child);
    }

    /// Paths in either set.
    pub(super) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.member |= other.member;
        for (k, v) in &other.children {
            let merged = match out.children.get(k) {
                Some(mine) => mine.union(v),
                None => v.clone(),
            };
            out.children.insert(k.clone(), merged);
        }
        out.prune_empty();
        out
    }

    /// Paths in `self` but not in `other`.
    pub(super) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            let child = match other.children.get(k) {
                Some(theirs) => v.difference(theirs),
                None => v.clone(),
            };
            if !child.is_empty() {
                out.children.insert(k.clone(), child);
            }
        }
        out
    }

    /// Paths in both sets.
    pub(super) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            if let Some(theirs) = other.children.get(k) {
                let child = v.intersection(theirs);
                if !child.is_empty() {
                    out.children.insert(k.clone(), child);
                }
            }
        }
        out
    }

    fn prune_empty(&mut self) {
        self.children.retain(|_, v| !v.is_empty());
    }

    /// Every member path, rendered as upstream prints paths (`.spec.containers[name="web"].image`), in order.
    pub(super) fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_paths(String::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: String, out: &mut Vec<String>) {
        if self.member && !prefix.is_empty() {
            out.push(prefix.clone());
        }
        for (k, v) in &self.children {
            v.collect_paths(format!("{prefix}{}", render_element(k)), out);
        }
    }

    /// The `fieldsV1` JSON of this set.
    pub(super) fn to_fields_v1(&self) -> Value {
        let mut obj = Map::new();
        if self.member && !self.children.is_empty() {
            obj.insert(".".to_string(), Value::Object(Map::new()));
        }
        for (k, v) in &self.children {
            obj.insert(k.clone(), v.to_fields_v1());
        }
        Value::Object(obj)
    }

    /// Reads a `fieldsV1` JSON tree; `None` when it is not one.
    pub(super) fn from_fields_v1(value: &Value) -> Option<FieldSet> {
        let mut set = Self::read(value)?;
        // The root of a fieldsV1 document is never a path of its own.
        set.member = false;
        Some(set)
    }

    fn read(value: &Value) -> Option<FieldSet> {
        let obj = value.as_object()?;
        let mut set = FieldSet {
            member: obj.is_empty(),
            children: BTreeMap::new(),
        };
        for (k, v) in obj {
            if k == "." {
                set.member = true;
                continue;
            }
            if !matches!(k.get(..2), Some("f:" | "k:" | "v:" | "i:")) {
                return None;
            }
            set.children.insert(k.clone(), Self::read(v)?);
        }
        Some(set)
    }
}

/// Encodes a field name as a path element.
pub(crate) fn field(name: &str) -> String {
    format!("f:{name}")
}

/// Encodes a list-map key (field name → value, already sorted by name) as a path element.
pub(crate) fn key(fields: &[(String, Value)]) -> String {
    let obj: Map<String, Value> = fields.iter().cloned().collect();
    format!("k:{}", Value::Object(obj))
}

/// Encodes a set element's value as a path element.
pub(crate) fn value(v: &Value) -> String {
    format!("v:{v}")
}

/// Renders one encoded element the way upstream prints paths in conflict messages.
fn render_element(encoded: &str) -> String {
    let (kind, rest) = encoded.split_at(encoded.len().min(2));
    match kind {
        "f:" => format!(".{rest}"),
        "v:" => format!("[={rest}]"),
        "i:" => format!("[{rest}]"),
        "k:" => match serde_json::from_str::<Map<String, Value>>(rest) {
            Ok(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("[{}]", parts.join(","))
            }
            Err(_) => format!("[{rest}]"),
        },
        _ => encoded.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(v: Value) -> FieldSet {
        FieldSet::from_fields_v1(&v).unwrap_or_default()
    }

    #[test]
    fn fields_v1_round_trips() {
        let doc = json!({"f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}, "f:replicas": {}}});
        assert_eq!(set(doc.clone()).to_fields_v1(), doc);
        assert_eq!(FieldSet::from_fields_v1(&json!({"x:bad": {}})), None);
        assert_eq!(FieldSet::from_fields_v1(&json!("nope")), None);
    }

    #[test]
    fn set_algebra_is_member_wise() {
        let a = set(json!({"f:spec": {"f:a": {}, "f:b": {}}}));
        let b = set(json!({"f:spec": {"f:b": {}, "f:c": {}}}));
        assert_eq!(
            a.union(&b),
            set(json!({"f:spec": {"f:a": {}, "f:b": {}, "f:c": {}}}))
        );
        assert_eq!(a.difference(&b), set(json!({"f:spec": {"f:a": {}}})));
        assert_eq!(a.intersection(&b), set(json!({"f:spec": {"f:b": {}}})));
        assert!(a.difference(&a).is_empty());
        let el = set(json!({"f:l": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}}}}));
        let just_name = set(json!({"f:l": {"k:{\"name\":\"x\"}": {"f:name": {}}}}));
        assert_eq!(
            el.difference(&just_name),
            set(json!({"f:l": {"k:{\"name\":\"x\"}": {}}}))
        );
    }

    #[test]
    fn paths_render_like_upstream() {
        let s = set(
            json!({"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}}},
            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {}}, "f:finalizers": {"v:\"a\"": {}}}}),
        );
        assert_eq!(
            s.paths(),
            vec![
                ".spec.containers[name=\"web\"]",
                ".spec.containers[name=\"web\"].image",
                ".spec.finalizers[=\"a\"]",
                ".spec.ports[containerPort=80,protocol=\"TCP\"]",
            ]
        );
    }
}
