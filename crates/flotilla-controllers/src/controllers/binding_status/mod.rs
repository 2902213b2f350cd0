//! The binding status controllers: Works → `status.aggregatedStatus` and
//! `FullyApplied` of ResourceBindings and ClusterResourceBindings → AggregateStatus → the template's status.

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::events;
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ClusterResourceBinding, ResourceBinding};
use flotilla_core::conditions::set_condition;
use kube::ResourceExt;
use kube::core::TypeMeta;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::build::{aggregated_items, fully_applied, reports_pending};
use crate::api::get_opt;
use crate::bindings::{self, BindingObject, BindingRef};
use crate::controllers::binding::build::expected_clusters;
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference, reference_of};
use crate::interpreter::{Answered, Interpreter, aggregate_status, enabled};
use crate::resources::Resources;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::templates::{TemplateKey, with_type};
use crate::update::{self, Edit, Part, Written};

/// Name of the controller (metrics, events `flotilla-binding-status-controller`).
pub(crate) const NAME: &str = "binding-status-controller";

/// How long Work status changes of one binding are gathered before it is aggregated.
const COALESCE: Duration = Duration::from_millis(500);

/// How long a binding's aggregation waits for an expected Work's first report (see
/// [`build::reports_pending`]).
const REPORT_PATIENCE: Duration = Duration::from_secs(3);

/// What the binding status controller needs.
pub(crate) struct Context {
    /// The control plane (bindings and Works; the statuses it writes), its Events and reconciles.
    pub control: ControlPlane,
    /// Served resources, to write a template's status through its own API.
    pub resources: Resources,
    /// Folds the members' status into the template's (AggregateStatus).
    pub interpreter: Arc<dyn Interpreter>,
}

impl Context {
    /// The binding status controller's context: its handles from `shared`.
    pub(crate) fn new(shared: &Shared) -> Self {
        Context {
            control: shared.control.clone(),
            resources: shared.resources.clone(),
            interpreter: shared.interpreter.clone(),
        }
    }
}

struct BindingStatusController {
    ctx: Context,
    recorder: EventRecorder,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
    works: Arc<Informer<Work>>,
}

/// Whether a binding event asks for aggregation: created after its first schedule (so a restart aggregates
/// everything again), or its template changed while scheduled.
fn binding_relevant<K: BindingObject>(change: &Change<'_, K>) -> bool {
    let scheduled = |b: &K| b.status().is_some_and(|s| s.last_scheduled_time.is_some());
    match change {
        Change::Added(b) => scheduled(b),
        Change::Updated { old, new } => {
            scheduled(new)
                && old.spec().resource.resource_version != new.spec().resource.resource_version
        }
        Change::Deleted(_) => false,
    }
}

/// Runs the binding status controllers until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(BindingStatusController {
        recorder: ctx.control.events.recorder(NAME),
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        works: ctx.control.informers.typed(),
        ctx,
    });
    // A binding's status is computed from the cached Works: aggregating before they are listed would write
    // `FullyApplied=False` with no items after every restart, and nothing would correct it until a Work's
    // status changed (a Work listed at start is `Added`, which asks for no aggregation).
    tokio::select! {
        () = controller.works.wait_synced() => {}
        () = shutdown.cancelled() => return,
    }
    let rb = Controller::new(NAME, &controller.rb, &controller.ctx.control.runtime);
    let crb = Controller::new(NAME, &controller.crb, &controller.ctx.control.runtime);
    rb.reconcile_changes(&controller.rb, binding_relevant);
    crb.reconcile_changes(&controller.crb, binding_relevant);
    let (rb_trigger, crb_trigger) = (rb.trigger(), crb.trigger());
    controller.works.add_handler(move |change| {
        let relevant = match &change {
            Change::Updated { old, new } => old.status != new.status,
            Change::Deleted(_) => true,
            Change::Added(_) => false,
        };
        if !relevant {
            return;
        }
        // A binding's Works report in bursts (each becomes Applied, then reflects its member's status):
        // aggregate once per burst rather than rewrite the binding and template for each Work.
        match BindingRef::from_annotations(change.object().annotations()) {
            Some(BindingRef::Namespaced { namespace, name }) => {
                rb_trigger.reconcile_within(rb_trigger.object_ref(&namespace, &name), COALESCE);
            }
            Some(BindingRef::Cluster { name }) => {
                crb_trigger.reconcile_within(crb_trigger.object_ref("", &name), COALESCE);
            }
            None => {}
        }
    });
    bindings::run_both(
        rb,
        crb,
        shutdown,
        controller,
        |controller, key| async move { controller.reconcile(key).await },
    )
    .await;
}

impl BindingStatusController {
    async fn reconcile(&self, key: BindingRef) -> Result<Action> {
        match key {
            BindingRef::Namespaced { namespace, name } => {
                let cached = self.rb.get(&namespace, &name).map(|b| b.as_ref().clone());
                self.aggregate::<ResourceBinding>(cached, &namespace, &name)
                    .await
            }
            BindingRef::Cluster { name } => {
                let cached = self.crb.get("", &name).map(|b| b.as_ref().clone());
                self.aggregate::<ClusterResourceBinding>(cached, "", &name)
                    .await
            }
        }
    }

    async fn aggregate<B: BindingObject>(
        &self,
        cached: Option<B>,
        namespace: &str,
        name: &str,
    ) -> Result<Action> {
        let api = B::api(&self.ctx.control.client, namespace);
        let Some(binding) = (match cached {
            Some(binding) => Some(binding),
            None => get_opt(api.clone(), name).await?,
        }) else {
            return Ok(Action::await_change());
        };
        if binding.meta().deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let Some(id) = binding.permanent_id() else {
            return Ok(Action::await_change());
        };
        let label = B::permanent_id_label();
        let works = self
            .works
            .filter(|w| w.labels().get(label).is_some_and(|v| v == &id));
        let work_refs: Vec<&Work> = works.iter().map(AsRef::as_ref).collect();
        let resource = binding.spec().resource.clone();
        let template_namespace = if B::CLUSTER_SCOPED {
            String::new()
        } else {
            namespace.to_owned()
        };
        let items =
            aggregated_items(&work_refs, &resource, &template_namespace).map_err(|err| {
                let error = Error::invalid(binding.describe(), err.to_string());
                self.recorder.warning(
                    &reference(&binding),
                    events::AGGREGATE_STATUS_FAILED,
                    error.message(),
                );
                error
            })?;
        let expected = expected_clusters(binding.spec());
        let scheduled = binding
            .status()
            .and_then(|s| s.last_scheduled_time.as_ref())
            .map(|t| t.0);
        if reports_pending(
            &work_refs,
            &expected,
            scheduled,
            jiff::Timestamp::now(),
            REPORT_PATIENCE,
        ) {
            // Each report requests an aggregation; the requeue covers a report that never comes.
            return Ok(Action::requeue(COALESCE));
        }
        let condition = fully_applied(&items, &expected);

        let (binding_ref, what) = (reference(&binding), binding.describe());
        let event_ref = binding.event_ref();
        let (items_ref, condition_ref) = (&items, &condition);
        let written = update::update(
            &api,
            &what,
            name,
            Some(binding),
            Part::Status,
            |mut b| async move {
                let mut status = b.status().cloned().unwrap_or_default();
                let before = status.clone();
                status.aggregated_status = items_ref.clone();
                set_condition(&mut status.conditions, condition_ref.clone());
                if status == before {
                    return Ok(Edit::Unchanged(b));
                }
                *b.status_mut() = Some(status);
                Ok(Edit::Changed(b))
            },
        )
        .await;
        match written {
            Ok(Written::Gone) => return Ok(Action::await_change()),
            Ok(written) if written.wrote() => self.recorder.normal(
                &binding_ref,
                events::AGGREGATE_STATUS_SUCCEED,
                format!("Update {event_ref} with AggregatedStatus successfully."),
            ),
            Ok(_) => {}
            Err(error) => {
                self.recorder.failure(
                    &binding_ref,
                    events::AGGREGATE_STATUS_FAILED,
                    &error,
                    error.message(),
                );
                return Err(error);
            }
        }

        let key = TemplateKey {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
            namespace: template_namespace,
            name: resource.name.clone(),
        };
        self.update_template_status(&key, items).await?;
        Ok(Action::await_change())
    }

    /// AggregateStatus into the template's status (live read, status subresource write), when the interpreter
    /// has the hook for its kind and the status changes.
    async fn update_template_status(
        &self,
        key: &TemplateKey,
        items: Vec<AggregatedStatusItem>,
    ) -> Result<()> {
        let interpreter = self.ctx.interpreter.as_ref();
        let probe = serde_json::json!({"apiVersion": key.api_version, "kind": key.kind});
        if !enabled(interpreter, &probe, InterpreterOperation::AggregateStatus) {
            return Ok(());
        }
        let served = self
            .ctx
            .resources
            .resolve(&key.api_version, &key.kind)
            .await?;
        let api = self.ctx.resources.api(&served, &key.namespace);
        let part = if served.has_status {
            Part::Status
        } else {
            Part::Object
        };
        let what = key.to_string();
        let template_ref = std::sync::Mutex::new(None);
        let answered = std::sync::Mutex::new(Answered::default());
        let (items, template_ref_slot, answered_slot) = (&items, &template_ref, &answered);
        let written = update::update(
            &api,
            &what,
            &key.name,
            None,
            part,
            |mut object| async move {
                let template = with_type(&object, &key.api_version, &key.kind);
                let reference = reference_of(&template);
                let (aggregated, answered) =
                    aggregate_status(interpreter, &template, items.clone()).await;
                let aggregated = match aggregated {
                    Ok(aggregated) => aggregated,
                    Err(err) => {
                        self.recorder.failure(
                            &reference,
                            events::AGGREGATE_STATUS_FAILED,
                            &err,
                            answered.note(err.message()),
                        );
                        return Err(err);
                    }
                };
                *answered_slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = answered;
                *template_ref_slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(reference);
                if aggregated.get("status") == template.get("status") {
                    return Ok(Edit::Unchanged(object));
                }
                // Write the template as read, with only the status replaced.
                let status = aggregated.get("status").cloned().unwrap_or(Value::Null);
                if let Some(map) = object.data.as_object_mut() {
                    map.insert("status".to_owned(), status);
                }
                object.types.get_or_insert_with(|| TypeMeta {
                    api_version: key.api_version.clone(),
                    kind: key.kind.clone(),
                });
                Ok(Edit::Changed(object))
            },
        )
        .await;
        let template_ref = template_ref
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match (written, template_ref) {
            (Ok(written), Some(reference)) if written.wrote() => self.recorder.normal(
                &reference,
                events::AGGREGATE_STATUS_SUCCEED,
                answered
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .note("Update Resource with AggregatedStatus successfully."),
            ),
            (Err(error @ Error::Kube { .. }), Some(reference)) if error.is_write() => {
                self.recorder.failure(
                    &reference,
                    events::AGGREGATE_STATUS_FAILED,
                    &error,
                    error.message(),
                );
                return Err(error);
            }
            (Err(error), _) => return Err(error),
            _ => {}
        }
        Ok(())
    }
}
