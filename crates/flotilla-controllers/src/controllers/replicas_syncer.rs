//! Karmada's Deployment replicas syncer (`deploymentReplicasSyncer`, off unless `--controllers` names it, as in
//! Karmada): a Deployment template labelled `resourcetemplate.karmada.io/retain-replicas: "true"` whose members
//! scale their copies themselves (an HPA in each member; the native Retain keeps their replicas) gets the
//! members' total back in its `spec.replicas`, once that total has been collected into its status.
//!
//! Only Divided bindings are synced, as in Karmada: a Duplicated template's replicas are each member's, so their
//! sum is no value for the template. The syncer writes only after the template's own last change went the whole
//! way (binding replicas, scheduler, every member's status collected, the template status summed), so a user's
//! scale is never undone by a status that predates it.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::names::labels::RETAIN_REPLICAS;
use flotilla_api::policy::v1alpha1::ReplicaSchedulingType;
use flotilla_api::work::v1alpha2::ResourceBinding;
use flotilla_core::names::binding_name;
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::ControlPlane;
use crate::update::{Edit, Part, update};

/// Name of the controller (metrics), as Karmada names it.
pub(crate) const NAME: &str = "deployment-replicas-syncer";

/// How soon a template whose status is not collected yet is looked at again (Karmada: 1 s).
const WAIT_FOR_STATUS: Duration = Duration::from_secs(1);

/// What the syncer does with one template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing to sync: not Divided, or spec and status already agree.
    Nothing,
    /// The template's last change has not been collected into its status yet; look again later.
    Wait,
    /// Set `spec.replicas` to this.
    Set(i32),
}

fn retains_replicas(deployment: &Deployment) -> bool {
    deployment
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(RETAIN_REPLICAS))
        .is_some_and(|v| v == "true")
}

fn status_replicas(deployment: &Deployment) -> i32 {
    deployment
        .status
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(0)
}

fn spec_replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.as_ref().and_then(|s| s.replicas)
}

/// Whether a template change is one the syncer looks at (Karmada's update predicate): labelled, and newly
/// labelled or with `spec.replicas` or `status.replicas` changed. Creations and deletions are not.
fn relevant(change: &Change<'_, Deployment>) -> bool {
    let Change::Updated { old, new } = change else {
        return false;
    };
    if !retains_replicas(new) {
        return false;
    }
    if !retains_replicas(old) {
        return true;
    }
    spec_replicas(old) != spec_replicas(new) || status_replicas(old) != status_replicas(new)
}

/// The step for `deployment` given its binding (Karmada's reconcile and `isDeploymentStatusCollected`).
pub(crate) fn step(deployment: &Deployment, binding: &ResourceBinding) -> Step {
    let divided = binding
        .spec
        .placement
        .as_ref()
        .and_then(|p| p.replica_scheduling.as_ref())
        .is_some_and(|s| s.replica_scheduling_type == ReplicaSchedulingType::Divided);
    if !divided {
        return Step::Nothing;
    }
    let status = status_replicas(deployment);
    let Some(spec) = spec_replicas(deployment) else {
        // The API server defaults it; a template without it has not been through one.
        return Step::Wait;
    };
    if spec == status {
        return Step::Nothing;
    }
    // The template's replicas reached the binding and the scheduler placed them.
    let binding_status = binding.status.clone().unwrap_or_default();
    if binding.spec.replicas != spec
        || binding.metadata.generation.unwrap_or_default()
            != binding_status.scheduler_observed_generation
    {
        return Step::Wait;
    }
    // Every member reported a status with replicas (an HPA keeps at least one).
    if binding_status.aggregated_status.len() != binding.spec.clusters.len() {
        return Step::Wait;
    }
    let mut collected = 0i64;
    for item in &binding_status.aggregated_status {
        let replicas = item
            .status
            .as_ref()
            .and_then(|s| s.get("replicas"))
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        if replicas <= 0 {
            return Step::Wait;
        }
        collected += replicas;
    }
    // And that total reached the template's status.
    if i64::from(status) != collected {
        return Step::Wait;
    }
    Step::Set(status)
}

struct ReplicasSyncer {
    ctx: ControlPlane,
    deployments: Arc<Informer<Deployment>>,
    bindings: Arc<Informer<ResourceBinding>>,
}

/// Runs the syncer until `shutdown` is cancelled.
pub(crate) async fn run(ctx: ControlPlane, shutdown: CancellationToken) {
    let syncer = Arc::new(ReplicasSyncer {
        deployments: ctx.informers.typed(),
        bindings: ctx.informers.typed(),
        ctx,
    });
    tokio::select! {
        () = syncer.bindings.wait_synced() => {}
        () = shutdown.cancelled() => return,
    }
    let runner = Controller::new(NAME, &syncer.deployments, &syncer.ctx.runtime);
    runner.reconcile_changes(&syncer.deployments, relevant);
    runner
        .run(shutdown, syncer, |syncer, deployment| async move {
            syncer.reconcile(&deployment).await
        })
        .await;
}

impl ReplicasSyncer {
    async fn reconcile(&self, deployment: &Deployment) -> Result<Action> {
        let namespace = deployment.metadata.namespace.as_deref().unwrap_or_default();
        let name = deployment.metadata.name.as_deref().unwrap_or_default();
        let Some(binding) = self
            .bindings
            .get(namespace, &binding_name("Deployment", name))
        else {
            return Ok(Action::await_change());
        };
        let Some(current) = self.deployments.get(namespace, name) else {
            return Ok(Action::await_change());
        };
        match step(&current, &binding) {
            Step::Nothing => Ok(Action::await_change()),
            Step::Wait => Ok(Action::requeue(WAIT_FOR_STATUS)),
            Step::Set(replicas) => {
                let api: Api<Deployment> = Api::namespaced(self.ctx.client.clone(), namespace);
                let what = format!("Deployment {namespace}/{name}");
                let judged = spec_replicas(&current);
                let written = update(
                    &api,
                    &what,
                    name,
                    Some((*current).clone()),
                    Part::Object,
                    |mut d| async move {
                        // Written only while the object read is still the one judged; otherwise its change
                        // brings it back here.
                        let same = spec_replicas(&d) == judged && status_replicas(&d) == replicas;
                        if same && let Some(spec) = d.spec.as_mut() {
                            spec.replicas = Some(replicas);
                        }
                        Ok(Edit::of(d, same))
                    },
                )
                .await?;
                if written.wrote() {
                    tracing::info!(deployment = %what, replicas, "synced replicas from the members");
                }
                Ok(Action::await_change())
            }
        }
    }
}

#[cfg(test)]
#[path = "replicas_syncer_tests.rs"]
mod tests;
