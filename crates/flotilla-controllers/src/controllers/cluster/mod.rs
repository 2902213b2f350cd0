//! The cluster controller: the execution namespace and finalizer of every Cluster, NoSchedule taints following
//! its Ready condition, the `timeAdded` of NoExecute taints, and the orderly removal of an unjoined cluster
//! (execution namespace first, then waiting until no binding lists it).

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use flotilla_api::names::{events, finalizers, labels, namespaces};
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_client::api_error::{is_already_exists, is_not_found, kube_error_text};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, ResourceExt};
use tokio_util::sync::CancellationToken;

use self::build::{
    default_resource_models, describe_taints, desired_taints, normalise_resource_models,
    ready_status, stamp_no_execute_taints,
};
use crate::api::get_opt;
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::features::{Feature, FeatureGates};
use crate::member::Members;
use crate::options::Options;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::update::{self, Edit, Part};

/// Name of the controller (metrics, events `flotilla-cluster-controller`).
pub(crate) const NAME: &str = "cluster-controller";

/// How often an unjoining cluster is re-checked (Karmada: 10 s; shorter here, unjoin waits on it).
const CLEANUP_POLL: Duration = Duration::from_secs(2);

/// What the cluster controller needs.
pub(crate) struct Context {
    /// The control plane (Clusters, bindings, execution namespaces), its Events and reconciles.
    pub control: ControlPlane,
    /// Member clients, forgotten when their Cluster goes.
    pub members: Members,
    /// Feature gates: `CustomizedClusterResourceModeling` gives new Clusters Karmada's default models.
    pub feature_gates: FeatureGates,
}

impl Context {
    /// The cluster controller's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            members: shared.members.clone(),
            feature_gates: options.feature_gates.clone(),
        }
    }
}

struct ClusterController {
    ctx: Context,
    recorder: EventRecorder,
    clusters: Arc<Informer<Cluster>>,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
}

/// Runs the cluster controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(ClusterController {
        recorder: ctx.control.events.recorder(NAME),
        clusters: ctx.control.informers.typed(),
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        ctx,
    });
    let runner = Controller::new(NAME, &controller.clusters, &controller.ctx.control.runtime);
    let (trigger, members) = (runner.trigger(), controller.ctx.members.clone());
    controller.clusters.add_handler(move |change| match change {
        // A Cluster gone for good (its finalizer released): forget its client.
        Change::Deleted(cluster) => members.remove(&cluster.name_any()),
        _ => trigger.reconcile(change.object()),
    });
    runner
        .run(shutdown, controller, |controller, cluster| async move {
            controller.reconcile(&cluster.name_any()).await
        })
        .await;
}

impl ClusterController {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        let api: Api<Cluster> = Api::all(self.ctx.control.client.clone());
        let Some(cluster) = get_opt(api.clone(), name).await? else {
            self.ctx.members.remove(name);
            return Ok(Action::await_change());
        };
        if cluster.metadata.deletion_timestamp.is_some() {
            return self.remove(&api, cluster).await;
        }
        self.ensure_execution_space(&cluster).await?;
        let what = format!("Cluster {name}");
        let cluster_ref = reference(&cluster);
        let now = Timestamp::now();
        let taints = std::sync::Mutex::new(None);
        let slot = &taints;
        let default_models = self
            .ctx
            .feature_gates
            .enabled(Feature::CustomizedClusterResourceModeling);
        let written = update::update(
            &api,
            &what,
            name,
            Some(cluster),
            Part::Object,
            |mut c| async move {
                let before = c.clone();
                let desired = desired_taints(&c.spec.taints, ready_status(&c), now);
                if let Some(desired) = &desired {
                    c.spec.taints = desired.clone();
                }
                *slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = desired;
                if !c.finalizers().iter().any(|f| f == finalizers::CLUSTER) {
                    // First reconcile: the Cluster was just created. Karmada's API server gives a Cluster created
                    // without resource models the default set when CustomizedClusterResourceModeling is on.
                    if default_models && c.spec.resource_models.is_empty() {
                        c.spec.resource_models = default_resource_models();
                    }
                    c.finalizers_mut().push(finalizers::CLUSTER.to_owned());
                }
                normalise_resource_models(&mut c.spec.resource_models);
                stamp_no_execute_taints(&mut c.spec.taints, now);
                let changed = c != before;
                Ok(Edit::of(c, changed))
            },
        )
        .await;
        let taints = taints
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(taints) = &taints {
            match &written {
                Ok(written) if written.wrote() => self.recorder.normal(
                    &cluster_ref,
                    events::TAINT_CLUSTER_SUCCEED,
                    format!("Taint cluster succeed: {}.", describe_taints(taints)),
                ),
                Err(err) => {
                    // Karmada's note is the API error itself.
                    self.recorder.failure(
                        &cluster_ref,
                        events::TAINT_CLUSTER_FAILED,
                        err,
                        err.api_text(),
                    );
                }
                Ok(_) => {}
            }
        }
        written?;
        Ok(Action::await_change())
    }

    async fn ensure_execution_space(&self, cluster: &Cluster) -> Result<()> {
        let name = namespaces::execution_space(&cluster.name_any());
        let api: Api<Namespace> = Api::all(self.ctx.control.client.clone());
        if get_opt(api.clone(), &name).await?.is_some() {
            return Ok(());
        }
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(labels::SYSTEM.to_owned(), labels::SYSTEM_VALUE.to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        match api.create(&PostParams::default(), &namespace).await {
            Ok(_) => {
                self.recorder.normal(
                    &reference(cluster),
                    events::CREATE_EXECUTION_SPACE_SUCCEED,
                    format!(
                        "Created execution space({name}) for cluster({}).",
                        cluster.name_any()
                    ),
                );
                Ok(())
            }
            Err(err) if is_already_exists(&err) => Ok(()),
            Err(source) => {
                self.recorder.warning(
                    &reference(cluster),
                    events::CREATE_EXECUTION_SPACE_FAILED,
                    kube_error_text(&source),
                );
                Err(Error::kube("create", format!("Namespace {name}"), source))
            }
        }
    }

    /// Removes the execution finalizer from every Work in `space`, without member cleanup (Karmada's
    /// `deleteFinalizerForWorks`). Done at every pass, so Works written meanwhile are released too.
    async fn release_works(&self, space: &str) -> Result<()> {
        let api: Api<Work> = Api::namespaced(self.ctx.control.client.clone(), space);
        let works = api
            .list(&Default::default())
            .await
            .map_err(|source| Error::kube("list", format!("Works in {space}"), source))?;
        for work in works {
            if work.finalizers().iter().any(|f| f == finalizers::EXECUTION) {
                let what = format!("Work {space}/{}", work.name_any());
                tracing::info!(work = %what, "Pull cluster not ready: its Work is released without member cleanup");
                update::remove_finalizer(&api, &what, work, finalizers::EXECUTION).await?;
            }
        }
        Ok(())
    }

    /// An unjoined cluster: its execution namespace deleted and gone, then no binding targeting the cluster any
    /// more (the scheduler takes a deleting cluster out), then its finalizer released.
    async fn remove(&self, api: &Api<Cluster>, cluster: Cluster) -> Result<Action> {
        let name = cluster.name_any();
        if !cluster
            .finalizers()
            .iter()
            .any(|f| f == finalizers::CLUSTER)
        {
            return Ok(Action::await_change());
        }
        let space = namespaces::execution_space(&name);
        if cluster.spec.sync_mode == ClusterSyncMode::Pull && ready_status(&cluster) != Some("True")
        {
            // Nobody can clean a Pull member that is not ready (its agent is gone): as Karmada does, its Works are
            // released, so that the execution namespace and then the Cluster can go.
            self.release_works(&space).await?;
        }
        let namespaces_api: Api<Namespace> = Api::all(self.ctx.control.client.clone());
        if let Some(ns) = get_opt(namespaces_api.clone(), &space).await? {
            if ns.metadata.deletion_timestamp.is_none() {
                match namespaces_api.delete(&space, &Default::default()).await {
                    Ok(_) => self.recorder.normal(
                        &reference(&cluster),
                        events::REMOVE_EXECUTION_SPACE_SUCCEED,
                        format!("Removed execution space({space}) for cluster({name})."),
                    ),
                    Err(err) if is_not_found(&err) => {}
                    Err(source) => {
                        self.recorder.warning(
                            &reference(&cluster),
                            events::REMOVE_EXECUTION_SPACE_FAILED,
                            kube_error_text(&source),
                        );
                        return Err(Error::kube("delete", format!("Namespace {space}"), source));
                    }
                }
            }
            return Ok(Action::requeue(CLEANUP_POLL));
        }
        let targeted = self
            .rb
            .list()
            .iter()
            .any(|rb| rb.spec.clusters.iter().any(|c| c.name == name))
            || self
                .crb
                .list()
                .iter()
                .any(|crb| crb.spec.clusters.iter().any(|c| c.name == name));
        if targeted {
            return Ok(Action::requeue(CLEANUP_POLL));
        }
        update::remove_finalizer(
            api,
            &format!("Cluster {name}"),
            cluster,
            finalizers::CLUSTER,
        )
        .await?;
        self.ctx.members.remove(&name);
        Ok(Action::await_change())
    }
}
