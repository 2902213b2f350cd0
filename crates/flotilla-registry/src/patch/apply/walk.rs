//! Walks over JSON objects guided by their [`Shape`]: the field set of a value, the apply merge, the
//! comparison of two versions and the removal of paths.

use super::fieldset::{self, FieldSet};
use super::shape::{ListType, Shape, key_default};
use crate::patch::PatchError;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// The path element of a list element, or `None` when a live element lacks its keys.
fn element_pe(list: &ListType, elem: &Value) -> Option<String> {
    match list {
        ListType::Atomic => None,
        ListType::Set => Some(fieldset::value(elem)),
        ListType::Map(keys) => {
            let mut fields = Vec::with_capacity(keys.len());
            let mut sorted = keys.clone();
            sorted.sort();
            for k in sorted {
                let v = elem
                    .get(&k)
                    .filter(|v| !v.is_null())
                    .cloned()
                    .or_else(|| key_default(&k))?;
                fields.push((k, v));
            }
            Some(fieldset::key(&fields))
        }
    }
}

/// Checks an applied configuration: every list-map element must carry its keys.
pub(super) fn check_config(
    value: &Value,
    shape: Shape<'_>,
    at_root: bool,
    path: &str,
) -> Result<(), PatchError> {
    match value {
        Value::Object(m) if !shape.atomic_map() => {
            for (k, v) in m {
                check_config(v, shape.field(k, at_root), false, &format!("{path}.{k}"))?;
            }
        }
        Value::Array(items) => {
            let list = shape.list_type();
            if let ListType::Map(keys) = &list {
                for (i, item) in items.iter().enumerate() {
                    if element_pe(&list, item).is_none() {
                        let missing = keys
                            .iter()
                            .find(|k| item.get(k.as_str()).is_none_or(Value::is_null));
                        return Err(PatchError::BadRequest(format!(
                            "{path}: element {i}: associative list with keys has an element that omits key field {} \
                             (and doesn't have default value)",
                            crate::validation::format::go_quote(missing.map_or("", String::as_str))
                        )));
                    }
                    check_config(item, shape.element(), false, &format!("{path}[{i}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The set of paths `value` sets (the node itself is a member when it is a leaf).
pub(super) fn to_set(value: &Value, shape: Shape<'_>, at_root: bool) -> FieldSet {
    match value {
        Value::Object(m) if !shape.atomic_map() && !m.is_empty() => {
            let mut set = FieldSet::default();
            for (k, v) in m {
                set.insert(
                    fieldset::field(k),
                    to_set(v, shape.field(k, at_root), false),
                );
            }
            set
        }
        Value::Array(items) => {
            let list = shape.list_type();
            if list == ListType::Atomic {
                return FieldSet::leaf();
            }
            let mut set = FieldSet::default();
            for item in items {
                let Some(pe) = element_pe(&list, item) else {
                    continue;
                };
                let mut child = match list {
                    ListType::Map(_) => to_set(item, shape.element(), false),
                    _ => FieldSet::default(),
                };
                child.member = true;
                set.insert(pe, child);
            }
            set
        }
        _ => FieldSet::leaf(),
    }
}

/// Merges an applied configuration into the live object: maps key by key, associative lists element by
/// element, everything else replaced by the configuration.
pub(super) fn merge(live: &Value, config: &Value, shape: Shape<'_>, at_root: bool) -> Value {
    match (live, config) {
        (Value::Object(l), Value::Object(c)) if !shape.atomic_map() => {
            let mut out = l.clone();
            for (k, cv) in c {
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, cv, shape.field(k, at_root), false),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) => match shape.list_type() {
            ListType::Atomic => config.clone(),
            list => Value::Array(merge_list(l, c, &list, shape.element())),
        },
        _ => config.clone(),
    }
}

/// Structured-merge-diff's list merge order: live-only elements stay where they were, shared and new elements
/// follow the configuration's order.
fn merge_list(lhs: &[Value], rhs: &[Value], list: &ListType, elem: Shape<'_>) -> Vec<Value> {
    let lpes: Vec<Option<String>> = lhs.iter().map(|v| element_pe(list, v)).collect();
    let rpes: Vec<Option<String>> = rhs.iter().map(|v| element_pe(list, v)).collect();
    let mut observed_lhs: HashMap<&str, &Value> = HashMap::new();
    for (pe, v) in lpes.iter().zip(lhs) {
        if let Some(pe) = pe {
            observed_lhs.entry(pe.as_str()).or_insert(v);
        }
    }
    let mut observed_rhs: HashMap<&str, &Value> = HashMap::new();
    for (pe, v) in rpes.iter().zip(rhs) {
        if let Some(pe) = pe {
            observed_rhs.entry(pe.as_str()).or_insert(v);
        }
    }
    let item = |pe: &str| -> Value {
        match (observed_lhs.get(pe), observed_rhs.get(pe)) {
            (Some(l), Some(r)) if matches!(list, ListType::Map(_)) => merge(l, r, elem, false),
            (_, Some(r)) => (*r).clone(),
            (Some(l), None) => (*l).clone(),
            (None, None) => Value::Null,
        }
    };
    let mut shared = rpes
        .iter()
        .flatten()
        .filter(|pe| observed_lhs.contains_key(pe.as_str()));
    let mut next_shared = shared.next();
    let mut merged_rhs: HashSet<&str> = HashSet::new();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            if let (Some(l), Some(r)) = (&lpes[li], &rpes[ri])
                && l == r
            {
                merged_rhs.insert(l.as_str());
                out.push(item(l));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if let Some(l) = &lpes[li]
                && observed_rhs.contains_key(l.as_str())
                && next_shared.is_some_and(|n| n != l)
            {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            match &lpes[li] {
                Some(l) if observed_rhs.contains_key(l.as_str()) => {
                    if merged_rhs.contains(l.as_str()) {
                        li += 1;
                        continue;
                    }
                }
                _ => {
                    out.push(lhs[li].clone());
                    li += 1;
                    continue;
                }
            }
        }
        if ri < rhs.len() {
            if let Some(r) = &rpes[ri] {
                if merged_rhs.insert(r.as_str()) {
                    out.push(item(r));
                }
                if next_shared == Some(r) {
                    next_shared = shared.next();
                }
            }
            ri += 1;
        } else if li < lhs.len() {
            // Unreachable by construction (a live element found in the configuration is merged before the
            // configuration runs out), but a guarantee of progress is cheaper than proving it forever.
            out.push(lhs[li].clone());
            li += 1;
        }
    }
    out
}

/// Leaf paths present in both versions whose values differ.
fn modified(old: &Value, new: &Value, shape: Shape<'_>, at_root: bool) -> FieldSet {
    match (old, new) {
        (Value::Object(o), Value::Object(n))
            if !shape.atomic_map() && !o.is_empty() && !n.is_empty() =>
        {
            let mut set = FieldSet::default();
            for (k, ov) in o {
                if let Some(nv) = n.get(k) {
                    set.insert(
                        fieldset::field(k),
                        modified(ov, nv, shape.field(k, at_root), false),
                    );
                }
            }
            set
        }
        (Value::Array(o), Value::Array(n)) => match shape.list_type() {
            ListType::Atomic => leaf_if(o != n),
            ListType::Set => FieldSet::default(),
            list @ ListType::Map(_) => {
                let mut set = FieldSet::default();
                let olds: HashMap<String, &Value> = o
                    .iter()
                    .filter_map(|v| element_pe(&list, v).map(|pe| (pe, v)))
                    .collect();
                for nv in n {
                    let Some(pe) = element_pe(&list, nv) else {
                        continue;
                    };
                    if let Some(ov) = olds.get(&pe) {
                        set.insert(pe, modified(ov, nv, shape.element(), false));
                    }
                }
                set
            }
        },
        _ => leaf_if(old != new),
    }
}

fn leaf_if(changed: bool) -> FieldSet {
    if changed {
        FieldSet::leaf()
    } else {
        FieldSet::default()
    }
}

/// What changed from `old` to `new`: paths added or modified, and paths removed.
pub(super) fn compare(old: &Value, new: &Value, shape: Shape<'_>) -> (FieldSet, FieldSet) {
    let old_set = to_set(old, shape, true);
    let new_set = to_set(new, shape, true);
    let mut changed = new_set
        .difference(&old_set)
        .union(&modified(old, new, shape, true));
    changed.member = false;
    let mut removed = old_set.difference(&new_set);
    removed.member = false;
    (changed, removed)
}

/// Removes every member path of `paths` from `value`; maps emptied by the removal go too.
pub(super) fn remove(value: &mut Value, paths: &FieldSet, shape: Shape<'_>, at_root: bool) {
    for (pe, child) in &paths.children {
        match value {
            Value::Object(m) => {
                let Some(name) = pe.strip_prefix("f:") else {
                    continue;
                };
                let Some(target) = m.get_mut(name) else {
                    continue;
                };
                if child.member || remove_below(target, child, shape.field(name, at_root)) {
                    m.remove(name);
                }
            }
            Value::Array(items) => {
                let list = shape.list_type();
                let Some(pos) = items
                    .iter()
                    .position(|v| element_pe(&list, v).as_deref() == Some(pe.as_str()))
                else {
                    continue;
                };
                if child.member {
                    items.remove(pos);
                } else if let Some(item) = items.get_mut(pos) {
                    remove_below(item, child, shape.element());
                }
            }
            _ => {}
        }
    }
}

/// Removes paths below `target`; returns whether `target` was a non-empty map that is now empty.
fn remove_below(target: &mut Value, paths: &FieldSet, shape: Shape<'_>) -> bool {
    let was_full = target.as_object().is_some_and(|m| !m.is_empty());
    remove(target, paths, shape, false);
    was_full && target.as_object().is_some_and(Map::is_empty)
}
