//! The cluster status controller: for every Push cluster with credentials, every
//! `--cluster-status-update-frequency`, probe the member's health, keep the Ready condition (with flip
//! thresholds), and while it is ready collect its version, API enablements, nodes and resources.

pub(crate) mod build;
pub(crate) mod lease;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterStatus, ClusterSyncMode};
use flotilla_api::names::{conditions as names, finalizers};
use flotilla_core::conditions::{find, new_condition, set_condition};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{ListParams, PostParams};
use kube::client::Body;
use kube::{Api, Client, ResourceExt};
use tokio_util::sync::CancellationToken;

use self::build::{
    Probe, Thresholds, api_enablements, api_enablements_condition, node_summary, ready_condition,
    resource_summary,
};
use crate::api::get_opt;
use crate::discovery::discover;
use crate::error::{Error, Result};
use crate::member::Members;
use crate::options::Options;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};

/// Name of the controller (metrics).
pub(crate) const NAME: &str = "cluster-status-controller";

/// What the cluster status controller needs.
pub(crate) struct Context {
    /// The control plane (Clusters and their status; Leases of Pull clusters) and its reconciles.
    pub control: ControlPlane,
    /// Member clients, which the status is collected through.
    pub members: Members,
    /// How often cluster status is collected (`--cluster-status-update-frequency`).
    pub cluster_status_update_frequency: Duration,
    /// Timeout of the health probe of a member.
    pub member_request_timeout: Duration,
    /// How long a cluster must look healthy before Ready turns True again (`--cluster-success-threshold`).
    pub cluster_success_threshold: Duration,
    /// How long a cluster must look unhealthy before Ready turns False (`--cluster-failure-threshold`).
    pub cluster_failure_threshold: Duration,
    /// How long a Pull cluster's Lease lasts (agent `--cluster-lease-duration`).
    pub cluster_lease_duration: Duration,
    /// The fraction of the Lease duration after which it is renewed (`--cluster-lease-renew-interval-fraction`).
    pub cluster_lease_renew_interval_fraction: f64,
}

impl Context {
    /// The cluster status controller's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            members: shared.members.clone(),
            cluster_status_update_frequency: options.cluster_status_update_frequency,
            member_request_timeout: options.member_request_timeout,
            cluster_success_threshold: options.cluster_success_threshold,
            cluster_failure_threshold: options.cluster_failure_threshold,
            cluster_lease_duration: options.cluster_lease_duration,
            cluster_lease_renew_interval_fraction: options.cluster_lease_renew_interval_fraction,
        }
    }
}

struct ClusterStatusController {
    ctx: Context,
    clusters: Arc<Informer<Cluster>>,
    thresholds: Thresholds,
    leases: lease::Leases,
    shutdown: CancellationToken,
}

/// Runs the cluster status controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(ClusterStatusController {
        clusters: ctx.control.informers.typed(),
        thresholds: Thresholds::default(),
        leases: lease::Leases::default(),
        shutdown: shutdown.clone(),
        ctx,
    });
    let runner = Controller::new(NAME, &controller.clusters, &controller.ctx.control.runtime);
    let (trigger, this) = (runner.trigger(), Arc::downgrade(&controller));
    controller.clusters.add_handler(move |change| match change {
        Change::Added(cluster) => trigger.reconcile(cluster),
        Change::Updated { old, new } => {
            if old.metadata.generation != new.metadata.generation
                || old.finalizers() != new.finalizers()
            {
                trigger.reconcile(new);
            }
        }
        Change::Deleted(cluster) => {
            if let Some(this) = this.upgrade() {
                this.thresholds.forget(&cluster.name_any());
            }
        }
    });
    runner
        .run(shutdown, controller, |controller, cluster| async move {
            controller.reconcile(&cluster.name_any()).await
        })
        .await;
}

/// GET `/readyz`, falling back to `/healthz` when the server has no `/readyz`.
pub(crate) async fn probe(client: &Client, timeout: Duration) -> Probe {
    async fn get(client: &Client, path: &str) -> Option<u16> {
        let request = http::Request::get(path).body(Body::from(Vec::new())).ok()?;
        client
            .send(request)
            .await
            .ok()
            .map(|response| response.status().as_u16())
    }
    let attempt = async {
        match get(client, "/readyz").await {
            None => Probe::Offline,
            Some(404) => match get(client, "/healthz").await {
                None => Probe::Offline,
                Some(200) => Probe::Healthy,
                Some(_) => Probe::Unhealthy,
            },
            Some(200) => Probe::Healthy,
            Some(_) => Probe::Unhealthy,
        }
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or(Probe::Offline)
}

impl ClusterStatusController {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        let frequency = self.ctx.cluster_status_update_frequency;
        let cluster = match self.clusters.get("", name) {
            Some(cluster) => cluster.as_ref().clone(),
            None => {
                match get_opt(Api::<Cluster>::all(self.ctx.control.client.clone()), name).await? {
                    Some(cluster) => cluster,
                    None => {
                        self.thresholds.forget(name);
                        return Ok(Action::await_change());
                    }
                }
            }
        };
        // The control plane collects Push clusters with credentials, an agent its own (Pull) cluster.
        if cluster.metadata.deletion_timestamp.is_some()
            || !self.ctx.members.serves(&cluster)
            || (cluster.spec.sync_mode == ClusterSyncMode::Push
                && cluster.spec.secret_ref.is_none())
        {
            return Ok(Action::await_change());
        }
        if !cluster
            .finalizers()
            .iter()
            .any(|f| f == finalizers::CLUSTER)
        {
            // The cluster controller adds it; that change brings the cluster back here.
            return Ok(Action::await_change());
        }
        let current = cluster.status.clone().unwrap_or_default();
        let mut status = current.clone();
        let stored_ready = find(&current.conditions, names::CLUSTER_READY).cloned();
        let member = match self.ctx.members.refresh(&cluster).await {
            Ok(member) => member,
            Err(err) => {
                let observed = new_condition(
                    names::CLUSTER_READY,
                    "False",
                    names::REASON_STATUS_COLLECTION_FAILED,
                    &format!("failed to create a ClusterClient: {}", err.message()),
                );
                let ready = self.adjust(name, observed, stored_ready.as_ref());
                set_condition(&mut status.conditions, ready);
                self.write(&cluster, &current, &status).await?;
                return Ok(Action::requeue(frequency));
            }
        };
        let probed = probe(&member.client, self.ctx.member_request_timeout).await;
        let ready = self.adjust(name, ready_condition(probed), stored_ready.as_ref());
        let ready_true = ready.status == "True";
        set_condition(&mut status.conditions, ready);
        if probed == Probe::Healthy && ready_true {
            if cluster.spec.sync_mode == ClusterSyncMode::Pull {
                // The agent's heartbeat, from the first time its member is seen healthy and Ready: the control
                // plane's health monitor turns Ready Unknown when it lapses.
                self.leases.ensure_started(
                    &self.ctx.control.client,
                    &cluster,
                    self.ctx.cluster_lease_duration,
                    self.ctx.cluster_lease_renew_interval_fraction,
                    &self.shutdown,
                );
            }
            self.collect(&member.client, &cluster, &mut status).await;
        }
        self.write(&cluster, &current, &status).await?;
        Ok(Action::requeue(frequency))
    }

    fn adjust(&self, name: &str, observed: Condition, stored: Option<&Condition>) -> Condition {
        self.thresholds.adjust(
            name,
            observed,
            stored,
            tokio::time::Instant::now(),
            self.ctx.cluster_success_threshold,
            self.ctx.cluster_failure_threshold,
        )
    }

    /// Version, API enablements, nodes and resources; a part that cannot be read keeps its previous value.
    async fn collect(&self, client: &Client, cluster: &Cluster, status: &mut ClusterStatus) {
        match client.apiserver_version().await {
            Ok(info) => status.kubernetes_version = info.git_version,
            Err(err) => {
                tracing::debug!(cluster = %cluster.name_any(), error = %err, "failed to read the member version")
            }
        }
        match discover(client).await {
            Ok(found) => {
                let enablements = api_enablements(&found);
                let condition = api_enablements_condition(&enablements, !found.failed.is_empty());
                status.api_enablements = enablements;
                set_condition(&mut status.conditions, condition);
            }
            Err(err) => {
                tracing::debug!(cluster = %cluster.name_any(), error = %err, "member discovery failed")
            }
        }
        let nodes = Api::<Node>::all(client.clone())
            .list(&ListParams::default())
            .await;
        let pods = Api::<Pod>::all(client.clone())
            .list(&ListParams::default())
            .await;
        match (nodes, pods) {
            (Ok(nodes), Ok(pods)) => {
                status.node_summary = Some(node_summary(&nodes.items));
                status.resource_summary = Some(resource_summary(
                    &nodes.items,
                    &pods.items,
                    &cluster.spec.resource_models,
                ));
            }
            (Err(err), _) | (_, Err(err)) => {
                tracing::debug!(cluster = %cluster.name_any(), error = %err, "failed to list member nodes or pods");
            }
        }
    }

    async fn write(
        &self,
        cluster: &Cluster,
        current: &ClusterStatus,
        status: &ClusterStatus,
    ) -> Result<()> {
        if current == status {
            return Ok(());
        }
        let name = cluster.name_any();
        let api: Api<Cluster> = Api::all(self.ctx.control.client.clone());
        // An update of the status at the resourceVersion it was read at, not a patch: Karmada's agent may only
        // update `clusters/status` of its own Cluster. A conflict is retried with the object read again.
        let mut updated = cluster.clone();
        updated.status = Some(status.clone());
        api.replace_status(&name, &PostParams::default(), &updated)
            .await
            .map_err(|source| Error::kube("update status of", format!("Cluster {name}"), source))?;
        Ok(())
    }
}
