//! Pure steps of the binding status controller: aggregated status items from Works and the FullyApplied
//! condition (True when every expected cluster has an applied item, and only those).

use std::collections::BTreeSet;

use flotilla_api::names::conditions as names;
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ObjectReference, ResourceHealth};
use flotilla_core::conditions::{find, new_condition};
use flotilla_core::names::cluster_of_execution_namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::ResourceExt;

use crate::objects;

/// Why a Work could not be aggregated.
#[derive(Debug, thiserror::Error)]
#[error("Work {work} has no manifest for {resource}")]
pub(crate) struct NoManifest {
    /// `namespace/name` of the Work.
    pub work: String,
    /// The template it should carry.
    pub resource: String,
}

/// One item per (non-deleting) Work, sorted by cluster name: not applied (with the `Applied` condition's
/// message) until the Work is applied, then with the status and health its manifest reported.
///
/// # Errors
/// [`NoManifest`] when a Work does not carry the template `resource` (namespace `namespace`).
pub(crate) fn aggregated_items(
    works: &[&Work],
    resource: &ObjectReference,
    namespace: &str,
) -> Result<Vec<AggregatedStatusItem>, NoManifest> {
    let mut items = Vec::new();
    for work in works {
        if work.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let work_namespace = work.namespace().unwrap_or_default();
        let Ok(cluster) = cluster_of_execution_namespace(&work_namespace) else {
            continue;
        };
        let manifests = &work.spec.workload.manifests;
        let ordinal = manifests
            .iter()
            .position(|m| {
                objects::api_version(&m.0) == resource.api_version
                    && objects::kind(&m.0) == resource.kind
                    && objects::namespace(&m.0) == namespace
                    && objects::name(&m.0) == resource.name
            })
            .ok_or_else(|| NoManifest {
                work: format!("{work_namespace}/{}", work.name_any()),
                resource: format!(
                    "{} {} {namespace}/{}",
                    resource.api_version, resource.kind, resource.name
                ),
            })?;
        let conditions = work
            .status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or_default();
        let applied = find(conditions, names::WORK_APPLIED);
        let mut item = AggregatedStatusItem {
            cluster_name: cluster.to_owned(),
            health: Some(ResourceHealth::Unknown),
            ..AggregatedStatusItem::default()
        };
        match applied {
            Some(condition) if condition.status == "True" => {
                item.applied = true;
                let manifest = &manifests[ordinal].0;
                let (group, version) = objects::split_api_version(objects::api_version(manifest));
                let statuses = work
                    .status
                    .as_ref()
                    .map(|s| s.manifest_statuses.as_slice())
                    .unwrap_or_default();
                if let Some(found) = statuses.iter().find(|s| {
                    let id = &s.identifier;
                    usize::try_from(id.ordinal).is_ok_and(|o| o == ordinal)
                        && id.group == group
                        && id.version == version
                        && id.kind == objects::kind(manifest)
                        && id.namespace == objects::namespace(manifest)
                        && id.name == objects::name(manifest)
                }) {
                    item.status = found.status.clone();
                    item.health = found.health.clone().or(Some(ResourceHealth::Unknown));
                }
            }
            other => {
                item.applied_message = other.map(|c| c.message.clone()).unwrap_or_default();
            }
        }
        items.push(item);
    }
    items.sort_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
    Ok(items)
}

/// Whether some expected cluster's Work is still on its way to its first report: not created yet, not
/// applied yet, or applied with no manifest status reflected yet, and younger than `patience` (for a
/// missing Work, counted from the binding's last schedule at `scheduled`). Aggregating then writes a status
/// that the report, due within `patience`, supersedes; after `patience` the state is aggregated as it is, so
/// a member that does not answer does not hold its binding's status back.
pub(crate) fn reports_pending(
    works: &[&Work],
    expected: &BTreeSet<String>,
    scheduled: Option<jiff::Timestamp>,
    now: jiff::Timestamp,
    patience: std::time::Duration,
) -> bool {
    let young = |since: Option<jiff::Timestamp>| {
        since.is_some_and(|t| now.duration_since(t).unsigned_abs() < patience)
    };
    expected.iter().any(|cluster| {
        let work = works.iter().find(|w| {
            w.metadata.deletion_timestamp.is_none()
                && cluster_of_execution_namespace(&w.namespace().unwrap_or_default())
                    .is_ok_and(|c| c == cluster)
        });
        let Some(work) = work else {
            return young(scheduled);
        };
        let status = work.status.as_ref();
        let conditions = status.map(|s| s.conditions.as_slice()).unwrap_or_default();
        let reported = match find(conditions, names::WORK_APPLIED) {
            None => false,
            Some(applied) if applied.status == "True" => {
                status.is_some_and(|s| !s.manifest_statuses.is_empty())
            }
            Some(_) => true,
        };
        !reported && young(work.metadata.creation_timestamp.as_ref().map(|t| t.0))
    })
}

/// The FullyApplied condition: True when every expected cluster has exactly one applied item and no item is
/// for an unexpected cluster.
pub(crate) fn fully_applied(
    items: &[AggregatedStatusItem],
    expected: &BTreeSet<String>,
) -> Condition {
    let ok = !expected.is_empty()
        && items.len() == expected.len()
        && items
            .iter()
            .all(|i| i.applied && expected.contains(&i.cluster_name));
    if ok {
        new_condition(
            names::FULLY_APPLIED,
            "True",
            names::REASON_FULLY_APPLIED_SUCCESS,
            names::MESSAGE_FULLY_APPLIED_SUCCESS,
        )
    } else {
        new_condition(
            names::FULLY_APPLIED,
            "False",
            names::REASON_FULLY_APPLIED_FAILED,
            names::MESSAGE_FULLY_APPLIED_FAILED,
        )
    }
}
