//! The work status controller (controllers spec §7.1): member object changes → InterpretStatus and
//! InterpretHealth → the owning Work's `status.manifestStatuses`.
//!
//! Member informers are started by the execution controller for what it applies, and here for every applied
//! Work (so suspended Works keep their status current after a restart); this controller's hook sees every one.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::{annotations, conditions as names, events};
use flotilla_api::work::v1alpha1::{ManifestStatus, ResourceIdentifier, Work};
use flotilla_api::work::v1alpha2::ResourceHealth;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::conditions::{cluster_ready, is_true};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::interpreter::{enabled, interpret_health, reflect_status};
use crate::names::cluster_of_execution_namespace;
use crate::objects;
use crate::runtime::{Action, Change, Informer, Queue};
use crate::templates::with_type;

/// Name of the controller (metrics, events `flotilla-work-status-controller`).
pub const NAME: &str = "work-status-controller";

/// How long changes of one member object are gathered before its status is reflected.
const COALESCE: Duration = Duration::from_millis(300);

/// One member object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemberObjectKey {
    /// The member cluster.
    pub cluster: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl std::fmt::Display for MemberObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {}/{} in {}",
            self.api_version, self.kind, self.namespace, self.name, self.cluster
        )
    }
}

struct WorkStatusController {
    ctx: Context,
    recorder: EventRecorder,
    works: Arc<Informer<Work>>,
    clusters: Arc<Informer<Cluster>>,
}

/// Runs the work status controller until `shutdown` is cancelled.
pub async fn run(ctx: Context, shutdown: CancellationToken) {
    let queue: Arc<Queue<MemberObjectKey>> = Queue::new(ctx.options.backoff);
    let controller = Arc::new(WorkStatusController {
        recorder: ctx.recorder(NAME),
        works: ctx.informers.typed(),
        clusters: ctx.informers.typed(),
        ctx,
    });
    let weak = Arc::downgrade(&queue);
    controller
        .ctx
        .members
        .add_informer_hook(Arc::new(move |cluster, served, informer| {
            let (queue, cluster) = (weak.clone(), cluster.to_owned());
            let (api_version, kind) = (
                served.resource.api_version.clone(),
                served.resource.kind.clone(),
            );
            informer.add_handler(move |change| {
                let Some(queue) = queue.upgrade() else { return };
                if let Change::Updated { old, new } = change
                    && old.metadata.resource_version == new.metadata.resource_version
                {
                    return;
                }
                let obj = change.object();
                if !obj.annotations().contains_key(annotations::WORK_NAMESPACE) {
                    return;
                }
                // A new member object usually gets its status from the member's controllers moments
                // later: reflecting once after both saves a Work status write per object.
                queue.add_coalesced(
                    MemberObjectKey {
                        cluster: cluster.clone(),
                        api_version: api_version.clone(),
                        kind: kind.clone(),
                        namespace: obj.namespace().unwrap_or_default(),
                        name: obj.name_any(),
                    },
                    COALESCE,
                );
            });
        }));
    let this = Arc::downgrade(&controller);
    controller.works.add_handler(move |change| {
        let applied = |w: &Work| {
            w.status
                .as_ref()
                .is_some_and(|s| is_true(&s.conditions, names::WORK_APPLIED))
        };
        let work = match change {
            Change::Added(work) => work,
            // Only when it becomes applied: later status changes need nothing new.
            Change::Updated { old, new } if !applied(old) => new,
            _ => return,
        };
        if applied(work)
            && work.metadata.deletion_timestamp.is_none()
            && let Some(this) = this.upgrade()
        {
            let work = work.clone();
            tokio::spawn(async move { this.ensure_informers(&work).await });
        }
    });
    let ctx = controller.ctx.clone();
    let queue = queue.clone();
    ctx.serve(
        NAME,
        queue,
        shutdown,
        controller,
        |controller, key| async move { controller.reconcile(key).await },
    )
    .await;
}

impl WorkStatusController {
    /// Makes sure the member informers of an applied Work's manifests run (they exist already when this
    /// process applied the Work; after a restart of a suspended Work they may not).
    async fn ensure_informers(&self, work: &Work) {
        let Ok(cluster) = cluster_of_execution_namespace(&work.namespace().unwrap_or_default())
            .map(str::to_owned)
        else {
            return;
        };
        let Some(cluster) = self.clusters.get("", &cluster) else {
            return;
        };
        if !cluster_ready(&cluster) {
            return;
        }
        let Ok(member) = self.ctx.members.get(&cluster).await else {
            return;
        };
        for manifest in &work.spec.workload.manifests {
            if let Ok(served) = member
                .resolve(
                    objects::api_version(&manifest.0),
                    objects::kind(&manifest.0),
                )
                .await
            {
                member.informer(&served);
            }
        }
    }

    async fn reconcile(&self, key: MemberObjectKey) -> Result<Action> {
        let Some(member) = self.ctx.members.cached(&key.cluster) else {
            return Ok(Action::AwaitChange);
        };
        let served = member.resolve(&key.api_version, &key.kind).await?;
        let Some(informer) = member.informer_if_started(&served) else {
            return Ok(Action::AwaitChange);
        };
        let namespace = if served.namespaced {
            key.namespace.as_str()
        } else {
            ""
        };
        // A deleted member object leaves the Work status as it was; the execution controller recreates it.
        let Some(obj) = informer.get(namespace, &key.name) else {
            return Ok(Action::AwaitChange);
        };
        let observed = with_type(&obj, &key.api_version, &key.kind);
        let (Some(work_namespace), Some(work_name)) = (
            objects::annotation(&observed, annotations::WORK_NAMESPACE),
            objects::annotation(&observed, annotations::WORK_NAME),
        ) else {
            return Ok(Action::AwaitChange);
        };
        let Some(work) = self.works.get(work_namespace, work_name) else {
            return Ok(Action::AwaitChange);
        };
        if work.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let work_ref = reference(work.as_ref());
        let interpreter = self.ctx.interpreter.as_ref();
        let status = match reflect_status(interpreter, &observed).await {
            Ok(status) => status,
            Err(err) => {
                self.recorder
                    .warning(&work_ref, events::REFLECT_STATUS_FAILED, err.message());
                return Err(err);
            }
        };
        let health = if enabled(
            interpreter,
            &observed,
            InterpreterOperation::InterpretHealth,
        ) {
            match interpret_health(interpreter, &observed).await {
                Ok(true) => ResourceHealth::Healthy,
                Ok(false) => ResourceHealth::Unhealthy,
                Err(err) => {
                    self.recorder.warning(
                        &work_ref,
                        events::INTERPRET_HEALTH_FAILED,
                        err.message(),
                    );
                    ResourceHealth::Unknown
                }
            }
        } else {
            ResourceHealth::Healthy
        };
        let identifier = identifier(&work, &observed)?;
        let statuses = vec![ManifestStatus {
            identifier,
            status,
            health: Some(health),
        }];
        if work
            .status
            .as_ref()
            .is_some_and(|s| s.manifest_statuses == statuses)
        {
            return Ok(Action::AwaitChange);
        }
        let api: Api<Work> = Api::namespaced(self.ctx.client.clone(), work_namespace);
        let patch = json!({"status": {"manifestStatuses": statuses}});
        api.patch_status(work_name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| {
                Error::kube(
                    "patch status of",
                    format!("Work {work_namespace}/{work_name}"),
                    source,
                )
            })?;
        self.recorder.normal(
            &work_ref,
            events::REFLECT_STATUS_SUCCEED,
            format!(
                "Reflect status of {} succeed.",
                objects::describe(&observed)
            ),
        );
        Ok(Action::AwaitChange)
    }
}

/// The identifier of the manifest `observed` belongs to (§7.1 step 5).
///
/// # Errors
/// `Invalid` when no manifest of the Work has the object's apiVersion, kind, namespace and name.
pub fn identifier(work: &Work, observed: &Value) -> Result<ResourceIdentifier> {
    let same = |m: &Value| {
        objects::api_version(m) == objects::api_version(observed)
            && objects::kind(m) == objects::kind(observed)
            && objects::namespace(m) == objects::namespace(observed)
            && objects::name(m) == objects::name(observed)
    };
    let ordinal = work
        .spec
        .workload
        .manifests
        .iter()
        .position(|m| same(&m.0))
        .ok_or_else(|| {
            Error::invalid(
                format!(
                    "Work {}/{}",
                    work.namespace().unwrap_or_default(),
                    work.name_any()
                ),
                format!("no manifest for {}", objects::describe(observed)),
            )
        })?;
    let (group, version) = objects::split_api_version(objects::api_version(observed));
    Ok(ResourceIdentifier {
        ordinal: i64::try_from(ordinal).unwrap_or(i64::MAX),
        group: group.to_owned(),
        version: version.to_owned(),
        kind: objects::kind(observed).to_owned(),
        resource: String::new(),
        namespace: objects::namespace(observed).to_owned(),
        name: objects::name(observed).to_owned(),
    })
}
