//! Server-side apply (`application/apply-patch+yaml`.9) and the field ownership every write records.
//!
//! Ownership lives in `metadata.managedFields` as upstream's `FieldsV1` sets. [`apply`] merges an applied
//! configuration into the live object, makes the applying manager the owner of exactly the fields its
//! configuration sets, removes fields it applied before and no longer applies (unless another manager owns
//! them), and refuses (409) to change fields other managers own unless `force` is set, in which case it takes
//! them over. [`record_update`] does the bookkeeping for every other write (create, update, merge/JSON/strategic
//! patch): the writer becomes an `Update` manager of what it changed, and other managers lose those fields.
//!
//! Lists merge by their list type: built-in kinds as the strategic-merge-patch table says (merge-keyed lists
//! are associative, `finalizers` a set, everything else atomic); custom resources per their schema's
//! `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`.
//!
//! Not reproduced from upstream: the cap of ten `Update` entries (folded into `ancient-changes`) and the
//! migration of client-side-apply ownership.

mod fieldset;
mod managed;
mod shape;
mod walk;

use super::{Conflict, PatchError};
use crate::kind_info::KindInfo;
use fieldset::FieldSet;
use managed::{Entry, ManagerId};
use serde_json::Value;
use shape::Shape;

/// The manager upstream invents for an object that had no managed fields when it was first applied to.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Metadata fields no manager ever owns.
const SERVER_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// Who writes, and how, for [`apply`] and [`record_update`].
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions<'a> {
    /// The field manager (`fieldManager` query parameter, or for non-apply writes the User-Agent prefix).
    pub manager: &'a str,
    /// `status` for writes through the status subresource.
    pub subresource: Option<&'a str>,
    /// The current time, RFC 3339 with second precision (`2026-11-22T10:00:00Z`).
    pub now: &'a str,
    /// Top-level fields the endpoint ignores (`status` on the main endpoint of a kind with a status
    /// subresource; `spec` on the status endpoint): they are neither merged nor owned.
    pub reset_fields: &'a [&'a str],
}

/// Decodes an apply request body: JSON, or YAML as a fallback.
///
/// Errors: [`PatchError::BadRequest`] (`error decoding YAML: ...`) when it is neither, or not a mapping.
pub fn parse_config(body: &[u8]) -> Result<Value, PatchError> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => flotilla_yaml::from_slice(body)
            .map_err(|e| PatchError::BadRequest(format!("error decoding YAML: {}", e.chain())))?,
    };
    if !value.is_object() {
        return Err(PatchError::BadRequest(
            "error decoding YAML: the applied configuration must be a mapping".to_string(),
        ));
    }
    Ok(value)
}

/// Server-side apply of `config` (see [`parse_config`]) onto `live` (`None`: the object does not exist yet and
/// apply creates it).
///
/// Guarantees: the result carries the updated `managedFields`; `live` is untouched; applying the same
/// configuration again yields an identical object (no time bump), so the caller's no-op detection works; the
/// result has no `null` members. The caller still runs its create/update pipeline (names, defaulting,
/// validation, status split) on the result.
///
/// Errors: [`PatchError::BadRequest`] when `apiVersion`/`kind` are missing or differ from `kind`, or an element
/// of an associative list lacks its keys; [`PatchError::Conflict`] when the configuration changes fields other
/// managers own and `force` is false.
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    kind: &KindInfo<'_>,
    opts: &WriteOptions<'_>,
    force: bool,
) -> Result<Value, PatchError> {
    check_type(config, kind)?;
    let shape = Shape::root(kind);
    let config = without_reset_fields(config, opts.reset_fields);
    walk::check_config(&config, shape, true, "")?;
    let api_version = kind.api_version();
    let live_obj = live.cloned().unwrap_or_else(|| serde_json::json!({}));
    let mut entries = managed::decode(&live_obj);
    if let Some(l) = live
        && entries.is_empty()
    {
        // An object nobody tracked yet: its current fields belong to a synthetic Update manager, so applying
        // neither silently drops them nor takes them over without a conflict.
        let set = root_set(&strip(l), shape);
        entries.push(Entry {
            id: ManagerId {
                manager: BEFORE_FIRST_APPLY.to_string(),
                operation: "Update".to_string(),
                api_version: api_version.clone(),
                subresource: None,
            },
            time: None,
            set,
        });
    }
    let me = ManagerId {
        manager: opts.manager.to_string(),
        operation: "Apply".to_string(),
        api_version: api_version.clone(),
        subresource: opts.subresource.map(str::to_string),
    };
    let previous = entries
        .iter()
        .position(|e| e.id.same(&me))
        .map(|i| entries.remove(i));
    let mut new_obj = walk::merge(&live_obj, &config, shape, true);
    let applied = root_set(&strip(&config), shape);
    if let Some(prev) = &previous {
        let owned = entries
            .iter()
            .fold(applied.clone(), |acc, e| acc.union(&e.set));
        walk::remove(&mut new_obj, &prev.set.difference(&owned), shape, true);
    }
    let new_obj = super::strategic::strip_nulls(new_obj);
    let (changed, removed) = walk::compare(&strip(&live_obj), &strip(&new_obj), shape);
    let mut conflicts = Vec::new();
    for e in &mut entries {
        let contested = e.set.intersection(&changed);
        if !contested.is_empty() {
            if force {
                e.set = e.set.difference(&contested);
            } else {
                conflicts.extend(contested.paths().into_iter().map(|field| Conflict {
                    manager: e.id.manager.clone(),
                    operation: e.id.operation.clone(),
                    api_version: e.id.api_version.clone(),
                    time: e.time.clone(),
                    subresource: e.id.subresource.clone(),
                    field,
                }));
            }
        }
        e.set = e.set.difference(&removed);
    }
    if !conflicts.is_empty() {
        conflicts.sort_by(|a, b| (&a.manager, &a.field).cmp(&(&b.manager, &b.field)));
        return Err(PatchError::Conflict(conflicts));
    }
    // Upstream bumps the applier's time only when the object itself changed.
    let time = match previous.and_then(|p| p.time) {
        Some(t) if strip(&live_obj) == strip(&new_obj) => Some(t),
        _ => Some(opts.now.to_string()),
    };
    entries.push(Entry {
        id: me,
        time,
        set: applied,
    });
    let mut out = new_obj;
    managed::encode(&mut out, entries);
    Ok(out)
}

/// Records the ownership of a non-apply write: `new` (the object about to be stored) gets `managedFields` in
/// which the writer owns, as an `Update` manager, every field it added or changed; other managers lose those
/// fields, and fields the write removed leave every set.
///
/// Guarantees: managed fields sent in `new` are kept when they decode (clients may edit them), a single empty
/// entry (`managedFields: [{}]`) resets them, anything else falls back to the live object's; a write that
/// changes nothing leaves the entries (and their times) as they were.
pub fn record_update(
    live: Option<&Value>,
    new: &mut Value,
    kind: &KindInfo<'_>,
    opts: &WriteOptions<'_>,
) {
    let shape = Shape::root(kind);
    let mut entries = if managed::is_reset(new) {
        Vec::new()
    } else {
        let sent = managed::decode(new);
        if sent.is_empty() {
            live.map(managed::decode).unwrap_or_default()
        } else {
            sent
        }
    };
    let empty = serde_json::json!({});
    let old = owned_part(live.unwrap_or(&empty), opts.reset_fields);
    let after = owned_part(new, opts.reset_fields);
    let (changed, removed) = walk::compare(&old, &after, shape);
    let me = ManagerId {
        manager: opts.manager.to_string(),
        operation: "Update".to_string(),
        api_version: kind.api_version(),
        subresource: opts.subresource.map(str::to_string),
    };
    let mine = entries
        .iter()
        .position(|e| e.id.same(&me))
        .map(|i| entries.remove(i));
    for e in &mut entries {
        e.set = e.set.difference(&changed).difference(&removed);
    }
    // The writer's time moves only when it took over (added or changed) fields, as upstream's does.
    let (set, time) = match mine {
        Some(m) => {
            let time = if changed.is_empty() {
                m.time
            } else {
                Some(opts.now.to_string())
            };
            (m.set.difference(&removed).union(&changed), time)
        }
        None => (changed, Some(opts.now.to_string())),
    };
    entries.push(Entry { id: me, time, set });
    managed::encode(new, entries);
}

/// The field set of a whole object (the root itself is never a path).
fn root_set(object: &Value, shape: Shape<'_>) -> FieldSet {
    let mut set = walk::to_set(object, shape, true);
    set.member = false;
    set
}

fn check_type(config: &Value, kind: &KindInfo<'_>) -> Result<(), PatchError> {
    let field = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or_default();
    let (api_version, object_kind) = (field("apiVersion"), field("kind"));
    if object_kind.is_empty() {
        return Err(PatchError::BadRequest(
            "Object 'Kind' is missing in the applied configuration".to_string(),
        ));
    }
    if api_version != kind.api_version() {
        return Err(PatchError::BadRequest(format!(
            "Incorrect version specified in apply patch. Specified patch version: {api_version}, expected: {}",
            kind.api_version()
        )));
    }
    if object_kind != kind.kind {
        return Err(PatchError::BadRequest(format!(
            "Incorrect kind specified in apply patch. Specified patch kind: {object_kind}, expected: {}",
            kind.kind
        )));
    }
    Ok(())
}

fn without_reset_fields(object: &Value, reset: &[&str]) -> Value {
    let mut out = object.clone();
    if let Some(m) = out.as_object_mut() {
        for f in reset {
            m.remove(*f);
        }
    }
    out
}

/// The object without the fields no manager owns (type meta and server-set metadata).
fn strip(object: &Value) -> Value {
    owned_part(object, &[])
}

/// The part of `object` managers can own: without the reset fields of the endpoint, type meta and
/// server-set metadata. Copies only what it keeps (a status write leaves the spec uncopied): this runs on
/// every write, twice.
fn owned_part(object: &Value, reset: &[&str]) -> Value {
    let Some(map) = object.as_object() else {
        return object.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in map {
        let key = key.as_str();
        if reset.contains(&key) || key == "apiVersion" || key == "kind" {
            continue;
        }
        if key == "metadata"
            && let Some(meta) = value.as_object()
        {
            let kept: serde_json::Map<String, Value> = meta
                .iter()
                .filter(|(k, _)| !SERVER_METADATA.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !kept.is_empty() {
                out.insert(key.to_owned(), Value::Object(kept));
            }
            continue;
        }
        out.insert(key.to_owned(), value.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests;
