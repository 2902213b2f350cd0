//! The ClusterTaintPolicy controller (gate `Failover`): keeps each Cluster's taints in
//! line with the ClusterTaintPolicies targeting it as its status conditions change. This is where NoExecute
//! taints come from; the taint manager evicts on them.

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::events;
use flotilla_api::policy::v1alpha1::ClusterTaintPolicy;
use flotilla_core::selector::cluster_matches;
use k8s_openapi::jiff::Timestamp;
use kube::{Api, ResourceExt};
use tokio_util::sync::CancellationToken;

use self::build::{policy_taints, taints_message};
use crate::error::Result;
use crate::events::{EventRecorder, reference};
use crate::runtime::{Action, Change, Controller, Informer, spec_changed};
use crate::shared::ControlPlane;
use crate::update::{self, Edit, Part};

/// Name of the controller (Karmada's `cluster-taint-policy-controller`).
pub(crate) const NAME: &str = "cluster-taint-policy-controller";

struct TaintPolicyController {
    ctx: ControlPlane,
    recorder: EventRecorder,
    clusters: Arc<Informer<Cluster>>,
    policies: Arc<Informer<ClusterTaintPolicy>>,
}

/// Runs the controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: ControlPlane, shutdown: CancellationToken) {
    let controller = Arc::new(TaintPolicyController {
        recorder: ctx.events.recorder(NAME),
        clusters: ctx.informers.typed(),
        policies: ctx.informers.typed(),
        ctx,
    });
    let runner = Controller::new(NAME, &controller.clusters, &controller.ctx.runtime);
    let trigger = runner.trigger();
    // A Cluster is looked at when it appears and whenever its conditions change.
    controller.clusters.add_handler(move |change| match change {
        Change::Added(cluster) => trigger.reconcile(cluster),
        Change::Updated { old, new } => {
            let conditions = |c: &Cluster| c.status.as_ref().map(|s| s.conditions.clone());
            if conditions(old) != conditions(new) {
                trigger.reconcile(new);
            }
        }
        Change::Deleted(_) => {}
    });
    // A new or changed policy: every cluster it targets.
    let (trigger, clusters) = (runner.trigger(), controller.clusters.clone());
    controller.policies.add_handler(move |change| {
        if !spec_changed(&change) || matches!(change, Change::Deleted(_)) {
            return;
        }
        let policy = change.object();
        for cluster in clusters.list() {
            if policy
                .spec
                .target_clusters
                .as_ref()
                .is_none_or(|target| cluster_matches(&cluster, target))
            {
                trigger.reconcile(&cluster);
            }
        }
    });
    runner
        .run(shutdown, controller, |controller, cluster| async move {
            controller.reconcile(&cluster.name_any()).await
        })
        .await;
}

impl TaintPolicyController {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        let Some(cached) = self.clusters.get("", name) else {
            return Ok(Action::await_change());
        };
        let api: Api<Cluster> = Api::all(self.ctx.client.clone());
        let policies = self.policies.list();
        let policies: Vec<&ClusterTaintPolicy> = policies.iter().map(AsRef::as_ref).collect();
        let now = Timestamp::now();
        let cluster_ref = reference(cached.as_ref());
        let written = update::update(
            &api,
            &format!("Cluster {name}"),
            name,
            Some((*cached).clone()),
            Part::Object,
            |mut cluster| {
                let taints = policy_taints(&cluster, &policies, now);
                let changed = taints != cluster.spec.taints;
                cluster.spec.taints = taints;
                async move { Ok(Edit::of(cluster, changed)) }
            },
        )
        .await;
        match &written {
            Ok(update::Written::Updated(cluster)) => self.recorder.normal(
                &cluster_ref,
                events::TAINT_CLUSTER_SUCCEED,
                format!(
                    "Update Cluster({name}) with taints({}) succeed",
                    taints_message(&cluster.spec.taints)
                ),
            ),
            Err(err) => {
                self.recorder.failure(
                    &cluster_ref,
                    events::TAINT_CLUSTER_FAILED,
                    err,
                    err.api_text(),
                );
            }
            Ok(_) => {}
        }
        written?;
        Ok(Action::await_change())
    }
}
