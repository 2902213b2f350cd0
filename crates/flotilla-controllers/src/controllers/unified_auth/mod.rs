//! The unified-auth controller (Karmada's `pkg/controllers/unifiedauth`, `--controllers` name `unifiedAuth`, on by
//! default): makes the aggregated API server's impersonation legal in every member. For each Cluster with
//! `spec.impersonatorSecretRef` it collects the control plane's subjects that may proxy to the cluster (the
//! ClusterRoleBindings of ClusterRoles granting `cluster.karmada.io` `clusters/proxy` for it, or karmada-search's
//! `proxying/proxy`; [`rbac`]) and writes two Works to the cluster's execution namespace: ClusterRole
//! `karmada-impersonator`, which may impersonate exactly those users, ServiceAccounts and groups, and
//! ClusterRoleBinding `karmada-impersonator`, which gives it to the member's impersonator ServiceAccount.
//!
//! Triggers, as Karmada's: a Cluster created (not updated), and any ClusterRole or ClusterRoleBinding created,
//! updated (old and new object) or deleted, for the clusters its role names. The Works have the Cluster as
//! controller owner, so an unjoined cluster's Works go with it; a deleting Cluster and one without
//! `impersonatorSecretRef` get nothing.

pub(crate) mod rbac;

use std::sync::Arc;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{events, finalizers};
use flotilla_core::names::work_name;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::{Resource, ResourceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::runtime::{Action, Change, Controller, Informer, Trigger};
use crate::shared::ControlPlane;
use crate::works::{create_or_update_work, owned_work};

/// Name of the controller (metrics, events `flotilla-unified-auth-controller`).
pub(crate) const NAME: &str = "unified-auth-controller";

struct UnifiedAuth {
    ctx: ControlPlane,
    recorder: EventRecorder,
    clusters: Arc<Informer<Cluster>>,
    roles: Arc<Informer<ClusterRole>>,
    bindings: Arc<Informer<ClusterRoleBinding>>,
}

/// Runs the unified-auth controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: ControlPlane, shutdown: CancellationToken) {
    let controller = Arc::new(UnifiedAuth {
        recorder: ctx.events.recorder(NAME),
        clusters: ctx.informers.typed(),
        roles: ctx.informers.typed(),
        bindings: ctx.informers.typed(),
        ctx,
    });
    // A reconcile reads every role and binding: both caches must be whole first.
    tokio::select! {
        () = async { controller.roles.wait_synced().await; controller.bindings.wait_synced().await } => {}
        () = shutdown.cancelled() => return,
    }
    let runner = Controller::new(NAME, &controller.clusters, &controller.ctx.runtime);
    runner.reconcile_changes(&controller.clusters, |change| {
        matches!(change, Change::Added(_))
    });
    let (trigger, this) = (runner.trigger(), Arc::downgrade(&controller));
    controller.roles.add_handler(move |change| {
        let Some(this) = this.upgrade() else { return };
        for role in changed(change) {
            this.sync_clusters_of(role, &trigger);
        }
    });
    let (trigger, this) = (runner.trigger(), Arc::downgrade(&controller));
    controller.bindings.add_handler(move |change| {
        let Some(this) = this.upgrade() else { return };
        for binding in changed(change) {
            if binding.role_ref.kind != "ClusterRole" {
                continue;
            }
            // Karmada looks the role up when the binding changes; a binding to a missing role syncs nothing.
            if let Some(role) = this.roles.get("", &binding.role_ref.name) {
                this.sync_clusters_of(&role, &trigger);
            }
        }
    });
    runner
        .run(shutdown, controller, |controller, cluster| async move {
            controller.reconcile(&cluster.name_any()).await
        })
        .await;
}

/// The objects of a change that matter: the object itself, and for an update the object before it too (a rule
/// or subject removed must reach the clusters it used to cover).
fn changed<'a, K>(change: Change<'a, K>) -> Vec<&'a K> {
    match change {
        Change::Added(object) | Change::Deleted(object) => vec![&**object],
        Change::Updated { old, new } => vec![&**old, &**new],
    }
}

impl UnifiedAuth {
    fn sync_clusters_of(&self, role: &ClusterRole, trigger: &Trigger<Cluster>) {
        let all: Vec<String> = self.clusters.list().iter().map(|c| c.name_any()).collect();
        for cluster in rbac::clusters_affected_by(role, &all) {
            trigger.reconcile_ref(trigger.object_ref("", &cluster));
        }
    }

    async fn reconcile(&self, name: &str) -> Result<Action> {
        let Some(cluster) = self.clusters.get("", name) else {
            return Ok(Action::await_change());
        };
        // The Works are owned by the Cluster: the garbage collector removes them with it.
        if cluster.metadata.deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let Some(secret_ref) = &cluster.spec.impersonator_secret_ref else {
            tracing::info!(
                cluster = name,
                "Unified auth is disabled: no impersonator secret"
            );
            return Ok(Action::await_change());
        };
        let cluster_ref = reference(cluster.as_ref());
        match self.sync(&cluster, &secret_ref.namespace).await {
            Ok(()) => {
                self.recorder.normal(
                    &cluster_ref,
                    events::SYNC_IMPERSONATION_CONFIG_SUCCEED,
                    "Sync impersonation config succeed.",
                );
                Ok(Action::await_change())
            }
            Err(err) => {
                self.recorder.failure(
                    &cluster_ref,
                    events::SYNC_IMPERSONATION_CONFIG_FAILED,
                    &err,
                    err.api_text(),
                );
                Err(err)
            }
        }
    }

    /// Writes the ClusterRole Work, then the ClusterRoleBinding Work (Karmada's order: the binding never
    /// names a role the member lacks).
    async fn sync(&self, cluster: &Cluster, impersonator_namespace: &str) -> Result<()> {
        let name = cluster.name_any();
        let roles = self.roles.list();
        let bindings = self.bindings.list();
        let subjects = rbac::subjects_for(
            &name,
            roles.iter().map(Arc::as_ref),
            bindings.iter().map(Arc::as_ref),
        );
        let rules = rbac::impersonation_rules(&subjects);
        self.write(cluster, rbac::impersonator_cluster_role(&rules))
            .await?;
        self.write(
            cluster,
            rbac::impersonator_cluster_role_binding(impersonator_namespace),
        )
        .await
    }

    async fn write(&self, cluster: &Cluster, manifest: Value) -> Result<()> {
        let name = cluster.name_any();
        let owner = cluster
            .controller_owner_ref(&())
            .ok_or_else(|| Error::invalid(format!("Cluster {name}"), "metadata.uid is not set"))?;
        let kind = manifest["kind"].as_str().unwrap_or_default().to_owned();
        let work = work_name(&kind, rbac::IMPERSONATOR, "");
        let desired = owned_work(&name, work, manifest, "", owner, Default::default());
        create_or_update_work(&self.ctx.client, &desired, finalizers::EXECUTION, false).await?;
        Ok(())
    }
}
