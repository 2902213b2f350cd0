//! The scheduler controller: watches ResourceBindings, ClusterResourceBindings and Clusters, decides which
//! bindings need scheduling (`flotilla_core::scheduler::decision`), runs the pure pipeline and writes the result
//! back (`flotilla_core::scheduler::writeback`).
//!
//! Retries go through the scheduler's priority queue ([`super::queue`]): capacity shortfalls
//! (`Unschedulable`) wait in the unschedulable queue (at most 5 minutes, or until a binding or Cluster event
//! requeues them); scheduler errors and FitErrors that can clear up on their own (a member not serving the kind
//! yet, a cluster not ready) back off; errors caused by a terminating namespace are dropped; any other FitError
//! waits for a change to the binding or to a Cluster's labels or spec, as in Karmada.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{annotations, events};
use flotilla_api::work::v1alpha2::{
    ClusterResourceBinding, ResourceBinding, ResourceBindingSpec, ResourceBindingStatus,
};
use flotilla_core::bindings::Binding;
use flotilla_core::scheduler::core::{BindingRef, ErrorKind, ScheduleOptions, schedule_binding};
use flotilla_core::scheduler::decision::{
    Decision, ScheduleReason, accepts, cluster_change_affects, cluster_update_trigger, decide,
    kind_newly_served,
};
use flotilla_core::scheduler::workload_affinity::{Assigning, WorkloadRules};
use flotilla_core::scheduler::writeback::{
    condition_reason, deleting_message, next_status, result_patch, status_patch, success_message,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::own_writes::OwnWrites;
use super::queue::{QueueTiming, Retry, SchedulingQueue, retry_of};
use crate::bindings::template_reference;
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::features::{Feature, FeatureGates};
use crate::options::Options;
use crate::runtime::reconcile::{observed, reconcile_span};
use crate::runtime::{Action, Change, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::update;

/// Name of the controller (metrics; events report as `flotilla-scheduler`).
pub(crate) const NAME: &str = "scheduler";

/// A binding to schedule: namespace and name, namespace empty for a ClusterResourceBinding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct BindingKey {
    /// Namespace; empty for a ClusterResourceBinding.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl fmt::Display for BindingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

/// What the scheduler needs.
pub(crate) struct Context {
    /// The control plane (bindings and Clusters), its Events; its worker count and metrics.
    pub control: ControlPlane,
    /// Feature gates: multiple pod templates, workload affinity.
    pub feature_gates: FeatureGates,
    /// The scheduler whose bindings it schedules (`default-scheduler`).
    pub scheduler_name: String,
}

impl Context {
    /// The scheduler's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            feature_gates: options.feature_gates.clone(),
            scheduler_name: options.scheduler_name.clone(),
        }
    }
}

struct Scheduler {
    ctx: Context,
    recorder: EventRecorder,
    queue: SchedulingQueue<BindingKey>,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
    clusters: Arc<Informer<Cluster>>,
    options: ScheduleOptions<'static>,
    /// Bindings requeued because a member started serving their kind: scheduled even when the decision alone would
    /// leave them (a Divided result computed while that member lacked the kind is redone once).
    forced: Mutex<HashSet<BindingKey>>,
    /// The generations the scheduler's own result patches produced (not triggers; see [`OwnWrites`]).
    own_writes: OwnWrites,
    /// Results written that the ResourceBinding cache may not show yet, for workload (anti-)affinity.
    assigning: Assigning,
    /// Held while a binding with workload affinity groups is scheduled and its result written, so two
    /// workers never place two workloads of one group from the same view of it.
    workload_groups: tokio::sync::Mutex<()>,
}

/// Runs the scheduler until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let scheduler = Arc::new(Scheduler {
        recorder: ctx.control.events.recorder(NAME),
        queue: SchedulingQueue::new(QueueTiming::for_gate(
            ctx.feature_gates.enabled(Feature::PriorityBasedScheduling),
        )),
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        clusters: ctx.control.informers.typed(),
        options: ScheduleOptions {
            multiple_pod_templates: ctx
                .feature_gates
                .enabled(Feature::MultiplePodTemplatesScheduling),
            ..ScheduleOptions::default()
        },
        forced: Mutex::default(),
        own_writes: OwnWrites::default(),
        assigning: Assigning::default(),
        workload_groups: tokio::sync::Mutex::new(()),
        ctx,
    });
    // Scheduling against a partial cluster list would drop clusters from results.
    let synced = async {
        scheduler.clusters.wait_synced().await;
        scheduler.rb.wait_synced().await;
        scheduler.crb.wait_synced().await;
    };
    tokio::select! {
        () = synced => {}
        () = shutdown.cancelled() => return,
    }
    scheduler.watch();
    let workers: Vec<_> = (0..scheduler.ctx.control.runtime.workers.max(1))
        .map(|_| tokio::spawn(scheduler.clone().work()))
        .collect();
    shutdown.cancelled().await;
    scheduler.queue.close();
    for worker in workers {
        if let Err(err) = worker.await {
            tracing::error!(controller = NAME, error = %err, "scheduler worker ended abnormally");
        }
    }
}

/// Whether a binding change is a scheduling trigger: creation, a spec change (generation), the start of
/// deletion, or becoming accepted (a policy label appearing).
fn binding_trigger<K: Binding>(scheduler_name: &str, change: &Change<'_, K>) -> bool {
    let accepted = |k: &K| accepts(scheduler_name, k.labels(), k.spec());
    match change {
        Change::Added(new) => accepted(new),
        Change::Updated { old, new } => {
            accepted(new)
                && (old.meta().generation != new.meta().generation
                    || (old.meta().deletion_timestamp.is_none()
                        && new.meta().deletion_timestamp.is_some())
                    || !accepted(old))
        }
        Change::Deleted(_) => false,
    }
}

/// `spec.schedulePriority.priority`, 0 when absent.
fn priority_of(spec: &ResourceBindingSpec) -> i32 {
    spec.schedule_priority.as_ref().map_or(0, |p| p.priority)
}

fn key_of<K: Resource>(binding: &K) -> BindingKey {
    BindingKey {
        namespace: binding.meta().namespace.clone().unwrap_or_default(),
        name: binding.name_any(),
    }
}

impl Scheduler {
    fn scheduler_name(&self) -> &str {
        &self.ctx.scheduler_name
    }

    fn watch(self: &Arc<Self>) {
        let this = Arc::downgrade(self);
        self.rb.add_handler(move |change| {
            if let (Some(this), Change::Deleted(rb)) = (this.upgrade(), change) {
                this.assigning.forget(
                    rb.metadata.namespace.as_deref().unwrap_or_default(),
                    &rb.name_any(),
                );
            }
            if let Some(this) = this.upgrade()
                && binding_trigger(this.scheduler_name(), &change)
                && !this.own_result(&change)
            {
                let binding = change.object();
                this.queue
                    .add(key_of(binding.as_ref()), priority_of(&binding.spec));
            }
        });
        let this = Arc::downgrade(self);
        self.crb.add_handler(move |change| {
            if let Some(this) = this.upgrade()
                && binding_trigger(this.scheduler_name(), &change)
                && !this.own_result(&change)
            {
                let binding = change.object();
                this.queue
                    .add(key_of(binding.as_ref()), priority_of(&binding.spec));
            }
        });
        let this = Arc::downgrade(self);
        self.clusters.add_handler(move |change| {
            let Some(this) = this.upgrade() else { return };
            if let Change::Updated { old, new } = change {
                let versions = cluster_update_trigger(old, new);
                if !versions.is_empty() {
                    this.enqueue_affected(&versions, false, |_| true);
                } else if old.status != new.status {
                    // Karmada ignores status changes; a member that starts serving a kind (a CRD arrived)
                    // reschedules the bindings of that kind, so the result is the one Karmada computes when
                    // every member already served it, instead of waiting for an unrelated change.
                    this.enqueue_affected(&[new], true, |spec| kind_newly_served(old, new, spec));
                }
            }
        });
    }

    /// Whether a binding update is only the echo of the scheduler's own result patch: the generation it
    /// produced, with nothing else that triggers (deletion starting, becoming accepted).
    fn own_result<K: Binding>(&self, change: &Change<'_, K>) -> bool {
        let Change::Updated { old, new } = change else {
            return false;
        };
        let other_trigger = (old.meta().deletion_timestamp.is_none()
            && new.meta().deletion_timestamp.is_some())
            || !accepts(self.scheduler_name(), old.labels(), old.spec());
        let uid = new.meta().uid.as_deref().unwrap_or_default();
        let own = self.own_writes.take_own(
            &key_of(new.as_ref()),
            uid,
            new.meta().generation.unwrap_or_default(),
        );
        own && !other_trigger
    }

    /// Requeues every accepted binding for which `relevant` holds and a change of one of `versions` (old
    /// and/or new Cluster) affects it; `force` makes the next attempt a full schedule.
    fn enqueue_affected(
        &self,
        versions: &[&Cluster],
        force: bool,
        relevant: impl Fn(&ResourceBindingSpec) -> bool,
    ) {
        let no_status = ResourceBindingStatus::default();
        let affected = |labels: &BTreeMap<String, String>,
                        spec: &ResourceBindingSpec,
                        status: Option<&ResourceBindingStatus>,
                        generation: Option<i64>| {
            let status = status.unwrap_or(&no_status);
            accepts(self.scheduler_name(), labels, spec)
                && relevant(spec)
                && versions.iter().any(|c| {
                    cluster_change_affects(spec, status, generation.unwrap_or_default(), c)
                })
        };
        for rb in self.rb.list() {
            if affected(
                rb.labels(),
                &rb.spec,
                rb.status.as_ref(),
                rb.metadata.generation,
            ) {
                self.requeue(key_of(rb.as_ref()), priority_of(&rb.spec), force);
            }
        }
        for crb in self.crb.list() {
            if affected(
                crb.labels(),
                &crb.spec,
                crb.status.as_ref(),
                crb.metadata.generation,
            ) {
                self.requeue(key_of(crb.as_ref()), priority_of(&crb.spec), force);
            }
        }
    }

    fn requeue(&self, key: BindingKey, priority: i32, force: bool) {
        if force {
            self.forced_set().insert(key.clone());
        }
        self.queue.add(key, priority);
    }

    /// One worker: takes keys until the queue closes, reconciles each (with the span, metrics and logs of
    /// every reconcile) and routes failures: to the backoff or unschedulable queue, dropped, or waiting for a
    /// change (`super::queue::retry_of`).
    async fn work(self: Arc<Self>) {
        while let Some(key) = self.queue.next().await {
            let object = if key.namespace.is_empty() {
                format!("ClusterResourceBinding {key}")
            } else {
                format!("ResourceBinding {key}")
            };
            let span = reconcile_span(NAME, &object);
            let result = observed(
                NAME,
                self.ctx.control.runtime.metrics.clone(),
                self.reconcile(key.clone()),
            )
            .instrument(span)
            .await;
            match result {
                Ok(_) => self.queue.forget(&key),
                Err(err) => {
                    let retry = retry_of(&err);
                    let priority = self.current_priority(&key);
                    match retry {
                        Retry::Drop => self.queue.forget(&key),
                        Retry::Backoff => {
                            self.queue.add_backoff(key.clone(), priority);
                        }
                        Retry::Unschedulable => self.queue.add_unschedulable(key.clone(), priority),
                    }
                    tracing::debug!(controller = NAME, key = %key, retry = ?retry, "scheduling retry");
                }
            }
            self.queue.done(&key);
            self.ctx
                .control
                .runtime
                .metrics
                .set_queue_depth(NAME, self.queue.len());
        }
    }

    /// The binding's priority as the informer has it now (0 once it is gone).
    fn current_priority(&self, key: &BindingKey) -> i32 {
        if key.namespace.is_empty() {
            self.crb
                .get("", &key.name)
                .map_or(0, |b| priority_of(&b.spec))
        } else {
            self.rb
                .get(&key.namespace, &key.name)
                .map_or(0, |b| priority_of(&b.spec))
        }
    }

    fn forced_set(&self) -> std::sync::MutexGuard<'_, HashSet<BindingKey>> {
        self.forced.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn reconcile(&self, key: BindingKey) -> Result<Action> {
        if key.namespace.is_empty() {
            match self.crb.get("", &key.name) {
                Some(crb) => self.schedule(crb.as_ref(), true).await,
                None => {
                    self.own_writes.forget(&key);
                    Ok(Action::await_change())
                }
            }
        } else {
            match self.rb.get(&key.namespace, &key.name) {
                Some(rb) => self.schedule(rb.as_ref(), false).await,
                None => {
                    self.own_writes.forget(&key);
                    Ok(Action::await_change())
                }
            }
        }
    }

    fn api<K: Binding>(&self, binding: &K) -> Api<DynamicObject> {
        let resource = ApiResource::erase::<K>(&());
        match binding.meta().namespace.as_deref() {
            Some(ns) if !ns.is_empty() => {
                Api::namespaced_with(self.ctx.control.client.clone(), ns, &resource)
            }
            _ => Api::all_with(self.ctx.control.client.clone(), &resource),
        }
    }

    /// Events go to the binding and to its template, as Karmada records them.
    fn event<K: Binding>(&self, binding: &K, ok: bool, reason: &str, message: &str) {
        let template = template_reference(binding.spec());
        for target in [reference(binding), template] {
            if ok {
                self.recorder.normal(&target, reason, message);
            } else {
                self.recorder.warning(&target, reason, message);
            }
        }
    }

    async fn schedule<K: Binding>(&self, binding: &K, cluster_scoped: bool) -> Result<Action> {
        if !accepts(self.scheduler_name(), binding.labels(), binding.spec()) {
            return Ok(Action::await_change());
        }
        let key = key_of(binding);
        let describe = format!("{} {key}", K::kind(&()));
        let clusters = self.clusters.list();
        let status = binding.status().cloned().unwrap_or_default();
        let generation = binding.meta().generation.unwrap_or_default();
        let decision = decide(
            binding.spec(),
            &status,
            generation,
            binding.annotations(),
            binding.meta().deletion_timestamp.is_some(),
            &clusters,
        );
        let forced = self.forced_set().remove(&key);
        let decision = match decision {
            Decision::Nothing | Decision::ObserveGeneration if forced => {
                Decision::Schedule(ScheduleReason::KindNewlyServed)
            }
            other => other,
        };
        let schedule_reason = match decision {
            Decision::Nothing => return Ok(Action::await_change()),
            Decision::SkipDeleting => {
                let message = deleting_message(&key.namespace, &key.name);
                self.event(binding, false, events::SCHEDULE_BINDING_FAILED, &message);
                return Ok(Action::await_change());
            }
            Decision::ObserveGeneration => {
                let observe = |current: &ResourceBindingStatus| ResourceBindingStatus {
                    scheduler_observed_generation: generation,
                    ..current.clone()
                };
                self.update_status(binding, &status, None, observe, &describe)
                    .await?;
                self.own_writes.record(
                    &key,
                    binding.meta().uid.as_deref().unwrap_or_default(),
                    generation,
                );
                return Ok(Action::await_change());
            }
            Decision::Schedule(reason) => reason,
        };
        tracing::debug!(binding = %describe, reason = ?schedule_reason, "scheduling");

        let binding_ref = BindingRef {
            namespace: &key.namespace,
            name: &key.name,
        };
        // Workload groups (ResourceBindings only, as in Karmada): the group's view is taken and the result
        // written under one lock.
        let grouped = !cluster_scoped
            && self.ctx.feature_gates.enabled(Feature::WorkloadAffinity)
            && binding.spec().workload_affinity_groups.is_some();
        let _group_turn = if grouped {
            Some(self.workload_groups.lock().await)
        } else {
            None
        };
        let rules = grouped
            .then(|| self.rb.get(&key.namespace, &key.name))
            .flatten()
            .map(|rb| {
                let peers = self.rb.list();
                WorkloadRules::of(&rb, peers.iter().map(AsRef::as_ref), |peer| {
                    self.assigning.targets(peer)
                })
            });
        let options = ScheduleOptions {
            workload_rules: rules.as_ref(),
            ..self.options
        };
        let outcome = schedule_binding(binding_ref, binding.spec(), &status, &clusters, options);
        for message in &outcome.term_failures {
            self.event(binding, false, events::SCHEDULE_BINDING_FAILED, message);
        }

        // The result first (Karmada's order), then the status with the condition.
        let current_annotation = binding
            .annotations()
            .get(annotations::APPLIED_PLACEMENT)
            .map(String::as_str);
        let patch = result_patch(
            &outcome,
            current_annotation,
            &binding.spec().clusters,
            binding.meta().resource_version.as_deref(),
        )
        .map_err(|source| Error::Decode {
            object: describe.clone(),
            source,
        })?;
        let mut resource_version = binding.meta().resource_version.clone();
        let mut generation = generation;
        if let Some(patch) = patch {
            // The patch is guarded by the resource version read, so a spec change makes exactly the next
            // generation; recorded before the write, as its watch event may arrive before the response.
            let uid = binding.meta().uid.as_deref().unwrap_or_default();
            if patch.get("spec").is_some() {
                self.own_writes.record(&key, uid, generation + 1);
            }
            let patched = self
                .api(binding)
                .patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|source| {
                    self.own_writes.forget(&key);
                    Error::kube("patch", describe.clone(), source)
                })?;
            if grouped && let Some(result) = &outcome.clusters {
                self.assigning.record(
                    &key.namespace,
                    &key.name,
                    patched.metadata.resource_version.as_deref(),
                    result.iter().map(|t| t.name.clone()).collect(),
                );
            }
            resource_version = patched.metadata.resource_version;
            // The patch moved the generation by this result alone, so the status can observe the new
            // generation at once instead of in a second status write after the spec change comes back
            // through the informer.
            generation = patched.metadata.generation.unwrap_or(generation);
        }
        let now = Time(jiff::Timestamp::now());
        let update =
            |current: &ResourceBindingStatus| next_status(current, &outcome, generation, &now);
        self.update_status(binding, &status, resource_version, update, &describe)
            .await?;

        let has_terms = binding
            .spec()
            .placement
            .as_ref()
            .is_some_and(|p| !p.cluster_affinities.is_empty());
        match &outcome.error {
            None => {
                let result = outcome.clusters.as_deref().unwrap_or_default();
                let message = success_message(result, cluster_scoped);
                self.event(binding, true, events::SCHEDULE_BINDING_SUCCEED, &message);
                Ok(Action::await_change())
            }
            Some(error) => {
                // With terms, each failed term already had its event; Karmada adds a final one only when the
                // empty result of a FitError was written.
                if !has_terms || error.is_fit_error() {
                    self.event(
                        binding,
                        false,
                        events::SCHEDULE_BINDING_FAILED,
                        &error.message,
                    );
                }
                match &error.kind {
                    ErrorKind::NoClusterFit(fit) if !fit.is_transient() => {
                        Ok(Action::await_change())
                    }
                    _ => Err(Error::Schedule {
                        object: describe,
                        reason: condition_reason(Some(error)),
                        message: error.message.clone(),
                    }),
                }
            }
        }
    }

    /// Writes `update(status)` to the status subresource, guarded by the resource version. On a write
    /// conflict it reads the binding afresh and applies `update` again, so the scheduler's fields are never
    /// lost to (nor clobber) another controller's concurrent status write.
    async fn update_status<K: Binding>(
        &self,
        binding: &K,
        status: &ResourceBindingStatus,
        resource_version: Option<String>,
        update: impl Fn(&ResourceBindingStatus) -> ResourceBindingStatus,
        describe: &str,
    ) -> Result<()> {
        let (api, name) = (&self.api(binding), &binding.name_any());
        let resource_version = resource_version.or_else(|| binding.meta().resource_version.clone());
        let decode = |source| Error::Decode {
            object: describe.to_owned(),
            source,
        };
        let update = &update;
        let state = (status.clone(), resource_version);
        update::retry_on_conflict(
            describe,
            state,
            |(current, resource_version), fresh| async move {
                let attempt = async {
                    let (current, resource_version) = if fresh {
                        let stored = api.get_status(name).await.map_err(|source| {
                            Error::kube("get status of", describe.to_owned(), source)
                        })?;
                        let current = match stored.data.get("status") {
                            Some(value) => serde_json::from_value(value.clone()).map_err(decode)?,
                            None => ResourceBindingStatus::default(),
                        };
                        (current, stored.metadata.resource_version)
                    } else {
                        (current, resource_version)
                    };
                    let next = update(&current);
                    let patch = status_patch(&current, &next, resource_version.as_deref())
                        .map_err(decode)?;
                    if let Some(patch) = patch {
                        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map_err(|source| {
                                Error::kube("patch status of", describe.to_owned(), source)
                            })?;
                    }
                    Ok(())
                };
                let result = attempt.await;
                // A conflict reads the status afresh on the next attempt, so nothing needs carrying over.
                ((ResourceBindingStatus::default(), None), result)
            },
        )
        .await
    }
}
