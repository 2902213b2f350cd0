//! Karmada's HPA scale-target marker (`hpaScaleTargetMarker`, off unless `--controllers` names it, as in
//! Karmada): the workload an HPA of the control plane scales gets `resourcetemplate.karmada.io/retain-replicas:
//! "true"` once the HPA itself is propagated (it carries a policy's permanent-id label), and loses it when the HPA
//! goes or turns to another target. The label makes Retain keep each member's replicas, which the members' own
//! HPAs own, and lets the replicas syncer write their sum back into the template.
//!
//! Marking is level-triggered on the HPA: every create or update of a propagated HPA checks its target. Taking
//! the label off needs the HPA's last target, which only the deletion or update event knows; those targets go
//! through a queue of their own, and one is left labelled while another HPA of its namespace still targets it.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::names::labels::{
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID, PROPAGATION_POLICY_PERMANENT_ID, RETAIN_REPLICAS,
};
use flotilla_client::api_error::is_not_found;
use futures::StreamExt;
use futures::channel::mpsc;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::resources::Resources;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::Shared;

/// Name of the controller (metrics), as Karmada names it.
pub(crate) const NAME: &str = "hpa-scale-target-marker";

/// How soon a target whose label could not be taken off is tried again.
const UNMARK_RETRY: Duration = Duration::from_secs(1);

/// The workload an HPA scales.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    namespace: String,
    api_version: String,
    kind: String,
    name: String,
}

impl Target {
    fn of(hpa: &HorizontalPodAutoscaler) -> Option<Target> {
        let target = &hpa.spec.scale_target_ref;
        Some(Target {
            namespace: hpa.namespace()?,
            api_version: target.api_version.clone().unwrap_or_default(),
            kind: target.kind.clone(),
            name: target.name.clone(),
        })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// Whether a policy propagates the HPA (Karmada's `hasBeenPropagated`).
pub(crate) fn propagated(hpa: &HorizontalPodAutoscaler) -> bool {
    hpa.labels().contains_key(PROPAGATION_POLICY_PERMANENT_ID)
        || hpa
            .labels()
            .contains_key(CLUSTER_PROPAGATION_POLICY_PERMANENT_ID)
}

/// The target an HPA change leaves behind: the old one of a deleted HPA or of one turned to another target.
pub(crate) fn left_target(change: &Change<'_, HorizontalPodAutoscaler>) -> Option<Target> {
    match change {
        Change::Deleted(hpa) => Target::of(hpa),
        Change::Updated { old, new } => {
            let before = Target::of(old)?;
            (Target::of(new).as_ref() != Some(&before)).then_some(before)
        }
        Change::Added(_) => None,
    }
}

struct Marker {
    resources: Resources,
    hpas: Arc<Informer<HorizontalPodAutoscaler>>,
}

/// Runs the marker until `shutdown` is cancelled.
pub(crate) async fn run(shared: Shared, shutdown: CancellationToken) {
    let marker = Arc::new(Marker {
        resources: shared.resources.clone(),
        hpas: shared.control.informers.typed(),
    });
    let (left, mut unmark) = mpsc::unbounded::<Target>();
    marker.hpas.add_handler({
        let left = left.clone();
        move |change| {
            if let Some(target) = left_target(&change) {
                // Fails only once the marker stopped.
                let _ = left.unbounded_send(target);
            }
        }
    });
    let runner = Controller::new(NAME, &marker.hpas, &shared.control.runtime);
    runner.reconcile_changes(&marker.hpas, |change| propagated(change.object()));
    let unmarking = {
        let marker = marker.clone();
        let shutdown = shutdown.clone();
        async move {
            loop {
                let target = tokio::select! {
                    next = unmark.next() => match next {
                        Some(target) => target,
                        None => return,
                    },
                    () = shutdown.cancelled() => return,
                };
                if let Err(err) = marker.unmark(&target).await {
                    tracing::warn!(
                        target = %target,
                        error = %err,
                        "taking the retain-replicas label off failed; retrying"
                    );
                    let left = left.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(UNMARK_RETRY).await;
                        let _ = left.unbounded_send(target);
                    });
                }
            }
        }
    };
    tokio::join!(
        runner.run(shutdown, marker, |marker, hpa| async move {
            marker.mark(&hpa).await
        }),
        unmarking
    );
}

impl Marker {
    /// The target's current labels and an API to patch it with, or `None` when it does not exist (or its kind
    /// is not served: nothing to label).
    async fn target(
        &self,
        target: &Target,
    ) -> Result<Option<(Option<String>, kube::Api<kube::api::DynamicObject>)>> {
        let Some(served) = self
            .resources
            .get_by_api_version(&target.api_version, &target.kind)
        else {
            return Ok(None);
        };
        let api = self.resources.api(&served, &target.namespace);
        match api.get_opt(&target.name).await {
            Ok(Some(object)) => Ok(Some((object.labels().get(RETAIN_REPLICAS).cloned(), api))),
            Ok(None) => Ok(None),
            Err(source) => Err(Error::kube("get", target.to_string(), source)),
        }
    }

    async fn patch_label(
        &self,
        api: &kube::Api<kube::api::DynamicObject>,
        target: &Target,
        value: Value,
    ) -> Result<()> {
        let patch = json!({"metadata": {"labels": {RETAIN_REPLICAS: value}}});
        match api
            .patch(&target.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(()),
            // Deleted meanwhile: nothing left to label.
            Err(source) if is_not_found(&source) => Ok(()),
            Err(source) => Err(Error::kube("patch", target.to_string(), source)),
        }
    }

    async fn mark(&self, hpa: &HorizontalPodAutoscaler) -> Result<Action> {
        // Read again: the HPA may have changed since the request.
        let current = self
            .hpas
            .get(&hpa.namespace().unwrap_or_default(), &hpa.name_any());
        let Some(hpa) = current.filter(|h| propagated(h)) else {
            return Ok(Action::await_change());
        };
        let Some(target) = Target::of(&hpa) else {
            return Ok(Action::await_change());
        };
        // A target created later is not marked until the HPA changes, as in Karmada.
        let Some((label, api)) = self.target(&target).await? else {
            return Ok(Action::await_change());
        };
        if label.as_deref() != Some("true") {
            self.patch_label(&api, &target, json!("true")).await?;
            tracing::info!(
                target = %target,
                hpa = %hpa.name_any(),
                "marked the HPA's target to retain member replicas"
            );
        }
        Ok(Action::await_change())
    }

    async fn unmark(&self, target: &Target) -> Result<()> {
        let still_scaled = self
            .hpas
            .list_namespace(&target.namespace)
            .iter()
            .any(|hpa| Target::of(hpa).as_ref() == Some(target));
        if still_scaled {
            return Ok(());
        }
        let Some((label, api)) = self.target(target).await? else {
            return Ok(());
        };
        if label.is_some() {
            self.patch_label(&api, target, Value::Null).await?;
            tracing::info!(target = %target, "took the retain-replicas label off the HPA's former target");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpa(target: &str, labels: &[(&str, &str)]) -> Arc<HorizontalPodAutoscaler> {
        let labels: serde_json::Map<String, Value> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": "h", "namespace": "ns", "labels": labels},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                    "maxReplicas": 5
                }
            }))
            .expect("an HPA"),
        )
    }

    #[test]
    fn only_propagated_hpas_mark() {
        assert!(!propagated(&hpa("d", &[])));
        assert!(propagated(&hpa(
            "d",
            &[(PROPAGATION_POLICY_PERMANENT_ID, "x")]
        )));
        assert!(propagated(&hpa(
            "d",
            &[(CLUSTER_PROPAGATION_POLICY_PERMANENT_ID, "x")]
        )));
    }

    #[test]
    fn a_deleted_or_retargeted_hpa_leaves_its_old_target() {
        let (a, b) = (hpa("a", &[]), hpa("b", &[]));
        let left = left_target(&Change::Deleted(&a)).expect("deleted");
        assert_eq!(left.to_string(), "Deployment ns/a");
        let left = left_target(&Change::Updated { old: &a, new: &b }).expect("retargeted");
        assert_eq!(left.name, "a");
        let same = hpa("a", &[(PROPAGATION_POLICY_PERMANENT_ID, "x")]);
        assert!(
            left_target(&Change::Updated {
                old: &a,
                new: &same
            })
            .is_none()
        );
        assert!(left_target(&Change::Added(&a)).is_none());
    }
}
