//! The policy normaliser: what Karmada's mutating webhook does to PropagationPolicies and
//! ClusterPropagationPolicies on CREATE (controllers spec §1.9), done as a controller because Flotilla has no
//! admission webhook: a permanent-id label (a new UUID) and the policy controller's finalizer.
//!
//! Invariant: the detector never applies a policy without a permanent id, so nothing acts on a policy before
//! this controller has given it one. Spec defaults are not written back; readers apply them in memory.

use std::sync::Arc;

use flotilla_api::names::{finalizers, labels};
use flotilla_api::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::PostParams;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::detector::PolicyKey;
use crate::api::get_opt;
use crate::context::Context;
use crate::error::{Error, Result, is_conflict, is_not_found};
use crate::runtime::{self, Action, Change, Queue};

/// Name of the controller (metrics).
pub const NAME: &str = "policy-normaliser";

/// What the webhook would add to a policy's metadata, applied to `meta`; returns whether it changed.
///
/// A policy without our finalizer at generation 1 is new: it gets a fresh id even if the user wrote one
/// (Karmada overwrites any user value on CREATE). Later, a missing id is restored with a fresh one and a
/// missing finalizer re-added unless the policy is being deleted.
pub fn normalise(meta: &mut ObjectMeta, id_label: &str, finalizer: &str) -> bool {
    let deleting = meta.deletion_timestamp.is_some();
    let has_finalizer = meta
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == finalizer));
    let is_new = !deleting && !has_finalizer && meta.generation.unwrap_or(1) <= 1;
    let labels_map = meta.labels.get_or_insert_with(Default::default);
    let has_id = labels_map.get(id_label).is_some_and(|id| !id.is_empty());
    let mut changed = false;
    if is_new || !has_id {
        labels_map.insert(id_label.to_owned(), uuid::Uuid::new_v4().to_string());
        changed = true;
    }
    if !deleting && !has_finalizer {
        meta.finalizers
            .get_or_insert_with(Vec::new)
            .push(finalizer.to_owned());
        changed = true;
    }
    changed
}

fn needs_normalising<K: Resource>(obj: &K, id_label: &str, finalizer: &str) -> bool {
    let mut meta = obj.meta().clone();
    normalise(&mut meta, id_label, finalizer)
}

/// Runs the normaliser until `shutdown` is cancelled.
pub async fn run(ctx: Context, shutdown: CancellationToken) {
    let queue: Arc<Queue<PolicyKey>> = Queue::new(ctx.options.backoff);
    let pp = ctx.informers.typed::<PropagationPolicy>();
    let cpp = ctx.informers.typed::<ClusterPropagationPolicy>();
    let q = queue.clone();
    pp.add_handler(move |change| {
        if let Change::Added(obj) | Change::Updated { new: obj, .. } = change
            && needs_normalising(
                obj.as_ref(),
                labels::PROPAGATION_POLICY_PERMANENT_ID,
                finalizers::PROPAGATION_POLICY,
            )
        {
            q.add(PolicyKey {
                namespace: Some(obj.namespace().unwrap_or_default()),
                name: obj.name_any(),
            });
        }
    });
    let q = queue.clone();
    cpp.add_handler(move |change| {
        if let Change::Added(obj) | Change::Updated { new: obj, .. } = change
            && needs_normalising(
                obj.as_ref(),
                labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
                finalizers::CLUSTER_PROPAGATION_POLICY,
            )
        {
            q.add(PolicyKey {
                namespace: None,
                name: obj.name_any(),
            });
        }
    });
    let client = ctx.client.clone();
    let workers = tokio::spawn(runtime::run(
        NAME,
        queue.clone(),
        2,
        ctx.metrics.clone(),
        move |key: PolicyKey| {
            let client = client.clone();
            async move {
                match &key.namespace {
                    Some(ns) => {
                        let api = Api::<PropagationPolicy>::namespaced(client, ns);
                        update(
                            api,
                            &key.name,
                            labels::PROPAGATION_POLICY_PERMANENT_ID,
                            finalizers::PROPAGATION_POLICY,
                        )
                        .await
                    }
                    None => {
                        let api = Api::<ClusterPropagationPolicy>::all(client);
                        update(
                            api,
                            &key.name,
                            labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
                            finalizers::CLUSTER_PROPAGATION_POLICY,
                        )
                        .await
                    }
                }
                .map(|()| Action::AwaitChange)
            }
        },
    ));
    shutdown.cancelled().await;
    queue.close();
    let _ = workers.await;
}

async fn update<K>(api: Api<K>, name: &str, id_label: &str, finalizer: &str) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    for _ in 0..5 {
        let Some(mut policy) = get_opt(api.clone(), name).await? else {
            return Ok(());
        };
        if !normalise(policy.meta_mut(), id_label, finalizer) {
            return Ok(());
        }
        match api.replace(name, &PostParams::default(), &policy).await {
            Ok(_) => return Ok(()),
            Err(err) if is_conflict(&err) => continue,
            Err(err) if is_not_found(&err) => return Ok(()),
            Err(source) => {
                return Err(Error::kube(
                    "update",
                    format!("{} {name}", K::kind(&())),
                    source,
                ));
            }
        }
    }
    Err(Error::waiting(format!(
        "{} {name} to stop changing",
        K::kind(&())
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = labels::PROPAGATION_POLICY_PERMANENT_ID;
    const FIN: &str = finalizers::PROPAGATION_POLICY;

    fn mk_meta(generation: i64) -> ObjectMeta {
        ObjectMeta {
            name: Some("pp".into()),
            generation: Some(generation),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn new_policies_get_a_fresh_id_and_the_finalizer() {
        let mut meta = mk_meta(1);
        meta.labels = Some([(ID.to_owned(), "user-value".to_owned())].into());
        assert!(normalise(&mut meta, ID, FIN));
        let id = meta.labels.as_ref().unwrap()[ID].clone();
        assert_ne!(id, "user-value");
        assert!(uuid::Uuid::parse_str(&id).is_ok());
        assert_eq!(meta.finalizers, Some(vec![FIN.to_owned()]));
        assert!(
            !normalise(&mut meta, ID, FIN),
            "normalising twice changes nothing"
        );
    }

    #[test]
    fn existing_ids_survive_and_deleting_policies_get_no_finalizer() {
        let mut meta = mk_meta(4);
        meta.labels = Some([(ID.to_owned(), "kept".to_owned())].into());
        meta.finalizers = Some(vec![FIN.to_owned()]);
        assert!(!normalise(&mut meta, ID, FIN));

        let mut deleting = mk_meta(2);
        deleting.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
        deleting.labels = Some([(ID.to_owned(), "kept".to_owned())].into());
        assert!(!normalise(&mut deleting, ID, FIN));
    }
}
