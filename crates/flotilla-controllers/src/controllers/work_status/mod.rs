//! The work status controller: member object changes → InterpretStatus and
//! InterpretHealth → the owning Work's `status.manifestStatuses`.
//!
//! It reconciles Works: a member object's change (found through the Work annotations Flotilla puts on every
//! object it applies) requests a reconcile of its Work, which reflects the status of the member objects its
//! manifests name. Member informers are started by the execution controller for what it applies, and here
//! for every applied Work (so suspended Works keep their status current after a restart); this controller's
//! hook sees every one.
//!
//! It is also the one writer of a Work's status in its process: the execution controller's `Applied` and
//! `Dispatching` conditions reach the Work through its [`ConditionOutbox`] (the execution controller holds the
//! other end, a [`ConditionPoster`], both made by [`handover`]), together with the first status of the objects
//! that apply created.

mod outbox;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::{annotations, conditions as names, events};
use flotilla_api::work::v1alpha1::{ManifestStatus, ResourceIdentifier, Work};
use flotilla_api::work::v1alpha2::ResourceHealth;
use flotilla_core::conditions::{cluster_ready, is_true};
use flotilla_core::names::cluster_of_execution_namespace;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::interpreter::{Interpreter, enabled, interpret_health, reflect_status};
use crate::member::{Member, Members};
use crate::objects;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::templates::with_type;

pub(crate) use self::outbox::{ConditionOutbox, ConditionPoster, handover};
use super::execution::WorkKey;

/// Name of the controller (metrics, events `flotilla-work-status-controller`).
pub(crate) const NAME: &str = "work-status-controller";

/// How long changes of a Work's member objects are gathered before their status is reflected.
const COALESCE: Duration = Duration::from_millis(300);

/// What the work status controller needs.
pub(crate) struct Context {
    /// The control plane (Works and Clusters; the Work statuses it writes), its Events and reconciles.
    pub control: ControlPlane,
    /// Reflects member status and health (InterpretStatus, InterpretHealth).
    pub interpreter: Arc<dyn Interpreter>,
    /// The members whose objects it reads.
    pub members: Members,
    /// The execution controller's conditions, on their way to the Works.
    pub conditions: ConditionOutbox,
}

impl Context {
    /// The work status controller's context, receiving the conditions posted to `conditions`' poster.
    pub(crate) fn new(shared: &Shared, conditions: ConditionOutbox) -> Self {
        Context {
            control: shared.control.clone(),
            interpreter: shared.interpreter.clone(),
            members: shared.members.clone(),
            conditions,
        }
    }
}

struct WorkStatusController {
    ctx: Context,
    recorder: EventRecorder,
    works: Arc<Informer<Work>>,
    clusters: Arc<Informer<Cluster>>,
}

/// Runs the work status controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(WorkStatusController {
        recorder: ctx.control.events.recorder(NAME),
        works: ctx.control.informers.typed(),
        clusters: ctx.control.informers.typed(),
        ctx,
    });
    // One pool of permits, unlike the execution controller's one per member: reconciles here read the member
    // informers' caches, so a slow member does not hold them, and while they wait for a permit more of a
    // member object's changes gather into one reflection (per-member pools cost writes under load).
    let runner = Controller::new(NAME, &controller.works, &controller.ctx.control.runtime);
    let trigger = runner.trigger();
    controller.ctx.conditions.attach(trigger.clone());
    controller
        .ctx
        .members
        .add_informer_hook(Arc::new(move |_cluster, _served, informer| {
            let trigger = trigger.clone();
            informer.add_handler(move |change| {
                let obj = match change {
                    Change::Updated { old, new }
                        if old.metadata.resource_version == new.metadata.resource_version =>
                    {
                        return;
                    }
                    // A deleted member object leaves the Work status as it was; the execution controller
                    // recreates it.
                    Change::Deleted(_) => return,
                    Change::Added(obj) | Change::Updated { new: obj, .. } => obj,
                };
                let annotations = obj.annotations();
                let (Some(namespace), Some(name)) = (
                    annotations.get(annotations::WORK_NAMESPACE),
                    annotations.get(annotations::WORK_NAME),
                ) else {
                    return;
                };
                // A new member object usually gets its status from the member's controllers moments
                // later: reflecting once after both saves a Work status write per object.
                trigger.reconcile_within(trigger.object_ref(namespace, name), COALESCE);
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
    runner
        .run(shutdown, controller, |controller, work| async move {
            // The Work as it is now: the reconcile may have waited for its turn.
            let current = controller
                .works
                .get(&work.namespace().unwrap_or_default(), &work.name_any());
            match current {
                Some(work) => controller.reconcile(&work).await,
                None => Ok(Action::await_change()),
            }
        })
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

    /// Reflects the status and health of the member objects the Work's manifests name into
    /// `status.manifestStatuses`, together with the conditions the execution controller posted for it, in one
    /// write; an object not (yet) in the member's cache keeps its previous entry.
    async fn reconcile(&self, work: &Work) -> Result<Action> {
        let key = WorkKey {
            namespace: work.namespace().unwrap_or_default(),
            name: work.name_any(),
        };
        if work.metadata.deletion_timestamp.is_some() {
            self.ctx.conditions.forget(&key);
            return Ok(Action::await_change());
        }
        let posted = self.ctx.conditions.take(&key);
        let current = work.status.clone().unwrap_or_default();
        let conditions = posted
            .filter(|posted| *posted != self.ctx.conditions.current(&key, &current.conditions));
        let reflected = match self.reflect(work, &current.manifest_statuses).await {
            Ok(reflected) => reflected,
            Err(err) => {
                if let Some(conditions) = conditions {
                    self.ctx.conditions.restore(key, conditions);
                }
                return Err(err);
            }
        };
        let mut status = serde_json::Map::new();
        if let Some(conditions) = &conditions {
            status.insert("conditions".into(), json!(conditions));
        }
        if let Some((statuses, _)) = &reflected {
            status.insert("manifestStatuses".into(), json!(statuses));
        }
        if status.is_empty() {
            return Ok(Action::await_change());
        }
        let api: Api<Work> = Api::namespaced(self.ctx.control.client.clone(), &key.namespace);
        let patch = json!({ "status": status });
        let written = api
            .patch_status(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        if let Err(source) = written {
            if let Some(conditions) = conditions {
                self.ctx.conditions.restore(key.clone(), conditions);
            }
            return Err(Error::kube("patch status of", key.to_string(), source));
        }
        if let Some(conditions) = conditions {
            self.ctx.conditions.wrote(key, conditions);
        }
        if let Some((_, notes)) = reflected {
            let work_ref = reference(work);
            for (reason, note) in notes {
                self.recorder.normal(&work_ref, reason, note);
            }
        }
        Ok(Action::await_change())
    }

    /// The manifest statuses to write, with the Normal events to record once they are (reason, message);
    /// `None` when nothing was reflected or nothing changed since `previous`.
    async fn reflect(
        &self,
        work: &Work,
        previous: &[ManifestStatus],
    ) -> Result<Option<(Vec<ManifestStatus>, Vec<(&'static str, String)>)>> {
        let namespace = work.namespace().unwrap_or_default();
        let Ok(cluster) = cluster_of_execution_namespace(&namespace) else {
            return Ok(None);
        };
        let Some(member) = self.ctx.members.cached(cluster) else {
            return Ok(None);
        };
        let mut statuses = Vec::new();
        let mut reflected = Vec::new();
        for manifest in &work.spec.workload.manifests {
            match self.observe(work, &member, &manifest.0).await? {
                Some((status, notes)) => {
                    statuses.push(status);
                    reflected.extend(notes);
                }
                None => statuses.extend(
                    previous
                        .iter()
                        .find(|p| same_object(p, &manifest.0))
                        .cloned(),
                ),
            }
        }
        if reflected.is_empty() || previous == statuses.as_slice() {
            return Ok(None);
        }
        Ok(Some((statuses, reflected)))
    }

    /// The status and health of the member object `manifest` names, with the Normal events to record once
    /// they are written (reason, message); `None` when the member's cache does not hold the object (or it
    /// belongs to another Work). Failures are recorded as Warning events at once.
    async fn observe(
        &self,
        work: &Work,
        member: &Member,
        manifest: &Value,
    ) -> Result<Option<(ManifestStatus, Vec<(&'static str, String)>)>> {
        let (api_version, kind) = (objects::api_version(manifest), objects::kind(manifest));
        let served = member.resolve(api_version, kind).await?;
        let Some(informer) = member.informer_if_started(&served) else {
            return Ok(None);
        };
        let namespace = if served.namespaced {
            objects::namespace(manifest)
        } else {
            ""
        };
        let Some(obj) = informer.get(namespace, objects::name(manifest)) else {
            return Ok(None);
        };
        let observed = with_type(&obj, api_version, kind);
        let owned = objects::annotation(&observed, annotations::WORK_NAMESPACE)
            == work.namespace().as_deref()
            && objects::annotation(&observed, annotations::WORK_NAME)
                == Some(work.name_any().as_str());
        if !owned {
            return Ok(None);
        }
        let work_ref = reference(work);
        let interpreter = self.ctx.interpreter.as_ref();
        // Karmada's name of the object in these events: `Kind/namespace/name`.
        let object = format!(
            "{}/{}/{}",
            objects::kind(&observed),
            objects::namespace(&observed),
            objects::name(&observed)
        );
        let mut notes = Vec::new();
        let (status, answered) = reflect_status(interpreter, &observed).await;
        let status = match status {
            Ok(status) => status,
            Err(err) => {
                self.recorder.failure(
                    &work_ref,
                    events::REFLECT_STATUS_FAILED,
                    &err,
                    answered.note(format!(
                        "Reflect status for object({object}) failed, err: {}.",
                        err.message()
                    )),
                );
                return Err(err);
            }
        };
        notes.push((
            events::REFLECT_STATUS_SUCCEED,
            answered.note(format!("Reflect status for object({object}) succeed.")),
        ));
        // Kinds no layer assesses are healthy (Karmada treats them so, and records no event).
        let health = if enabled(
            interpreter,
            &observed,
            InterpreterOperation::InterpretHealth,
        ) {
            let (healthy, answered) = interpret_health(interpreter, &observed).await;
            match healthy {
                Ok(healthy) => {
                    let verdict = if healthy { "healthy" } else { "unhealthy" };
                    notes.push((
                        events::INTERPRET_HEALTH_SUCCEED,
                        answered.note(format!(
                            "Interpret health of object({object}) as {verdict}."
                        )),
                    ));
                    if healthy {
                        ResourceHealth::Healthy
                    } else {
                        ResourceHealth::Unhealthy
                    }
                }
                Err(err) => {
                    self.recorder.failure(
                        &work_ref,
                        events::INTERPRET_HEALTH_FAILED,
                        &err,
                        answered.note(format!(
                            "Interpret health of object({object}) failed, err: {}.",
                            err.message()
                        )),
                    );
                    ResourceHealth::Unknown
                }
            }
        } else {
            ResourceHealth::Healthy
        };
        let status = ManifestStatus {
            identifier: identifier(work, &observed)?,
            status,
            health: Some(health),
        };
        Ok(Some((status, notes)))
    }
}

/// Whether a manifest status is about the object `manifest` names.
fn same_object(status: &ManifestStatus, manifest: &Value) -> bool {
    let id = &status.identifier;
    let (group, version) = objects::split_api_version(objects::api_version(manifest));
    id.group == group
        && id.version == version
        && id.kind == objects::kind(manifest)
        && id.namespace == objects::namespace(manifest)
        && id.name == objects::name(manifest)
}

/// The identifier of the manifest `observed` belongs to: the index of the Work's manifest with its apiVersion,
/// kind, namespace and name, and its group, version and kind (`resource` left empty).
///
/// # Errors
/// `Invalid` when no manifest of the Work has the object's apiVersion, kind, namespace and name.
pub(crate) fn identifier(work: &Work, observed: &Value) -> Result<ResourceIdentifier> {
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
