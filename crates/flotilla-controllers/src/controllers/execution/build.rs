//! Pure steps of the object watcher: ownership check,
//! generic retention of member-owned metadata, no-op detection, and detaching a preserved member object.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::names::{annotations, labels};
use flotilla_core::prune::prune_irrelevant_fields;
use serde_json::Value;

use crate::error::Error;
use crate::objects;

/// Ownership: Flotilla may update `observed` when it carries `karmada.io/managed: "true"`, or when
/// `desired` allows taking it over (`work.karmada.io/conflict-resolution: overwrite`).
///
/// # Errors
/// [`Error::Conflict`] with Karmada's message otherwise.
pub(crate) fn check_ownership(
    desired: &Value,
    observed: &Value,
    cluster: &str,
) -> Result<(), Error> {
    let managed = objects::label(observed, labels::MANAGED) == Some(labels::MANAGED_VALUE);
    let overwrite = objects::annotation(desired, annotations::CONFLICT_RESOLUTION)
        == Some(annotations::CONFLICT_RESOLUTION_OVERWRITE);
    if managed || overwrite {
        Ok(())
    } else {
        Err(Error::Conflict {
            kind: objects::kind(desired).to_owned(),
            namespace: objects::namespace(desired).to_owned(),
            name: objects::name(desired).to_owned(),
            cluster: cluster.to_owned(),
        })
    }
}

/// Whether `observed` is managed by Flotilla (and may therefore be deleted).
pub(crate) fn is_managed(observed: &Value) -> bool {
    objects::label(observed, labels::MANAGED) == Some(labels::MANAGED_VALUE)
}

/// Generic retention, done to `desired` for every kind before any interpreter Retain:
/// `resourceVersion`, `finalizers` and `ownerReferences` come from `observed`; observed annotations and labels
/// not in `desired` are kept unless they were propagated before (listed in observed's managed-* annotation)
/// and have since been removed from the template.
pub(crate) fn retain_cluster_fields(desired: &mut Value, observed: &Value) {
    let meta = objects::metadata_mut(desired);
    let observed_meta = observed.get("metadata").and_then(Value::as_object);
    for field in ["resourceVersion", "finalizers", "ownerReferences"] {
        match observed_meta.and_then(|m| m.get(field)) {
            Some(value) if !value.is_null() => {
                meta.insert(field.to_owned(), value.clone());
            }
            _ => {
                meta.remove(field);
            }
        }
    }
    let observed_annotations = objects::annotations(observed);
    let managed_annotations = managed_list(&observed_annotations, annotations::MANAGED_ANNOTATIONS);
    let managed_labels = managed_list(&observed_annotations, annotations::MANAGED_LABELS);
    retain_map(
        desired,
        "annotations",
        &observed_annotations,
        &managed_annotations,
    );
    retain_map(
        desired,
        "labels",
        &objects::labels(observed),
        &managed_labels,
    );
}

fn managed_list(annotations_map: &BTreeMap<String, String>, key: &str) -> BTreeSet<String> {
    annotations_map
        .get(key)
        .map(|list| {
            list.split(',')
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn retain_map(
    desired: &mut Value,
    field: &str,
    observed: &BTreeMap<String, String>,
    previously_managed: &BTreeSet<String>,
) {
    let mut merged = objects::string_map(desired, field);
    for (key, value) in observed {
        if !merged.contains_key(key) && !previously_managed.contains(key) {
            merged.insert(key.clone(), value.clone());
        }
    }
    if !merged.is_empty() {
        objects::set_string_map(desired, field, &merged);
    }
}

/// No-op detection: whether `desired` (already retained) differs from what the member holds.
///
/// The observed copy is pruned and retained exactly like `desired`; fields only the member has (defaults its
/// API server filled in) do not count as a difference, everything `desired` says must match, and lists must
/// match element for element.
pub(crate) fn needs_update(desired: &Value, observed: &Value) -> bool {
    let mut normalised = observed.clone();
    prune_irrelevant_fields(&mut normalised);
    retain_cluster_fields(&mut normalised, observed);
    !is_subset(desired, &normalised)
}

/// Whether every field of `want` is present with an equal value in `have` (objects compared key by key,
/// recursively; everything else compared exactly).
pub(crate) fn is_subset(want: &Value, have: &Value) -> bool {
    match (want, have) {
        (Value::Object(want), Value::Object(have)) => {
            want.iter().all(|(key, value)| match have.get(key) {
                Some(other) => is_subset(value, other),
                None => value.is_null() || empty_container(value),
            })
        }
        (Value::Array(want), Value::Array(have)) => {
            want.len() == have.len() && want.iter().zip(have).all(|(w, h)| is_subset(w, h))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => want == have,
    }
}

fn empty_container(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(list) => list.is_empty(),
        _ => false,
    }
}

/// The labels and annotations Flotilla puts on member objects; a member object preserved when its Work goes
/// (`preserveResourcesOnDeletion`) is stripped of them, with its policy's claim.
const BOOKKEEPING_LABELS: [&str; 3] = [
    labels::RESOURCE_BINDING_PERMANENT_ID,
    labels::WORK_PERMANENT_ID,
    labels::MANAGED,
];
const BOOKKEEPING_ANNOTATIONS: [&str; 9] = [
    annotations::MANAGED_ANNOTATIONS,
    annotations::MANAGED_LABELS,
    annotations::RESOURCE_BINDING_NAMESPACE,
    annotations::RESOURCE_BINDING_NAME,
    annotations::RESOURCE_TEMPLATE_UID,
    annotations::RESOURCE_TEMPLATE_GENERATION,
    annotations::WORK_NAME,
    annotations::WORK_NAMESPACE,
    annotations::CLUSTER_RESOURCE_BINDING_NAME,
];

/// The manifest of a Work being deleted with `preserveResourcesOnDeletion`, detached from Flotilla: without the
/// policy claim (PP for namespaced objects, CPP for cluster-scoped ones) and every bookkeeping key.
pub(crate) fn detached_manifest(manifest: &Value) -> Value {
    let mut out = manifest.clone();
    if objects::namespace(manifest).is_empty() {
        objects::remove_labels(&mut out, &[labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID]);
        objects::remove_annotations(&mut out, &[annotations::CLUSTER_PROPAGATION_POLICY_NAME]);
    } else {
        objects::remove_labels(&mut out, &[labels::PROPAGATION_POLICY_PERMANENT_ID]);
        objects::remove_annotations(
            &mut out,
            &[
                annotations::PROPAGATION_POLICY_NAMESPACE,
                annotations::PROPAGATION_POLICY_NAME,
            ],
        );
    }
    objects::remove_labels(&mut out, &BOOKKEEPING_LABELS);
    objects::remove_annotations(&mut out, &BOOKKEEPING_ANNOTATIONS);
    out
}

/// A stable fingerprint of a manifest (what was last applied), for the version record.
pub(crate) fn fingerprint(manifest: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = fnv::FnvHasher::default();
    // serde_json's Map is ordered by key (the `preserve_order` feature is off), so the text is canonical.
    manifest.to_string().hash(&mut hasher);
    hasher.finish()
}
