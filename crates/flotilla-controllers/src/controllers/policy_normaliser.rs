//! The policy normaliser: what Karmada's mutating webhook does to PropagationPolicies and
//! ClusterPropagationPolicies on CREATE (a permanent-id label, a new UUID, and the policy controller's
//! finalizer), done afterwards for policies that were stored without passing the webhook: stored before it was
//! registered, or written to an API server where it is not. With the webhook registered it finds nothing to do.
//!
//! Invariant: the detector never applies a policy without a permanent id, so nothing acts on a policy before
//! this controller has given it one. Spec defaults are not written back; readers apply them in memory.

use std::sync::Arc;

use flotilla_api::names::{finalizers, labels};
use flotilla_api::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::runtime::{Action, Controller};
use crate::shared::ControlPlane;
use crate::update::{Edit, Part};

/// Name of the controller (metrics).
pub(crate) const NAME: &str = "policy-normaliser";

/// Concurrent normalisations per policy kind (each is one small write).
const WORKERS: usize = 2;

/// What the webhook would add to a policy's metadata, applied to `meta`; returns whether it changed.
///
/// A policy without our finalizer at generation 1 is new: it gets a fresh id even if the user wrote one
/// (Karmada overwrites any user value on CREATE). Later, a missing id is restored with a fresh one and a
/// missing finalizer re-added unless the policy is being deleted.
pub(crate) fn normalise(meta: &mut ObjectMeta, id_label: &str, finalizer: &str) -> bool {
    let deleting = meta.deletion_timestamp.is_some();
    let has_finalizer = meta
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == finalizer));
    let is_new = !deleting && !has_finalizer && meta.generation.unwrap_or(1) <= 1;
    if is_new {
        crate::admission::policies::stamp_created(meta, id_label, finalizer);
        return true;
    }
    let labels_map = meta.labels.get_or_insert_with(Default::default);
    let mut changed = false;
    if labels_map.get(id_label).is_none_or(|id| id.is_empty()) {
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
pub(crate) async fn run(ctx: ControlPlane, shutdown: CancellationToken) {
    tokio::join!(
        normaliser::<PropagationPolicy>(
            &ctx,
            shutdown.clone(),
            labels::PROPAGATION_POLICY_PERMANENT_ID,
            finalizers::PROPAGATION_POLICY,
            |client, policy| Api::namespaced(client, &policy.namespace().unwrap_or_default()),
        ),
        normaliser::<ClusterPropagationPolicy>(
            &ctx,
            shutdown,
            labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
            finalizers::CLUSTER_PROPAGATION_POLICY,
            |client, _| Api::all(client),
        ),
    );
}

/// Normalises the policies of one kind (each reached through `api`) until `shutdown` is cancelled.
async fn normaliser<K>(
    ctx: &ControlPlane,
    shutdown: CancellationToken,
    id_label: &'static str,
    finalizer: &'static str,
    api: fn(Client, &K) -> Api<K>,
) where
    K: Resource<DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let informer = ctx.informers.typed::<K>();
    let runner = Controller::new(NAME, &informer, &ctx.runtime).workers(WORKERS);
    runner.reconcile_changes(&informer, move |change| {
        needs_normalising(change.object().as_ref(), id_label, finalizer)
    });
    let client = Arc::new(ctx.client.clone());
    runner
        .run(shutdown, client, move |client, policy| async move {
            let api = api(client.as_ref().clone(), &policy);
            update(api, &policy.name_any(), id_label, finalizer)
                .await
                .map(|()| Action::await_change())
        })
        .await;
}

async fn update<K>(api: Api<K>, name: &str, id_label: &str, finalizer: &str) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let what = format!("{} {name}", K::kind(&()));
    crate::update::update(
        &api,
        &what,
        name,
        None,
        Part::Object,
        |mut policy| async move {
            let changed = normalise(policy.meta_mut(), id_label, finalizer);
            Ok(Edit::of(policy, changed))
        },
    )
    .await?;
    Ok(())
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
