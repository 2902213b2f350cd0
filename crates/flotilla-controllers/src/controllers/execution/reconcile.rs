//! The execution reconcile: release a deleted Work once its member objects are cleaned up (or detached), decide
//! `Dispatching`, then apply every manifest of a Work whose cluster is ready and decide `Applied`.

use std::sync::Arc;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{annotations, conditions as names, events, finalizers};
use flotilla_api::work::v1alpha1::{Work, WorkStatus};
use flotilla_client::api_error::is_not_found;
use flotilla_core::conditions::{cluster_ready, new_condition, set_condition};
use flotilla_core::names::cluster_of_execution_namespace;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{Api, ResourceExt};
use serde_json::Value;

use super::build::detached_manifest;
use super::watcher::Outcome;
use super::{ExecutionController, WorkKey};
use crate::api::get_opt;
use crate::error::{Error, Result};
use crate::events::reference;
use crate::member::Member;
use crate::runtime::Action;
use crate::{objects, update};

/// The template a manifest came from, for events: same identity, uid from `resourcetemplate.karmada.io/uid`.
fn template_reference(manifest: &Value) -> ObjectReference {
    ObjectReference {
        api_version: Some(objects::api_version(manifest).to_owned()),
        kind: Some(objects::kind(manifest).to_owned()),
        namespace: Some(objects::namespace(manifest).to_owned()).filter(|ns| !ns.is_empty()),
        name: Some(objects::name(manifest).to_owned()),
        uid: objects::annotation(manifest, annotations::RESOURCE_TEMPLATE_UID).map(str::to_owned),
        ..ObjectReference::default()
    }
}

impl ExecutionController {
    pub(super) async fn reconcile(&self, key: WorkKey) -> Result<Action> {
        let api: Api<Work> = Api::namespaced(self.ctx.control.client.clone(), &key.namespace);
        let work = match self.works.get(&key.namespace, &key.name) {
            Some(work) => work.as_ref().clone(),
            None => match get_opt(api.clone(), &key.name).await? {
                Some(work) => work,
                None => return Ok(Action::await_change()),
            },
        };
        let Ok(cluster_name) = cluster_of_execution_namespace(&key.namespace) else {
            return Ok(Action::await_change());
        };
        if !self.ctx.members.serves_name(cluster_name) {
            return Ok(Action::await_change());
        }
        let cluster = match self.clusters.get("", cluster_name) {
            Some(cluster) => Some(cluster),
            None => get_opt(
                Api::<Cluster>::all(self.ctx.control.client.clone()),
                cluster_name,
            )
            .await?
            .map(Arc::new),
        };
        // A Pull cluster's Works are its agent's (on the control plane), another cluster's not an agent's.
        if cluster
            .as_deref()
            .is_some_and(|cluster| !self.ctx.members.serves(cluster))
        {
            return Ok(Action::await_change());
        }
        if work.metadata.deletion_timestamp.is_some() {
            return self.finalize(&api, work, cluster.as_deref()).await;
        }
        let Some(cluster) = cluster else {
            return Err(Error::waiting(format!("Cluster {cluster_name} to exist")));
        };
        if !work.finalizers().iter().any(|f| f == finalizers::EXECUTION) {
            update::add_finalizer(&api, &key.to_string(), work.clone(), finalizers::EXECUTION)
                .await?;
        }

        let suspended = work.spec.suspend_dispatching == Some(true);
        let dispatching = if suspended {
            new_condition(
                names::WORK_DISPATCHING,
                "False",
                names::REASON_SUSPEND_DISPATCHING,
                names::MESSAGE_SUSPEND_DISPATCHING,
            )
        } else {
            new_condition(
                names::WORK_DISPATCHING,
                "True",
                names::REASON_DISPATCHING,
                names::MESSAGE_DISPATCHING,
            )
        };
        let message = dispatching.message.clone();
        let mut conditions = work
            .status
            .clone()
            .unwrap_or_else(WorkStatus::default)
            .conditions;
        // Dispatching is written together with Applied when the sync goes on, saving one status write.
        let dispatching_changed = set_condition(&mut conditions, dispatching);
        if dispatching_changed {
            self.recorder
                .normal(&reference(&work), events::WORK_DISPATCHING, message);
        }
        let ready = cluster_ready(&cluster);
        if suspended || !ready {
            // Posted whether or not they differ from the informer's copy, which may lag behind an earlier
            // post: the work status controller compares with what it last wrote.
            self.ctx.conditions.post(key.clone(), conditions);
            if suspended {
                return Ok(Action::await_change());
            }
            return Err(Error::ClusterNotReady {
                cluster: cluster_name.to_owned(),
            });
        }
        let member = match self.ctx.members.get(&cluster).await {
            Ok(member) => member,
            Err(err) => {
                self.ctx.conditions.post(key.clone(), conditions);
                return Err(err);
            }
        };
        self.sync(key.clone(), &work, conditions, &member)
            .await
            .map(|()| Action::await_change())
    }

    /// Applies every manifest (create when the member lacks it, else update), then records `Applied` (with
    /// `Dispatching`): the
    /// work status controller writes them together with the member objects' first status.
    async fn sync(
        &self,
        key: WorkKey,
        work: &Work,
        mut conditions: Vec<Condition>,
        member: &Member,
    ) -> Result<()> {
        let manifests = &work.spec.workload.manifests;
        let mut errors = Vec::new();
        for manifest in manifests {
            let manifest = &manifest.0;
            let result = self.apply_one(member, manifest).await;
            let template = template_reference(manifest);
            match &result {
                Ok(_) => self.recorder.normal(
                    &template,
                    events::SYNC_SUCCEED,
                    format!(
                        "Successfully applied resource({}/{}) to cluster {}",
                        objects::namespace(manifest),
                        objects::name(manifest),
                        member.cluster
                    ),
                ),
                Err(err) => self.recorder.failure(
                    &template,
                    events::SYNC_FAILED,
                    err,
                    format!(
                        "Failed to create or update resource({}/{}) in member cluster({}): {}",
                        objects::namespace(manifest),
                        objects::name(manifest),
                        member.cluster,
                        err.message()
                    ),
                ),
            }
            if let Err(err) = result {
                errors.push(err);
            }
        }
        let work_ref = reference(work);
        let ok = manifests.len() - errors.len();
        let condition = if errors.is_empty() {
            new_condition(
                names::WORK_APPLIED,
                "True",
                names::REASON_APPLIED_SUCCESSFUL,
                names::MESSAGE_APPLIED_SUCCESSFUL,
            )
        } else {
            let joined: Vec<String> = errors.iter().map(Error::message).collect();
            new_condition(
                names::WORK_APPLIED,
                "False",
                names::REASON_APPLIED_FAILED,
                &format!(
                    "Failed to apply all manifests ({ok}/{}): {}",
                    manifests.len(),
                    joined.join(", ")
                ),
            )
        };
        // Posted even when the informer's copy shows them already: that copy may predate an earlier post (a
        // failed apply's `Applied=False`, say) which this result must replace.
        set_condition(&mut conditions, condition);
        self.ctx.conditions.post(key, conditions);
        let result = Error::aggregate(errors);
        match &result {
            Ok(()) => self.recorder.normal(
                &work_ref,
                events::SYNC_SUCCEED,
                format!(
                    "Sync work({}/{}) to cluster({}) successful.",
                    work.namespace().unwrap_or_default(),
                    work.name_any(),
                    member.cluster
                ),
            ),
            Err(err) => self.recorder.failure(
                &work_ref,
                events::SYNC_FAILED,
                err,
                format!(
                    "Failed to sync work({}/{}) to cluster({}), err: {}",
                    work.namespace().unwrap_or_default(),
                    work.name_any(),
                    member.cluster,
                    err.message()
                ),
            ),
        }
        result
    }

    async fn apply_one(&self, member: &Member, manifest: &Value) -> Result<Outcome> {
        let served = member
            .resolve(objects::api_version(manifest), objects::kind(manifest))
            .await?;
        // Watch what we apply, so member-side changes and deletions come back to this Work.
        member.informer(&served);
        let result = self.watcher.apply(member, &served, manifest).await;
        if let Err(Error::Kube { source, .. }) = &result
            && is_not_found(source)
        {
            // The member stopped serving the resource (e.g. its CRD was removed): look it up again next time.
            member.forget_resource(objects::api_version(manifest), objects::kind(manifest));
        }
        result
    }

    /// A Work being deleted: clean the member (or detach what is preserved; a cluster not ready blocks the
    /// cleanup unless it is being deleted itself), then release the Work.
    async fn finalize(
        &self,
        api: &Api<Work>,
        work: Work,
        cluster: Option<&Cluster>,
    ) -> Result<Action> {
        if !work.finalizers().iter().any(|f| f == finalizers::EXECUTION) {
            return Ok(Action::await_change());
        }
        if let Some(cluster) = cluster {
            let preserve = work.spec.preserve_resources_on_deletion == Some(true);
            let cluster_deleting = cluster.metadata.deletion_timestamp.is_some();
            if preserve {
                let member = self.ctx.members.get(cluster).await?;
                for manifest in &work.spec.workload.manifests {
                    let manifest = &manifest.0;
                    let served = member
                        .resolve(objects::api_version(manifest), objects::kind(manifest))
                        .await?;
                    if let Some(observed) = self.watcher.observe(&member, &served, manifest).await?
                    {
                        let detached = detached_manifest(manifest);
                        self.watcher
                            .update(&member, &served, &detached, &observed)
                            .await?;
                    }
                }
            } else if cluster_ready(cluster) {
                let member = self.ctx.members.get(cluster).await?;
                for manifest in &work.spec.workload.manifests {
                    let manifest = &manifest.0;
                    match member
                        .resolve(objects::api_version(manifest), objects::kind(manifest))
                        .await
                    {
                        Ok(served) => self.watcher.delete(&member, &served, manifest).await?,
                        // The member does not serve the kind: there is nothing to delete.
                        Err(Error::Waiting { .. }) => {}
                        Err(err) => return Err(err),
                    }
                }
            } else if !cluster_deleting {
                return Err(Error::ClusterNotReady {
                    cluster: cluster.name_any(),
                });
            }
        }
        remove_finalizer(api, work).await?;
        Ok(Action::await_change())
    }
}

async fn remove_finalizer(api: &Api<Work>, work: Work) -> Result<()> {
    let what = format!(
        "Work {}/{}",
        work.namespace().unwrap_or_default(),
        work.name_any()
    );
    update::remove_finalizer(api, &what, work, finalizers::EXECUTION).await
}
