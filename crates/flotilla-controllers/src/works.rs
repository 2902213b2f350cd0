//! Writing Works (for bindings and for propagated namespaces): manifest decoration and normalisation as Karmada's
//! `CreateOrUpdateWork` plus its Work webhook do, and the create-or-update itself.
//!
//! Doing the webhook's normalisation here (prune, managed-label and managed-annotation lists, the Work's
//! permanent id copied into the manifest) means a Work written twice from the same inputs is byte-identical,
//! so nothing is updated needlessly.

use std::collections::BTreeMap;

use flotilla_api::names::{annotations, labels};
use flotilla_api::work::v1alpha1::{Manifest, Work, WorkSpec, WorkloadTemplate};
use flotilla_client::api_error::is_not_found;
use flotilla_core::prune::prune_for_work;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Api, Client, ResourceExt};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::objects;
use crate::update::{self, Edit, Written};

/// Everything a Work is made of.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DesiredWork {
    /// Execution namespace (`karmada-es-<cluster>`).
    pub namespace: String,
    /// Work name.
    pub name: String,
    /// Work labels (merged key by key into an existing Work).
    pub labels: BTreeMap<String, String>,
    /// Work annotations (merged key by key into an existing Work).
    pub annotations: BTreeMap<String, String>,
    /// Owner references (Works of system objects, [`owned_work`]); replaced when set.
    pub owner_references: Option<Vec<OwnerReference>>,
    /// The single manifest, already decorated with [`decorate_manifest`].
    pub manifest: Value,
    /// `spec.suspendDispatching`.
    pub suspend_dispatching: bool,
    /// `spec.preserveResourcesOnDeletion`.
    pub preserve_resources_on_deletion: bool,
}

/// Karmada's `CreateOrUpdateWork`, first half: the ownership marker, template uid, owning Work and conflict
/// resolution on the manifest; then prune it (`flotilla_core::prune`) and drop a Job's `ttlSecondsAfterFinished`.
pub(crate) fn decorate_manifest(
    manifest: &mut Value,
    work_namespace: &str,
    work_name: &str,
    template_uid: Option<&str>,
    conflict_resolution: Option<&str>,
) {
    objects::set_label(manifest, labels::MANAGED, labels::MANAGED_VALUE);
    if let Some(uid) = template_uid.filter(|uid| !uid.is_empty()) {
        objects::set_annotation(manifest, annotations::RESOURCE_TEMPLATE_UID, uid);
    }
    objects::set_annotation(manifest, annotations::WORK_NAME, work_name);
    objects::set_annotation(manifest, annotations::WORK_NAMESPACE, work_namespace);
    if let Some(value) = conflict_resolution {
        objects::set_annotation(manifest, annotations::CONFLICT_RESOLUTION, value);
    }
    prune_for_work(manifest);
}

/// The Work carrying a system object rather than a template's (a Namespace for the namespace sync controller, the
/// impersonation RBAC for the unified-auth controller): Work `name` in `cluster`'s execution namespace, whose
/// controller owner is `owner` (deleting the owner collects the Work), with `manifest` decorated as Karmada's
/// `CreateOrUpdateWork` decorates it. That always sets `resourcetemplate.karmada.io/uid`, empty when the object
/// has no uid (the impersonation objects are built, not read), and never a conflict resolution.
pub(crate) fn owned_work(
    cluster: &str,
    name: String,
    mut manifest: Value,
    template_uid: &str,
    owner: OwnerReference,
    annotations: BTreeMap<String, String>,
) -> DesiredWork {
    let execution_space = flotilla_api::names::namespaces::execution_space(cluster);
    objects::set_annotation(
        &mut manifest,
        annotations::RESOURCE_TEMPLATE_UID,
        template_uid,
    );
    decorate_manifest(&mut manifest, &execution_space, &name, None, None);
    DesiredWork {
        namespace: execution_space,
        name,
        labels: BTreeMap::new(),
        annotations,
        owner_references: Some(vec![owner]),
        manifest,
        suspend_dispatching: false,
        preserve_resources_on_deletion: false,
    }
}

/// Karmada's `CreateOrUpdateWork`, second half (the Work webhook's normalisation, done here so that an update
/// writes what the webhook would leave): recompute the managed-annotations list
/// (always naming both managed-* keys), copy the Work's permanent id into the labels, recompute the
/// managed-labels list.
pub(crate) fn finalize_manifest(manifest: &mut Value, work_permanent_id: Option<&str>) {
    let mut annotation_keys: Vec<String> = objects::annotations(manifest).into_keys().collect();
    for key in [
        annotations::MANAGED_ANNOTATIONS,
        annotations::MANAGED_LABELS,
    ] {
        if !annotation_keys.iter().any(|k| k == key) {
            annotation_keys.push(key.to_owned());
        }
    }
    annotation_keys.sort();
    objects::set_annotation(
        manifest,
        annotations::MANAGED_ANNOTATIONS,
        &annotation_keys.join(","),
    );
    if let Some(id) = work_permanent_id.filter(|id| !id.is_empty()) {
        objects::set_label(manifest, labels::WORK_PERMANENT_ID, id);
    }
    let label_keys: Vec<String> = objects::labels(manifest).into_keys().collect();
    objects::set_annotation(manifest, annotations::MANAGED_LABELS, &label_keys.join(","));
}

/// Merges `desired` into an existing Work (labels and annotations key by key, finalizer added, spec replaced,
/// manifest finalised with the existing permanent id). Returns whether anything changed.
pub(crate) fn merge_work(existing: &mut Work, desired: &DesiredWork, finalizer: &str) -> bool {
    let before = existing.clone();
    let labels_map = existing.labels_mut();
    labels_map.extend(desired.labels.clone());
    let annotations_map = existing.annotations_mut();
    annotations_map.extend(desired.annotations.clone());
    let finalizers = existing.finalizers_mut();
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_owned());
    }
    if let Some(owners) = &desired.owner_references {
        existing.metadata.owner_references = Some(owners.clone());
    }
    // The Work webhook gives every Work a permanent id, on update too when it lacks one.
    let id = match existing
        .labels()
        .get(labels::WORK_PERMANENT_ID)
        .filter(|id| !id.is_empty())
    {
        Some(id) => id.clone(),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            existing
                .labels_mut()
                .insert(labels::WORK_PERMANENT_ID.to_owned(), id.clone());
            id
        }
    };
    let mut manifest = desired.manifest.clone();
    finalize_manifest(&mut manifest, Some(&id));
    existing.spec = spec_of(desired, manifest);
    *existing != before
}

fn spec_of(desired: &DesiredWork, manifest: Value) -> WorkSpec {
    WorkSpec {
        workload: WorkloadTemplate {
            manifests: vec![Manifest(manifest)],
        },
        suspend_dispatching: Some(desired.suspend_dispatching),
        preserve_resources_on_deletion: Some(desired.preserve_resources_on_deletion),
    }
}

/// A new Work for `desired`, with a fresh permanent id in its labels and its manifest.
pub(crate) fn new_work(desired: &DesiredWork, finalizer: &str) -> Work {
    let id = uuid::Uuid::new_v4().to_string();
    let mut labels_map = desired.labels.clone();
    labels_map.insert(labels::WORK_PERMANENT_ID.to_owned(), id.clone());
    let mut manifest = desired.manifest.clone();
    finalize_manifest(&mut manifest, Some(&id));
    Work {
        metadata: ObjectMeta {
            name: Some(desired.name.clone()),
            namespace: Some(desired.namespace.clone()),
            labels: Some(labels_map),
            annotations: (!desired.annotations.is_empty()).then(|| desired.annotations.clone()),
            finalizers: Some(vec![finalizer.to_owned()]),
            owner_references: desired.owner_references.clone(),
            ..ObjectMeta::default()
        },
        spec: spec_of(desired, manifest),
        status: None,
    }
}

/// What [`create_or_update_work`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorkWrite {
    /// The Work was created.
    Created,
    /// The Work was updated.
    Updated,
    /// The Work already matched.
    Unchanged,
}

/// Creates the Work or merges `desired` into it (retrying write conflicts). With `known_absent` (a cache
/// holds no such Work) the first attempt creates without reading; a Work that exists after all answers
/// AlreadyExists and is then read and merged.
///
/// # Errors
/// `Waiting` when the existing Work is being deleted; `Kube` on API failures.
pub(crate) async fn create_or_update_work(
    client: &Client,
    desired: &DesiredWork,
    finalizer: &str,
    known_absent: bool,
) -> Result<WorkWrite> {
    let api: Api<Work> = Api::namespaced(client.clone(), &desired.namespace);
    let what = &format!("Work {}/{}", desired.namespace, desired.name);
    let create = || Ok(new_work(desired, finalizer));
    let written = update::create_or_update(
        &api,
        what,
        &desired.name,
        known_absent,
        create,
        |mut work| async move {
            if work.metadata.deletion_timestamp.is_some() {
                return Err(Error::waiting(format!("{what} to finish deleting")));
            }
            let changed = merge_work(&mut work, desired, finalizer);
            Ok(Edit::of(work, changed))
        },
    )
    .await?;
    Ok(match written {
        Written::Created(_) => WorkWrite::Created,
        Written::Updated(_) => WorkWrite::Updated,
        Written::Unchanged(_) | Written::Gone => WorkWrite::Unchanged,
    })
}

/// Deletes a Work, ignoring NotFound.
///
/// # Errors
/// `Kube` on other failures.
pub(crate) async fn delete_work(client: &Client, namespace: &str, name: &str) -> Result<()> {
    let api: Api<Work> = Api::namespaced(client.clone(), namespace);
    match api.delete(name, &Default::default()).await {
        Ok(_) => Ok(()),
        Err(err) if is_not_found(&err) => Ok(()),
        Err(source) => Err(Error::kube(
            "delete",
            format!("Work {namespace}/{name}"),
            source,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn mk_desired() -> DesiredWork {
        let mut manifest = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx", "namespace": "default", "uid": "u", "resourceVersion": "9",
                         "labels": {"app": "nginx"}, "annotations": {"note": "x"}},
            "spec": {"replicas": 1}, "status": {"replicas": 1}
        });
        decorate_manifest(
            &mut manifest,
            "karmada-es-member1",
            "nginx-687f7fb96f",
            Some("u"),
            Some("abort"),
        );
        DesiredWork {
            namespace: "karmada-es-member1".into(),
            name: "nginx-687f7fb96f".into(),
            labels: [(
                "resourcebinding.karmada.io/permanent-id".to_owned(),
                "rb".to_owned(),
            )]
            .into(),
            annotations: [(
                "resourcebinding.karmada.io/name".to_owned(),
                "nginx-deployment".to_owned(),
            )]
            .into(),
            manifest,
            ..DesiredWork::default()
        }
    }

    #[test]
    fn manifests_carry_karmada_bookkeeping_and_managed_lists() {
        let work = new_work(&mk_desired(), "karmada.io/execution-controller");
        let id = work
            .labels()
            .get(labels::WORK_PERMANENT_ID)
            .cloned()
            .unwrap();
        let manifest = &work.spec.workload.manifests[0].0;
        assert_eq!(
            manifest["metadata"]["labels"],
            json!({
                "app": "nginx", "karmada.io/managed": "true", "work.karmada.io/permanent-id": id
            })
        );
        assert_eq!(
            manifest["metadata"]["annotations"],
            json!({
                "note": "x",
                "resourcetemplate.karmada.io/uid": "u",
                "work.karmada.io/name": "nginx-687f7fb96f",
                "work.karmada.io/namespace": "karmada-es-member1",
                "work.karmada.io/conflict-resolution": "abort",
                "resourcetemplate.karmada.io/managed-annotations":
                    "note,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,\
            resourcetemplate.karmada.io/uid,work.karmada.io/conflict-resolution,work.karmada.io/name,work.karmada.io/namespace",
                "resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed,work.karmada.io/permanent-id"
            })
        );
        assert!(manifest.get("status").is_none());
        assert!(manifest["metadata"].get("uid").is_none());
        assert_eq!(work.spec.suspend_dispatching, Some(false));
        assert_eq!(work.spec.preserve_resources_on_deletion, Some(false));
        assert_eq!(
            work.finalizers(),
            &["karmada.io/execution-controller".to_owned()]
        );
    }

    #[test]
    fn merging_the_same_desired_work_is_a_no_op_and_keeps_foreign_keys() {
        let desired = mk_desired();
        let mut work = new_work(&desired, "karmada.io/execution-controller");
        work.labels_mut().insert("extra".into(), "kept".into());
        assert!(!merge_work(
            &mut work,
            &desired,
            "karmada.io/execution-controller"
        ));
        let mut changed = desired.clone();
        changed.manifest["spec"]["replicas"] = json!(3);
        assert!(merge_work(
            &mut work,
            &changed,
            "karmada.io/execution-controller"
        ));
        assert_eq!(work.labels().get("extra").map(String::as_str), Some("kept"));
        assert_eq!(
            work.spec.workload.manifests[0].0["spec"]["replicas"],
            json!(3)
        );
        let id = work.labels().get(labels::WORK_PERMANENT_ID).cloned();
        assert_eq!(
            work.spec.workload.manifests[0].0["metadata"]["labels"]["work.karmada.io/permanent-id"]
                .as_str(),
            id.as_deref()
        );
    }
}
