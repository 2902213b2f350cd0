//! The one loop every internal controller runs on, so that subscribing, catching up after a lag, retrying and
//! logging are written once.
//!
//! A controller says what it watches ([`Reconciler::watches`]), which keys a committed change asks work for
//! ([`Reconciler::observe`]) and which keys need work when it starts or has missed changes
//! ([`Reconciler::resync`]); [`run`] subscribes to the store's hub before the first resync (so no change falls
//! between the two), queues keys without duplicates, reconciles them one at a time in the order they were
//! asked for, and stops at shutdown.
//!
//! Guarantees: a key asked for while it waits is reconciled once; a failed reconcile is logged at `warn` with the
//! controller, the key and the error, and retried after a per-key back-off (100 ms doubling to 10 s, reset by a
//! success), unless the error is one a retry cannot mend (a request the server refuses as such: bad, forbidden,
//! invalid), which waits for a change that asks for the key again; a reconcile may ask to be run again after a delay ([`Next::After`]), the only timed wake-up, for
//! work that is due at a time rather than on a change (Event expiry); a lagged subscription resyncs instead of
//! losing changes.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use flotilla_store::ResKey;
use flotilla_store::hub::Event;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};
use tokio::time::Instant;

use crate::context::Ctx;
use crate::status::ApiError;

/// First retry delay of a failed key.
const BACKOFF_START: Duration = Duration::from_millis(100);
/// Longest retry delay of a failed key.
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// What a controller's events come from.
#[derive(Debug, Clone)]
pub enum Watches {
    /// The changes of these resources.
    Resources(Vec<ResKey>),
    /// Every committed change.
    All,
}

/// What a successful reconcile asks for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing until a change asks for the key again.
    Done,
    /// Reconcile the key again after this delay (unless a change asks for it earlier).
    After(Duration),
}

/// One internal controller: what it watches, how changes become keys, and how a key is brought to its wanted
/// state. `observe` and `resync` run on the controller's task between reconciles, so they may keep an index
/// (`&mut self`) that reconciles read.
pub trait Reconciler: Send + 'static {
    /// One unit of work: a namespace, an object, or `()` for a controller that syncs everything at once.
    type Key: Clone + Eq + Hash + Debug + Send + Sync + 'static;

    /// The controller's name, in logs.
    fn name(&self) -> &'static str;

    /// Where its changes come from.
    fn watches(&self) -> Watches;

    /// The keys that need work when the controller starts, and again after it missed changes.
    fn resync(&mut self, ctx: &Ctx) -> Vec<Self::Key>;

    /// The keys one committed change asks work for.
    fn observe(&mut self, ctx: &Ctx, event: &Event) -> Vec<Self::Key>;

    /// Whether a reconcile that failed with `error` waits for a change that asks for its key again, instead of
    /// being retried after its back-off. By default it waits when the server refused a request as malformed,
    /// forbidden, not allowed or invalid, which the same request again cannot change.
    fn waits_for_change(&self, error: &ApiError) -> bool {
        permanent(error)
    }

    /// Brings `key` to its wanted state.
    ///
    /// # Errors
    /// Whatever failed; the key is retried after its back-off (or waits, see [`Self::waits_for_change`]).
    fn reconcile(
        &self,
        ctx: &Arc<Ctx>,
        key: &Self::Key,
    ) -> impl Future<Output = Result<Next, ApiError>> + Send;
}

/// The keys waiting for a reconcile: asked-for keys in order, and keys due at a time (retries, [`Next::After`]).
struct Queue<K> {
    ready: VecDeque<K>,
    queued: HashSet<K>,
    due: BTreeMap<(Instant, u64), K>,
    due_at: HashMap<K, (Instant, u64)>,
    backoff: HashMap<K, Duration>,
    seq: u64,
}

impl<K: Clone + Eq + Hash> Queue<K> {
    fn new() -> Self {
        Self {
            ready: VecDeque::new(),
            queued: HashSet::new(),
            due: BTreeMap::new(),
            due_at: HashMap::new(),
            backoff: HashMap::new(),
            seq: 0,
        }
    }

    /// Asks for `key` now; a timed wake-up of the key is folded into it.
    fn push(&mut self, key: K) {
        if let Some(at) = self.due_at.remove(&key) {
            self.due.remove(&at);
        }
        if self.queued.insert(key.clone()) {
            self.ready.push_back(key);
        }
    }

    /// Asks for `key` at `at`, unless it is asked for earlier.
    fn push_at(&mut self, key: K, at: Instant) {
        if self.queued.contains(&key) {
            return;
        }
        if let Some(old) = self.due_at.get(&key) {
            if old.0 <= at {
                return;
            }
            self.due.remove(old);
        }
        self.seq += 1;
        self.due.insert((at, self.seq), key.clone());
        self.due_at.insert(key, (at, self.seq));
    }

    /// Moves every key due by `now` to the ready keys.
    fn promote(&mut self, now: Instant) {
        while let Some(entry) = self.due.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.due_at.remove(&key);
            if self.queued.insert(key.clone()) {
                self.ready.push_back(key);
            }
        }
    }

    fn pop(&mut self) -> Option<K> {
        let key = self.ready.pop_front()?;
        self.queued.remove(&key);
        Some(key)
    }

    /// When the next timed key is due.
    fn next_due(&self) -> Option<Instant> {
        self.due.first_key_value().map(|((at, _), _)| *at)
    }

    /// The delay before retrying `key`, which doubles with every failure in a row.
    fn failed(&mut self, key: &K) -> Duration {
        let delay = self
            .backoff
            .get(key)
            .map_or(BACKOFF_START, |d| (*d * 2).min(BACKOFF_MAX));
        self.backoff.insert(key.clone(), delay);
        delay
    }

    fn succeeded(&mut self, key: &K) {
        self.backoff.remove(key);
    }
}

/// The subscriptions of a controller: one per watched resource, or one to every change.
struct Subscriptions(Vec<broadcast::Receiver<Arc<Event>>>);

/// What the subscriptions gave.
enum Received {
    Event(Arc<Event>),
    Lagged,
    Closed,
}

impl Subscriptions {
    fn open(ctx: &Ctx, watches: &Watches) -> Self {
        let hub = ctx.store.hub();
        Self(match watches {
            Watches::All => vec![hub.subscribe_all()],
            Watches::Resources(keys) => keys.iter().map(|k| hub.subscribe(k)).collect(),
        })
    }

    async fn recv(&mut self) -> Received {
        if self.0.is_empty() {
            return std::future::pending().await;
        }
        let next = futures::future::select_all(self.0.iter_mut().map(|r| Box::pin(r.recv())));
        match next.await.0 {
            Ok(ev) => Received::Event(ev),
            Err(RecvError::Lagged(_)) => Received::Lagged,
            Err(RecvError::Closed) => Received::Closed,
        }
    }

    /// A change already waiting, without waiting for one.
    fn try_recv(&mut self) -> Option<Received> {
        for rx in &mut self.0 {
            match rx.try_recv() {
                Ok(ev) => return Some(Received::Event(ev)),
                Err(TryRecvError::Lagged(_)) => return Some(Received::Lagged),
                Err(TryRecvError::Closed) => return Some(Received::Closed),
                Err(TryRecvError::Empty) => {}
            }
        }
        None
    }
}

/// Runs `reconciler` until the server shuts down (or its store closes the hub).
pub async fn run<R: Reconciler>(ctx: Arc<Ctx>, mut reconciler: R) {
    let mut subscriptions = Subscriptions::open(&ctx, &reconciler.watches());
    let mut queue = Queue::new();
    for key in reconciler.resync(&ctx) {
        queue.push(key);
    }
    loop {
        // Take in every change already committed, so that a burst asks for each key once.
        while let Some(received) = subscriptions.try_recv() {
            if !take(&ctx, &mut reconciler, &mut queue, received) {
                return;
            }
        }
        queue.promote(Instant::now());
        if let Some(key) = queue.pop() {
            if ctx.shutdown.is_cancelled() {
                return;
            }
            match reconciler.reconcile(&ctx, &key).await {
                Ok(next) => {
                    queue.succeeded(&key);
                    if let Next::After(delay) = next {
                        queue.push_at(key, Instant::now() + delay);
                    }
                }
                Err(e) if reconciler.waits_for_change(&e) => {
                    queue.succeeded(&key);
                    tracing::warn!(
                        controller = reconciler.name(),
                        key = ?key,
                        error = %e,
                        "internal controller failed; waiting for a change"
                    );
                }
                Err(e) => {
                    let delay = queue.failed(&key);
                    tracing::warn!(
                        controller = reconciler.name(),
                        key = ?key,
                        error = %e,
                        retry_in = ?delay,
                        "internal controller failed; retrying"
                    );
                    queue.push_at(key, Instant::now() + delay);
                }
            }
            continue;
        }
        let next_due = queue.next_due();
        let received = tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            received = subscriptions.recv() => received,
            () = sleep_until(next_due) => continue,
        };
        if !take(&ctx, &mut reconciler, &mut queue, received) {
            return;
        }
    }
}

/// Reconciles every key `reconciler` resyncs once, now, logging failures: the work a server does before it
/// serves (the objects every cluster publishes), which [`run`] then keeps.
pub async fn once<R: Reconciler>(ctx: &Arc<Ctx>, reconciler: &mut R) {
    for key in reconciler.resync(ctx) {
        if let Err(e) = reconciler.reconcile(ctx, &key).await {
            tracing::warn!(controller = reconciler.name(), key = ?key, error = %e, "internal controller failed");
        }
    }
}

/// Whether retrying the same request cannot succeed: the server refused it as malformed, forbidden, not
/// allowed or invalid (a conflict, a timeout or a failing store can).
fn permanent(e: &ApiError) -> bool {
    matches!(e.code, 400 | 403 | 405 | 406 | 413 | 415 | 422)
}

/// Queues what one received change asks for; `false` once the hub closed.
fn take<R: Reconciler>(
    ctx: &Ctx,
    reconciler: &mut R,
    queue: &mut Queue<R::Key>,
    received: Received,
) -> bool {
    let keys = match received {
        Received::Event(ev) => reconciler.observe(ctx, &ev),
        Received::Lagged => {
            tracing::debug!(controller = reconciler.name(), "missed changes; resyncing");
            reconciler.resync(ctx)
        }
        Received::Closed => return false,
    };
    for key in keys {
        queue.push(key);
    }
    true
}

/// Waits until `at`, or forever without one.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
