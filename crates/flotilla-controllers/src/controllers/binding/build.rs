//! Pure steps of the binding controller: which clusters a binding targets and expects, Job completions, and the
//! Work for one cluster.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::names::{annotations, namespaces};
use flotilla_api::policy::v1alpha1::{ConflictResolution, PurgeMode, ReplicaSchedulingType};
use flotilla_api::work::v1alpha2::ResourceBindingSpec;
use flotilla_core::names::work_name;
use flotilla_core::overrides::AppliedOverrides;
use flotilla_core::scheduler::webster;
use serde_json::Value;

use crate::objects;
use crate::works::{DesiredWork, decorate_manifest};

/// One cluster a binding's Works go to, and the replicas assigned there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// The cluster.
    pub cluster: String,
    /// Replicas for that cluster (0 for non-workloads).
    pub replicas: i32,
}

/// `spec.clusters`, then the clusters of `spec.requiredBy` snapshots not already listed (with the snapshot's
/// replicas), in that order.
pub(crate) fn targets(spec: &ResourceBindingSpec) -> Vec<Target> {
    let mut out: Vec<Target> = spec
        .clusters
        .iter()
        .map(|c| Target {
            cluster: c.name.clone(),
            replicas: c.replicas,
        })
        .collect();
    for snapshot in &spec.required_by {
        for cluster in &snapshot.clusters {
            if !out.iter().any(|t| t.cluster == cluster.name) {
                out.push(Target {
                    cluster: cluster.name.clone(),
                    replicas: cluster.replicas,
                });
            }
        }
    }
    out
}

/// Clusters that may hold a Work of the binding: `spec.clusters`, every `requiredBy` cluster, and the
/// `fromCluster` of graceful eviction tasks not purged `Directly`. Works of the binding elsewhere are orphans.
pub(crate) fn expected_clusters(spec: &ResourceBindingSpec) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = spec.clusters.iter().map(|c| c.name.clone()).collect();
    for snapshot in &spec.required_by {
        out.extend(snapshot.clusters.iter().map(|c| c.name.clone()));
    }
    for task in &spec.graceful_eviction_tasks {
        if task.purge_mode != Some(PurgeMode::Directly) {
            out.insert(task.from_cluster.clone());
        }
    }
    out
}

/// Clusters being evicted with `purgeMode: Directly`: while a Work of the binding remains in one, no new Work is
/// created (the old cluster is cleaned first).
pub(crate) fn directly_purged_clusters(spec: &ResourceBindingSpec) -> BTreeSet<String> {
    spec.graceful_eviction_tasks
        .iter()
        .filter(|t| t.purge_mode == Some(PurgeMode::Directly))
        .map(|t| t.from_cluster.clone())
        .collect()
}

/// Karmada's `injectReservedLabelState` (gate `StatefulFailoverInjection`): the labels of the last graceful
/// eviction task's `preservedLabelState`, for the copy going to `cluster`, when the binding now targets that one
/// cluster only (`targets` counts `spec.clusters` with the `requiredBy` clusters), that task purges
/// `Directly`, and `cluster` is not one the binding had before that failover. Empty otherwise, so the labels
/// go once the task is removed.
pub(crate) fn preserved_labels<'a>(
    spec: &'a ResourceBindingSpec,
    cluster: &str,
    targets: usize,
) -> &'a BTreeMap<String, String> {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    match spec.graceful_eviction_tasks.last() {
        Some(task)
            if targets == 1
                && task.purge_mode == Some(PurgeMode::Directly)
                && !task.clusters_before_failover.iter().any(|c| c == cluster) =>
        {
            &task.preserved_label_state
        }
        _ => &NONE,
    }
}

/// Whether the binding describes a workload (replicas, replica requirements or components).
pub(crate) fn is_workload(spec: &ResourceBindingSpec) -> bool {
    spec.replicas > 0 || spec.replica_requirements.is_some() || !spec.components.is_empty()
}

fn is_divided(spec: &ResourceBindingSpec) -> bool {
    spec.placement
        .as_ref()
        .and_then(|p| p.replica_scheduling.as_ref())
        .is_some_and(|s| s.replica_scheduling_type == ReplicaSchedulingType::Divided)
}

/// Job completions per cluster: for a Divided Job with replicas and `spec.completions`, the
/// completions divided over the targets with Webster, weighted by each target's replicas, tie-broken by the
/// Job's UID. `None` when the rule does not apply.
pub(crate) fn job_completions(
    template: &Value,
    spec: &ResourceBindingSpec,
    targets: &[Target],
) -> Option<BTreeMap<String, i64>> {
    if objects::kind(template) != "Job" || spec.replicas <= 0 || !is_divided(spec) {
        return None;
    }
    let completions = template
        .pointer("/spec/completions")
        .and_then(Value::as_i64)?;
    let votes: Vec<(&str, i64)> = targets
        .iter()
        .map(|t| (t.cluster.as_str(), i64::from(t.replicas)))
        .collect();
    let seats = i32::try_from(completions).unwrap_or(i32::MAX);
    let allocation = webster::allocate(seats, &votes, &[], objects::uid(template));
    Some(
        allocation
            .into_iter()
            .map(|(cluster, n)| (cluster, i64::from(n)))
            .collect(),
    )
}

/// Sets a Job's `spec.completions` if the field exists.
pub(crate) fn set_completions(object: &mut Value, completions: i64) {
    if let Some(field) = object.pointer_mut("/spec/completions")
        && field.is_number()
    {
        *field = Value::from(completions);
    }
}

/// The Work's conflict resolution: the template's `work.karmada.io/conflict-resolution`
/// annotation when it is `overwrite` or `abort`, else from the binding's `conflictResolution`.
pub(crate) fn conflict_resolution(template: &Value, spec: &ResourceBindingSpec) -> &'static str {
    match objects::annotation(template, annotations::CONFLICT_RESOLUTION) {
        Some(annotations::CONFLICT_RESOLUTION_OVERWRITE) => {
            annotations::CONFLICT_RESOLUTION_OVERWRITE
        }
        Some(annotations::CONFLICT_RESOLUTION_ABORT) => annotations::CONFLICT_RESOLUTION_ABORT,
        other => {
            if let Some(value) = other {
                tracing::warn!(value, template = %objects::describe(template),
                    "ignoring invalid work.karmada.io/conflict-resolution annotation");
            }
            if spec.conflict_resolution == ConflictResolution::Overwrite {
                annotations::CONFLICT_RESOLUTION_OVERWRITE
            } else {
                annotations::CONFLICT_RESOLUTION_ABORT
            }
        }
    }
}

/// Whether dispatching to `cluster` is suspended: `spec.suspension.dispatching`, or `cluster` named in
/// `dispatchingOnClusters`.
pub(crate) fn suspend_dispatching(spec: &ResourceBindingSpec, cluster: &str) -> bool {
    spec.suspension.as_ref().is_some_and(|s| {
        s.policy.dispatching == Some(true)
            || s.policy
                .dispatching_on_clusters
                .as_ref()
                .is_some_and(|on| on.cluster_names.iter().any(|c| c == cluster))
    })
}

/// The binding a Work is built for.
#[derive(Clone, Debug)]
pub(crate) struct BindingInfo<'a> {
    /// The binding's permanent-id label key and value.
    pub permanent_id: (&'static str, &'a str),
    /// Annotations naming the binding (namespace and name for an RB, name for a CRB).
    pub name_annotations: BTreeMap<String, String>,
    /// The binding's spec.
    pub spec: &'a ResourceBindingSpec,
    /// How many clusters the binding's Works go to ([`targets`]).
    pub targets: usize,
}

/// The Work for one cluster from the template copy after replica revision and overrides: the binding's
/// permanent-id label and name annotations on the manifest and the Work, the conflict resolution and applied
/// overrides on the Work, the Work named after the overridden copy in the cluster's execution namespace, and its
/// `suspendDispatching` and `preserveResourcesOnDeletion` always written.
///
/// # Errors
/// Only if the applied-overrides records cannot be serialised (never for API types).
pub(crate) fn build_work(
    binding: &BindingInfo<'_>,
    template: &Value,
    cluster: &str,
    mut manifest: Value,
    applied: &AppliedOverrides,
) -> Result<DesiredWork, serde_json::Error> {
    let (id_label, id) = binding.permanent_id;
    objects::set_label(&mut manifest, id_label, id);
    let generation = objects::generation(template);
    if generation > 0 {
        objects::set_annotation(
            &mut manifest,
            annotations::RESOURCE_TEMPLATE_GENERATION,
            &generation.to_string(),
        );
    }
    for (key, value) in &binding.name_annotations {
        objects::set_annotation(&mut manifest, key, value);
    }
    let conflict = conflict_resolution(template, binding.spec);
    let namespace = namespaces::execution_space(cluster);
    let name = work_name(
        objects::kind(&manifest),
        objects::name(&manifest),
        objects::namespace(&manifest),
    );
    decorate_manifest(
        &mut manifest,
        &namespace,
        &name,
        Some(objects::uid(template)),
        Some(conflict),
    );

    let mut work_annotations = binding.name_annotations.clone();
    work_annotations.insert(
        annotations::CONFLICT_RESOLUTION.to_owned(),
        conflict.to_owned(),
    );
    work_annotations.extend(applied.annotations()?);
    Ok(DesiredWork {
        namespace,
        name,
        labels: [(id_label.to_owned(), id.to_owned())].into(),
        annotations: work_annotations,
        owner_references: None,
        manifest,
        suspend_dispatching: suspend_dispatching(binding.spec, cluster),
        preserve_resources_on_deletion: binding
            .spec
            .preserve_resources_on_deletion
            .unwrap_or(false),
    })
}
