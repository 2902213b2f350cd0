//! Merging lists for strategic merge patch: by merge key, as sets of scalars, and the element-order rules.

use super::schema::Ty;
use super::{DIRECTIVE, Result, SmpError, go_map, go_value, merge_map, strip_nulls};
use serde_json::{Map, Value};

/// The JSON type of list elements, as far as merging cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ElemKind {
    Map,
    Scalar,
}

fn elem_kind(lists: &[&[Value]]) -> Result<Option<ElemKind>> {
    let mut kind: Option<(ElemKind, u8)> = None;
    for v in lists.iter().flat_map(|l| l.iter()) {
        let (k, tag) = match v {
            Value::Array(_) => {
                return Err(SmpError::Unprocessable("lists of lists are not supported"));
            }
            Value::Object(_) => (ElemKind::Map, 0),
            Value::String(_) => (ElemKind::Scalar, 1),
            Value::Number(_) => (ElemKind::Scalar, 2),
            Value::Bool(_) => (ElemKind::Scalar, 3),
            Value::Null => (ElemKind::Scalar, 4),
        };
        match kind {
            None => kind = Some((k, tag)),
            Some((_, t)) if t != tag => {
                return Err(SmpError::Other(
                    "list element types are not identical".to_string(),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(kind.map(|(k, _)| k))
}

fn key_of<'v>(item: &'v Value, merge_key: &str) -> Option<&'v Value> {
    item.as_object().and_then(|m| m.get(merge_key))
}

fn require_key<'v>(item: &'v Value, merge_key: &str) -> Result<&'v Value> {
    match item {
        Value::Object(m) => m.get(merge_key).ok_or_else(|| {
            SmpError::Other(format!(
                "map: {} does not contain declared merge key: {merge_key}",
                go_map(m)
            ))
        }),
        other => Err(SmpError::Other(format!(
            "expected a map, but received a {}",
            go_value(other)
        ))),
    }
}

/// Position of `item` in `list`: by merge key for maps, by value for scalars.
fn index(list: &[Value], item: &Value, merge_key: Option<&str>) -> Option<usize> {
    match merge_key {
        Some(k) => {
            let wanted = key_of(item, k);
            list.iter().position(|v| key_of(v, k) == wanted)
        }
        None => list.iter().position(|v| v == item),
    }
}

/// Merges `patch` into `original` for a list with merge strategy (`merge_key` `None` = list of scalars).
pub(super) fn merge(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: Option<&'static str>,
    elem: Ty,
    is_delete_list: bool,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let Some(kind) = elem_kind(&[&original, &patch])? else {
        return Ok(original);
    };
    let (live, patch, merged) = if kind == ElemKind::Scalar {
        if is_delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut merged = original.clone();
        for v in &patch {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        (original, patch, merged)
    } else {
        let Some(key) = merge_key else {
            return Err(SmpError::Other(
                "cannot merge lists without merge key for type map".to_string(),
            ));
        };
        let (live, patch) = apply_special_elements(original, patch, key)?;
        let merged = merge_by_key(live.clone(), &patch, key, elem)?;
        (live, patch, merged)
    };
    order_by(
        merged,
        &patch,
        &live,
        merge_key.filter(|_| kind == ElemKind::Map),
    )
}

/// Handles elements carrying `$patch`: `delete` removes matching live elements, `replace` makes the rest of
/// the patch the whole list. Returns the live list and the patch without those elements.
fn apply_special_elements(
    mut live: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(DIRECTIVE) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let wanted = require_key(&item, key)?.clone();
                live.retain(|v| key_of(v, key) != Some(&wanted));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(SmpError::Other(
                    "merging lists cannot yet be specified in the patch".to_string(),
                ));
            }
            _ => {
                let m = item.as_object().cloned().unwrap_or_default();
                return Err(SmpError::Other(format!(
                    "unknown patch type: {} in map: {}",
                    go_value(directive),
                    go_map(&m)
                )));
            }
        }
    }
    if replace {
        return Ok((plain.into_iter().map(strip_nulls).collect(), Vec::new()));
    }
    Ok((live, plain))
}

fn merge_by_key(mut live: Vec<Value>, patch: &[Value], key: &str, elem: Ty) -> Result<Vec<Value>> {
    for item in patch {
        let wanted = require_key(item, key)?;
        let Value::Object(p) = item else { continue };
        match live.iter().position(|v| key_of(v, key) == Some(wanted)) {
            Some(i) => {
                let current = match std::mem::take(&mut live[i]) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                live[i] = Value::Object(merge_map(current, p.clone(), elem)?);
            }
            None => live.push(strip_nulls(item.clone())),
        }
    }
    Ok(live)
}

/// Upstream's element order: items also named in `wanted` come in `wanted` order; the others keep their `live`
/// order and are slotted in front of the first wanted item that follows them in `live`.
pub(super) fn order_by(
    merged: Vec<Value>,
    wanted: &[Value],
    live: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>> {
    if let Some(k) = merge_key {
        for item in merged.iter().chain(wanted) {
            require_key(item, k)?;
        }
    }
    let (mut in_patch, mut server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|v| index(wanted, v, merge_key).is_some());
    in_patch.sort_by_key(|v| index(wanted, v, merge_key).unwrap_or(usize::MAX));
    server_only.sort_by_key(|v| index(live, v, merge_key).unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(in_patch.len() + server_only.len());
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        in_patch.into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => match (index(live, l, merge_key), index(live, r, merge_key)) {
                (Some(li), Some(ri)) => li < ri,
                _ => false,
            },
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    Ok(out)
}

/// Checks that the patch list names its items in the same relative order as `$setElementOrder`.
pub(super) fn validate_against_order(
    patch: &[Value],
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<()> {
    if patch.is_empty() || order.is_empty() {
        return Ok(());
    }
    let items: Vec<&Value> = patch
        .iter()
        .filter(|v| {
            merge_key.is_none() || v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete")
        })
        .collect();
    let (mut p, mut o) = (0, 0);
    while p < items.len() && o < order.len() {
        if items[p].get(DIRECTIVE).is_some() {
            p += 1;
            continue;
        }
        let equal = match merge_key {
            Some(k) => require_key(items[p], k)? == require_key(&order[o], k)?,
            None => items[p] == &order[o],
        };
        if equal {
            p += 1;
        }
        o += 1;
    }
    if p < items.len() {
        return Err(SmpError::Other(format!(
            "The order in patch list:\n{}\n doesn't match $setElementOrder list:\n{}\n",
            go_value(&Value::Array(patch.to_vec())),
            go_value(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}
