//! The binding status controllers (controllers spec §7.3): Works → `status.aggregatedStatus` and
//! `FullyApplied` of ResourceBindings and ClusterResourceBindings → AggregateStatus → the template's status.

pub mod build;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::events;
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ClusterResourceBinding, ResourceBinding};
use kube::ResourceExt;
use kube::api::PostParams;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::build::{aggregated_items, fully_applied};
use crate::api::get_opt;
use crate::bindings::{BindingObject, BindingRef};
use crate::conditions::set_condition;
use crate::context::Context;
use crate::controllers::binding::build::expected_clusters;
use crate::error::{Error, Result, is_conflict, is_not_found};
use crate::events::{EventRecorder, reference, reference_of};
use crate::interpreter::{aggregate_status, enabled};
use crate::objects::value_to_dynamic;
use crate::runtime::{Action, Change, Informer, Queue};
use crate::templates::{self, TemplateKey};

/// Name of the controller (metrics, events `flotilla-binding-status-controller`).
pub const NAME: &str = "binding-status-controller";

/// How long Work status changes of one binding are gathered before it is aggregated.
const COALESCE: Duration = Duration::from_millis(500);

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
pub async fn run(ctx: Context, shutdown: CancellationToken) {
    let queue: Arc<Queue<BindingRef>> = Queue::new(ctx.options.backoff);
    let controller = Arc::new(BindingStatusController {
        recorder: ctx.recorder(NAME),
        rb: ctx.informers.typed(),
        crb: ctx.informers.typed(),
        works: ctx.informers.typed(),
        ctx,
    });
    let q = queue.clone();
    controller.rb.add_handler(move |change| {
        if binding_relevant(&change) {
            let rb = change.object();
            q.add(BindingRef::Namespaced {
                namespace: rb.namespace().unwrap_or_default(),
                name: rb.name_any(),
            });
        }
    });
    let q = queue.clone();
    controller.crb.add_handler(move |change| {
        if binding_relevant(&change) {
            q.add(BindingRef::Cluster {
                name: change.object().name_any(),
            });
        }
    });
    let q = queue.clone();
    controller.works.add_handler(move |change| {
        let relevant = match &change {
            Change::Updated { old, new } => old.status != new.status,
            Change::Deleted(_) => true,
            Change::Added(_) => false,
        };
        if relevant
            && let Some(binding) = BindingRef::from_annotations(change.object().annotations())
        {
            // A binding's Works report in bursts (each becomes Applied, then reflects its member's status):
            // aggregate once per burst rather than rewrite the binding and template for each Work.
            q.add_coalesced(binding, COALESCE);
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
        let api = B::api(&self.ctx.client, namespace);
        let Some(mut binding) = (match cached {
            Some(binding) => Some(binding),
            None => get_opt(api.clone(), name).await?,
        }) else {
            return Ok(Action::AwaitChange);
        };
        if binding.meta().deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let Some(id) = binding.permanent_id() else {
            return Ok(Action::AwaitChange);
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
        let condition = fully_applied(&items, &expected_clusters(binding.spec()));

        // Update the binding status, retrying write conflicts with a fresh copy.
        for attempt in 0..5 {
            let mut status = binding.status().cloned().unwrap_or_default();
            let before = status.clone();
            status.aggregated_status = items.clone();
            set_condition(&mut status.conditions, condition.clone());
            if status == before {
                break;
            }
            *binding.status_mut() = Some(status);
            match api
                .replace_status(name, &PostParams::default(), &binding)
                .await
            {
                Ok(_) => {
                    self.recorder.normal(
                        &reference(&binding),
                        events::AGGREGATE_STATUS_SUCCEED,
                        format!(
                            "Update {} with AggregatedStatus successfully.",
                            binding.event_ref()
                        ),
                    );
                    break;
                }
                Err(err) if is_conflict(&err) && attempt < 4 => {
                    binding = match get_opt(api.clone(), name).await? {
                        Some(fresh) => fresh,
                        None => return Ok(Action::AwaitChange),
                    };
                }
                Err(err) if is_not_found(&err) => return Ok(Action::AwaitChange),
                Err(source) => {
                    let error = Error::kube("update status of", binding.describe(), source);
                    self.recorder.warning(
                        &reference(&binding),
                        events::AGGREGATE_STATUS_FAILED,
                        error.message(),
                    );
                    return Err(error);
                }
            }
        }

        let key = TemplateKey {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
            namespace: template_namespace,
            name: resource.name.clone(),
        };
        self.update_template_status(&key, items).await?;
        Ok(Action::AwaitChange)
    }

    /// §7.3 step 3: AggregateStatus into the template's status (live read, status subresource write).
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
        for _ in 0..5 {
            let Some(template) = templates::get_live(&self.ctx, key).await? else {
                return Ok(());
            };
            let template_ref = reference_of(&template);
            let aggregated = match aggregate_status(interpreter, &template, items.clone()).await {
                Ok(aggregated) => aggregated,
                Err(err) => {
                    self.recorder.warning(
                        &template_ref,
                        events::AGGREGATE_STATUS_FAILED,
                        err.message(),
                    );
                    return Err(err);
                }
            };
            if aggregated.get("status") == template.get("status") {
                return Ok(());
            }
            // Write the template as read, with only the status replaced.
            let mut updated = template.clone();
            if let Some(map) = updated.as_object_mut() {
                map.insert(
                    "status".to_owned(),
                    aggregated.get("status").cloned().unwrap_or(Value::Null),
                );
            }
            let api = self.ctx.resources.api(&served, &key.namespace);
            let updated = value_to_dynamic(updated)?;
            let result = if served.has_status {
                api.replace_status(&key.name, &PostParams::default(), &updated)
                    .await
            } else {
                api.replace(&key.name, &PostParams::default(), &updated)
                    .await
            };
            match result {
                Ok(_) => {
                    self.recorder.normal(
                        &template_ref,
                        events::AGGREGATE_STATUS_SUCCEED,
                        "Update Resource with AggregatedStatus successfully.",
                    );
                    return Ok(());
                }
                Err(err) if is_conflict(&err) => continue,
                Err(err) if is_not_found(&err) => return Ok(()),
                Err(source) => {
                    let error = Error::kube("update status of", key.to_string(), source);
                    self.recorder.warning(
                        &template_ref,
                        events::AGGREGATE_STATUS_FAILED,
                        error.message(),
                    );
                    return Err(error);
                }
            }
        }
        Err(Error::waiting(format!("{key} to stop changing")))
    }
}
