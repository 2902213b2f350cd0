//! The execution controller: applies each Work's manifest to its member cluster through
//! the object watcher, decides the `Applied` and `Dispatching` conditions (it posts them through its
//! `work_status::ConditionPoster`; the work status controller writes them with the member objects' first
//! status), deletes (or detaches) member objects when the Work goes, and corrects drift: member changes to what a
//! Work owns, and deletions of member objects, bring the Work back for another sync.

pub(crate) mod build;
mod reconcile;
#[cfg(test)]
mod tests;
pub(crate) mod watcher;

use std::sync::Arc;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{annotations, labels};
use flotilla_api::work::v1alpha1::Work;
use flotilla_core::prune::prune_irrelevant_fields;
use kube::ResourceExt;
use kube::api::DynamicObject;
use tokio_util::sync::CancellationToken;

use self::watcher::{ObjectWatcher, RecordKey};
use super::work_status::ConditionPoster;
use crate::events::EventRecorder;
use crate::interpreter::Interpreter;
use crate::member::Members;
use crate::runtime::{self, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::templates::with_type;

/// Name of the controller (metrics, events `flotilla-execution-controller`).
pub(crate) const NAME: &str = "execution-controller";

/// A Work, by namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct WorkKey {
    /// The execution namespace.
    pub namespace: String,
    /// The Work's name.
    pub name: String,
}

impl std::fmt::Display for WorkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Work {}/{}", self.namespace, self.name)
    }
}

/// What the execution controller needs.
pub(crate) struct Context {
    /// The control plane (Works and Clusters), its Events and reconciles.
    pub control: ControlPlane,
    /// Keeps the fields members own when it updates their objects (Retain, through the object watcher).
    pub interpreter: Arc<dyn Interpreter>,
    /// The members it applies to.
    pub members: Members,
    /// Where the conditions it decides go: the work status controller writes them.
    pub conditions: ConditionPoster,
}

impl Context {
    /// The execution controller's context, posting the conditions it decides to `conditions`.
    pub(crate) fn new(shared: &Shared, conditions: ConditionPoster) -> Self {
        Context {
            control: shared.control.clone(),
            interpreter: shared.interpreter.clone(),
            members: shared.members.clone(),
            conditions,
        }
    }
}

/// The execution controller's shared state.
pub(crate) struct ExecutionController {
    ctx: Context,
    recorder: EventRecorder,
    works: Arc<Informer<Work>>,
    clusters: Arc<Informer<Cluster>>,
    watcher: Arc<ObjectWatcher>,
}

/// Runs the execution controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(ExecutionController {
        recorder: ctx.control.events.recorder(NAME),
        works: ctx.control.informers.typed(),
        clusters: ctx.control.informers.typed(),
        watcher: Arc::new(ObjectWatcher::new(ctx.interpreter.clone())),
        ctx,
    });
    tokio::select! {
        () = controller.clusters.wait_synced() => {}
        () = shutdown.cancelled() => return,
    }
    // Works live in their member's execution namespace: each member gets its own turns, so a member that
    // answers slowly does not hold the Works of the others.
    let runner = Controller::new(NAME, &controller.works, &controller.ctx.control.runtime)
        .per_partition(|work| work.namespace.clone().unwrap_or_default());
    runner.reconcile_changes(&controller.works, runtime::spec_changed);
    let trigger = runner.trigger();
    let watcher = Arc::downgrade(&controller.watcher);
    controller
        .ctx
        .members
        .add_informer_hook(Arc::new(move |cluster, served, informer| {
            let (trigger, watcher) = (trigger.clone(), watcher.clone());
            let cluster = cluster.to_owned();
            let (api_version, kind) = (
                served.resource.api_version.clone(),
                served.resource.kind.clone(),
            );
            informer.add_handler(move |change| {
                let Some(watcher) = watcher.upgrade() else {
                    return;
                };
                if let Some(key) = drifted(&cluster, &api_version, &kind, &watcher, change) {
                    trigger.reconcile_ref(trigger.object_ref(&key.namespace, &key.name));
                }
            });
        }));
    runner
        .run(shutdown, controller, |controller, work| async move {
            let key = WorkKey {
                namespace: work.namespace().unwrap_or_default(),
                name: work.name_any(),
            };
            controller.reconcile(key).await
        })
        .await;
}

/// The Work to re-sync for a member change, if the object is Flotilla's (managed, with its Work's annotations),
/// the change is not Flotilla's own write (its recorded version) and not status-only (equal after pruning); a
/// deletion always re-syncs, which recreates the object.
fn drifted(
    cluster: &str,
    api_version: &str,
    kind: &str,
    watcher: &ObjectWatcher,
    change: Change<'_, DynamicObject>,
) -> Option<WorkKey> {
    let obj = change.object();
    if obj.labels().get(labels::MANAGED).map(String::as_str) != Some(labels::MANAGED_VALUE) {
        return None;
    }
    let key = WorkKey {
        namespace: obj.annotations().get(annotations::WORK_NAMESPACE)?.clone(),
        name: obj.annotations().get(annotations::WORK_NAME)?.clone(),
    };
    let value = with_type(obj, api_version, kind);
    let recorded = watcher.recorded_version(&RecordKey::of(cluster, &value));
    match change {
        Change::Deleted(_) => Some(key),
        Change::Added(_) | Change::Updated { .. } => {
            let recorded = recorded?;
            if obj.resource_version().as_deref() == Some(recorded.as_str()) {
                return None;
            }
            if let Change::Updated { old, new } = change {
                let mut before = with_type(old, api_version, kind);
                let mut after = with_type(new, api_version, kind);
                prune_irrelevant_fields(&mut before);
                prune_irrelevant_fields(&mut after);
                if before == after {
                    return None;
                }
            }
            Some(key)
        }
    }
}
