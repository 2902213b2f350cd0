//! Runs a controller on kube-runtime's [`applier`]: reconciles of one kind of object, requested by change
//! handlers through a [`Trigger`], one at a time per object and at most `workers` at once, with the error
//! policy, a tracing span, metrics and logs for every reconcile.
//!
//! Requests go through kube-runtime's [`scheduler`] before the applier: it holds requests that ask to wait
//! (a coalescing window) and folds every request for an object into the earliest one, so a burst of changes
//! within the window gives one reconcile; a request for an object whose reconcile is already due and not
//! started is dropped at once, since that reconcile will see the change. The applier's own scheduler then
//! keeps an object that is being reconciled from running twice (a request meanwhile runs once afterwards)
//! and holds the error policy's and the reconciler's requeues. Reconciles take turns for the `workers`
//! permits by priority, first come, first served among equals: with `ControllerPriorityQueue`
//! ([`Runtime::priority_queue`]), a reconcile requested for an object of an informer's first list waits
//! behind those requested for changes, so after a restart the changes are handled before the backlog.
//!
//! Guarantees: an object is reconciled by one task at a time; reconciles read the object (by its key) when
//! they get their turn; a request for an object that is no longer in the store is dropped (deletions are seen
//! by change handlers); on shutdown no new reconcile starts and the running ones finish.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc;
use futures::future::BoxFuture;
use kube::Resource;
use kube::runtime::controller::Error as ApplierError;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::scheduler::{ScheduleRequest, scheduler};
use kube::runtime::{Config, applier};
use prometheus::IntGauge;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::informer::is_listing;
use super::informer::{Change, Informer};
use super::permits::{LOW_PRIORITY, Permits, Pool};
use super::reconcile::{observed, reconcile_span};
use crate::error::{Error, Result};
use crate::metrics::Metrics;

pub use kube::runtime::controller::Action;

/// Capped exponential backoff for transient failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Delay after the first failure.
    pub base: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(10),
        }
    }
}

impl Backoff {
    /// The delay after `failures` consecutive failures (1 = first failure).
    pub fn delay(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(31);
        self.base.saturating_mul(1u32 << exponent).min(self.max)
    }
}

/// How a process runs its controllers' reconciles: how many of one controller's run at once, how failures back
/// off, and the metrics every reconcile is counted in. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    /// Concurrent reconciles per controller (Karmada's `--concurrent-*-syncs`).
    pub workers: usize,
    /// Backoff of transient reconcile failures.
    pub backoff: Backoff,
    /// Where reconciles are counted.
    pub metrics: Metrics,
    /// Karmada's `ControllerPriorityQueue`: reconciles of objects an informer's first list brought wait behind
    /// those of objects that changed.
    pub priority_queue: bool,
}

/// Objects requested and not yet being reconciled, with when they are due; counted in the controller's
/// queue-depth gauge.
struct Pending<K: Resource>
where
    K::DynamicType: Eq + Hash,
{
    /// When each is due, and its priority.
    keys: Mutex<HashMap<ObjectRef<K>, (Instant, i32)>>,
    gauge: IntGauge,
    /// Whether requests from an informer's first list get [`LOW_PRIORITY`].
    prioritised: AtomicBool,
}

impl<K: Resource> Pending<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// Records a request due at `run_at` at `priority` (the higher of it and an earlier request's counts);
    /// whether it must be sent on, which it need not when a reconcile of the object is already due no later
    /// (that reconcile has not started, so it will see the change).
    fn requested(&self, key: &ObjectRef<K>, run_at: Instant, priority: i32) -> bool {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        match keys.get_mut(key) {
            Some((due, queued)) => {
                *queued = (*queued).max(priority);
                if *due <= run_at {
                    return false;
                }
                *due = run_at;
                true
            }
            None => {
                keys.insert(key.clone(), (run_at, priority));
                self.gauge.inc();
                true
            }
        }
    }

    /// The priority of a request made now.
    fn priority_now(&self) -> i32 {
        if self.prioritised.load(Ordering::Relaxed) && is_listing() {
            LOW_PRIORITY
        } else {
            0
        }
    }

    fn started(&self, key: &ObjectRef<K>) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if keys.remove(key).is_some() {
            self.gauge.dec();
        }
    }

    /// The priority the object's pending request has (0 when none is pending: a requeue).
    fn priority(&self, key: &ObjectRef<K>) -> i32 {
        let keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        keys.get(key).map_or(0, |(_, priority)| *priority)
    }
}

/// Requests reconciles of a controller's objects: cheap to clone, called from change handlers.
pub struct Trigger<K: Resource>
where
    K::DynamicType: Eq + Hash,
{
    requests: mpsc::UnboundedSender<ScheduleRequest<ObjectRef<K>>>,
    dyntype: K::DynamicType,
    pending: Arc<Pending<K>>,
}

impl<K: Resource> Clone for Trigger<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    fn clone(&self) -> Self {
        Trigger {
            requests: self.requests.clone(),
            dyntype: self.dyntype.clone(),
            pending: self.pending.clone(),
        }
    }
}

impl<K: Resource> Trigger<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// The reference of object `namespace/name` (namespace empty for cluster-scoped objects).
    pub fn object_ref(&self, namespace: &str, name: &str) -> ObjectRef<K> {
        let key = ObjectRef::new_with(name, self.dyntype.clone());
        if namespace.is_empty() {
            key
        } else {
            key.within(namespace)
        }
    }

    /// Requests a reconcile of `obj` now.
    pub fn reconcile(&self, obj: &K) {
        self.reconcile_ref(ObjectRef::from_obj_with(obj, self.dyntype.clone()));
    }

    /// Requests a reconcile of the object `key` names now.
    pub fn reconcile_ref(&self, key: ObjectRef<K>) {
        self.request(key, Instant::now());
    }

    /// Requests a reconcile of the object `key` names at the latest `window` from now: every request for it
    /// meanwhile (and any already waiting) folds into that one, so a level-triggered reconcile sees a burst
    /// of changes at once and writes its result once instead of once per change. A request without a window
    /// still runs at once.
    pub fn reconcile_within(&self, key: ObjectRef<K>, window: Duration) {
        self.request(key, Instant::now() + window);
    }

    fn request(&self, key: ObjectRef<K>, run_at: Instant) {
        let priority = self.pending.priority_now();
        if !self.pending.requested(&key, run_at, priority) {
            return;
        }
        // Fails only once the controller stopped, when there is nothing left to do.
        let _ = self.requests.unbounded_send(ScheduleRequest {
            message: key,
            run_at,
        });
    }
}

/// A controller of `K` objects, not yet running.
pub struct Controller<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash,
{
    name: &'static str,
    store: Store<K>,
    trigger: Trigger<K>,
    requests: mpsc::UnboundedReceiver<ScheduleRequest<ObjectRef<K>>>,
    workers: usize,
    permits: Permits<K>,
    backoff: Backoff,
    metrics: Metrics,
    /// Turns true once the store is synced; the applier starts then.
    synced: Option<watch::Receiver<bool>>,
}

/// What the applier's reconciler and error policy share.
struct Runner<K: Resource, C, F>
where
    K::DynamicType: Eq + Hash,
{
    name: &'static str,
    permits: Permits<K>,
    shutdown: CancellationToken,
    state: Arc<C>,
    reconcile: F,
    metrics: Metrics,
    backoff: Backoff,
    dyntype: K::DynamicType,
    pending: Arc<Pending<K>>,
    failures: Mutex<HashMap<ObjectRef<K>, u32>>,
}

impl<K> Controller<K>
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Debug + Unpin + Send + Sync,
{
    /// A controller named `name` (metrics, logs) reconciling the objects `informer` caches, with `runtime`'s
    /// worker count, backoff, metrics and queue priorities.
    pub fn new(name: &'static str, informer: &Informer<K>, runtime: &Runtime) -> Self {
        let mut controller = Self::with_store(
            name,
            informer.store(),
            informer.dyntype().clone(),
            runtime.workers,
            runtime.backoff,
            runtime.metrics.clone(),
        );
        controller.synced = Some(informer.synced());
        controller.prioritised(runtime.priority_queue)
    }

    /// Whether requests from an informer's first list wait behind those for changes (Karmada's
    /// `ControllerPriorityQueue`).
    #[must_use]
    pub fn prioritised(self, on: bool) -> Self {
        self.trigger
            .pending
            .prioritised
            .store(on, Ordering::Relaxed);
        self
    }

    /// A controller reconciling the objects of `store` (of `dyntype`), which must be synced already.
    pub fn with_store(
        name: &'static str,
        store: Store<K>,
        dyntype: K::DynamicType,
        workers: usize,
        backoff: Backoff,
        metrics: Metrics,
    ) -> Self {
        let (tx, requests) = mpsc::unbounded();
        Controller {
            name,
            store,
            trigger: Trigger {
                requests: tx,
                dyntype,
                pending: Arc::new(Pending {
                    keys: Mutex::default(),
                    gauge: metrics.queue_depth(name),
                    prioritised: AtomicBool::new(false),
                }),
            },
            requests,
            workers: workers.max(1),
            permits: Permits::Shared(Pool::new(workers)),
            backoff,
            metrics,
            synced: None,
        }
    }

    /// Concurrent reconciles, instead of the runtime's `workers`.
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self.permits = Permits::Shared(Pool::new(self.workers));
        self
    }

    /// Gives each partition of the objects (as `partition` names it) its own `workers` permits instead of one
    /// pool for all: for objects that each belong to one member, so a slow member does not hold the others.
    #[must_use]
    pub fn per_partition(
        mut self,
        partition: impl Fn(&ObjectRef<K>) -> String + Send + Sync + 'static,
    ) -> Self {
        self.permits = Permits::partitioned(self.workers, Arc::new(partition));
        self
    }

    /// Reconciles take their turn from `permits`, shared with other controllers (several appliers that
    /// together act as one controller).
    #[must_use]
    pub fn permits(mut self, permits: Arc<Pool>) -> Self {
        self.permits = Permits::Shared(permits);
        self
    }

    /// A handle to request reconciles with.
    pub fn trigger(&self) -> Trigger<K> {
        self.trigger.clone()
    }

    /// Requests a reconcile of every object `informer` sees change for which `relevant` holds: the usual
    /// trigger of a controller by its own objects.
    pub fn reconcile_changes(
        &self,
        informer: &Informer<K>,
        relevant: impl Fn(&Change<'_, K>) -> bool + Send + Sync + 'static,
    ) {
        let trigger = self.trigger();
        informer.add_handler(move |change| {
            if !matches!(change, Change::Deleted(_)) && relevant(&change) {
                trigger.reconcile(change.object());
            }
        });
    }

    /// Runs `reconcile(state, object)` for requested objects until `shutdown` is cancelled, then lets the
    /// running reconciles finish.
    pub async fn run<C, F, Fut>(self, shutdown: CancellationToken, state: Arc<C>, reconcile: F)
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<C>, Arc<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action>> + Send + 'static,
    {
        // The applier waits for its store too, but through kube-runtime's `wait_until_ready`, which wakes
        // only one of several waiters; started after the sync, it finds the store ready at once.
        if let Some(mut synced) = self.synced {
            tokio::select! {
                _ = synced.wait_for(|synced| *synced) => {}
                () = shutdown.cancelled() => return,
            }
        }
        let (store, trigger) = (self.store.clone(), self.trigger.clone());
        let runner = Arc::new(Runner {
            name: self.name,
            permits: self.permits,
            shutdown: shutdown.clone(),
            state,
            reconcile,
            metrics: self.metrics,
            backoff: self.backoff,
            dyntype: self.trigger.dyntype.clone(),
            pending: self.trigger.pending.clone(),
            failures: Mutex::default(),
        });
        // Requests that must wait (coalescing) are held here until due; the applier gets each when it is.
        let requests = scheduler(self.requests)
            .take_until(shutdown.cancelled_owned())
            .map(Ok::<_, Infallible>);
        // No concurrency limit in the applier: reconciles wait for a permit of `permits` (by priority, first
        // come, first served among equals) instead, since requests the applier holds back for a free slot are taken in no particular
        // order (a hash set), which delays the last step of a pipeline for every object alike.
        let results = applier(
            |obj, runner: Arc<Runner<K, C, F>>| runner.start(obj),
            |obj, err, runner| runner.error_policy(&obj, err),
            runner.clone(),
            self.store,
            requests,
            Config::default(),
        );
        results
            .for_each(|result| {
                match result {
                    Ok(_) | Err(ApplierError::ReconcilerFailed(..)) => {}
                    // Deleted before its turn: the change handlers saw the deletion.
                    Err(ApplierError::ObjectNotFound(key)) => {
                        let name = key.name.clone();
                        let namespace = key.namespace.clone().unwrap_or_default();
                        let key = runner.object_ref(&namespace, &name);
                        runner.pending.started(&key);
                        // The object may have been added between the applier's lookup and now: its request was
                        // then dropped as already pending, so it is asked for again here or it would be lost
                        // (a namespace created just after a policy naming it was never propagated).
                        if store.get(&key).is_some() {
                            trigger.reconcile_ref(key);
                        } else {
                            tracing::debug!(controller = runner.name, object = %name, "object gone before its reconcile");
                        }
                    }
                    Err(err @ (ApplierError::QueueError(_) | ApplierError::RunnerError(_))) => {
                        tracing::error!(controller = runner.name, error = %err, "controller runtime failed");
                    }
                }
                std::future::ready(())
            })
            .await;
    }
}

impl<K, C, F, Fut> Runner<K, C, F>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
    C: Send + Sync + 'static,
    F: Fn(Arc<C>, Arc<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action>> + Send + 'static,
{
    fn object_ref(&self, namespace: &str, name: &str) -> ObjectRef<K> {
        let key = ObjectRef::new_with(name, self.dyntype.clone());
        if namespace.is_empty() {
            key
        } else {
            key.within(namespace)
        }
    }

    /// Starts one reconcile on its own task (so reconciles of one controller use every core) once it has a
    /// permit, under its span. Reconciles read the object when they run, not when they were handed it.
    fn start(self: Arc<Self>, obj: Arc<K>) -> BoxFuture<'static, Result<Action>> {
        let key = ObjectRef::from_obj_with(obj.as_ref(), self.dyntype.clone());
        let object = describe::<K>(&key);
        let span = reconcile_span(self.name, &object);
        let work = (self.reconcile)(self.state.clone(), obj);
        let this = self.clone();
        let task = tokio::spawn(async move {
            let priority = this.pending.priority(&key);
            let _permit = tokio::select! {
                permit = this.permits.acquire(&key, priority) => permit,
                // Shutting down: what has not started does not start.
                () = this.shutdown.cancelled() => return None,
            };
            this.pending.started(&key);
            let result = observed(this.name, this.metrics.clone(), work)
                .instrument(span)
                .await;
            if result.is_ok() {
                this.failures_mut().remove(&key);
            }
            Some(result)
        });
        Box::pin(async move {
            match task.await {
                Ok(Some(result)) => result,
                Ok(None) => Ok(Action::await_change()),
                Err(err) => {
                    tracing::error!(controller = self.name, object, error = %err, "reconcile panicked");
                    Err(Error::Panicked { object })
                }
            }
        })
    }

    /// The error policy: permanent errors wait for a change to the object, transient ones back off
    /// exponentially (capped) per object.
    fn error_policy(&self, obj: &K, error: &Error) -> Action {
        let key = ObjectRef::from_obj_with(obj, self.dyntype.clone());
        let mut failures = self.failures_mut();
        if error.is_permanent() {
            failures.remove(&key);
            return Action::await_change();
        }
        let count = failures.entry(key).or_insert(0);
        *count = count.saturating_add(1);
        Action::requeue(self.backoff.delay(*count))
    }

    fn failures_mut(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectRef<K>, u32>> {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `Kind namespace/name` (or `Kind name`), as logs and spans name an object.
fn describe<K: Resource>(key: &ObjectRef<K>) -> String {
    let kind = K::kind(&key.dyntype);
    match &key.namespace {
        Some(namespace) => format!("{kind} {namespace}/{}", key.name),
        None => format!("{kind} {}", key.name),
    }
}

/// Whether a change asks for a sync of a spec-driven controller: creation, a spec change (generation), or
/// the start of deletion. Karmada's controllers react to generation changes, and a deletion reaches them because
/// setting `deletionTimestamp` on an object with finalizers bumps its generation on a real kube-apiserver; a
/// filter of our own must count that start of deletion as a trigger too.
pub fn spec_changed<K: kube::Resource>(change: &Change<'_, K>) -> bool {
    match change {
        Change::Added(_) => true,
        Change::Updated { old, new } => {
            old.meta().generation != new.meta().generation
                || (old.meta().deletion_timestamp.is_none()
                    && new.meta().deletion_timestamp.is_some())
        }
        Change::Deleted(_) => false,
    }
}
