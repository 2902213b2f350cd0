//! The scheduler's queue. With `PriorityBasedScheduling` (Karmada's default since v1.19) it is Karmada's
//! priority queue: an active queue ordered by the binding's `spec.schedulePriority.priority` (higher first,
//! first-in first-out among equals), a backoff queue for failed attempts (1 s doubling to 10 s per binding) and
//! an unschedulable queue for `Unschedulable` results, flushed back to the active queue after at most 5
//! minutes. Without the gate it is Karmada's legacy queue ([`QueueTiming::rate_limited`]): first-in first-out
//! whatever the priority, and every failure waits out the default controller rate limiter.
//!
//! Guarantees: a key is handed to at most one worker at a time; a key is in at most one of the three queues;
//! adding a key (a binding or cluster event) moves it from the backoff or unschedulable queue to the active
//! queue at once, and a key added while it is being processed is processed again once, after the current run.
//! A key already waiting in the active queue keeps its place and priority when added again, as Karmada's
//! active queue ignores a push of a key it holds.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use governor::clock::Clock;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::error::Error;

/// Delays of the queue; [`Default`] gives Karmada's priority queue's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueTiming {
    /// Backoff after the first failure.
    pub initial_backoff: Duration,
    /// Longest backoff.
    pub max_backoff: Duration,
    /// Longest stay in the unschedulable queue.
    pub max_unschedulable: Duration,
    /// Whether the active queue orders by priority and `Unschedulable` results wait in their own queue; without,
    /// the queue is first-in first-out and every failure backs off, also limited by an overall token bucket.
    pub prioritised: bool,
}

impl Default for QueueTiming {
    fn default() -> Self {
        QueueTiming {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(10),
            max_unschedulable: Duration::from_secs(5 * 60),
            prioritised: true,
        }
    }
}

/// Retries per second the legacy queue's token bucket refills, and its size (Karmada's
/// `--rate-limiter-qps` and `--rate-limiter-bucket-size` defaults).
const LEGACY_QPS: u32 = 10;
const LEGACY_BURST: u32 = 100;

impl QueueTiming {
    /// The queue without `PriorityBasedScheduling`: Karmada's default controller rate limiter, a per-key backoff
    /// from 5 ms doubling to 1000 s (`--rate-limiter-base-delay`, `--rate-limiter-max-delay`), the longer of it
    /// and the token bucket's wait.
    pub(crate) fn rate_limited() -> Self {
        QueueTiming {
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_secs(1000),
            max_unschedulable: Duration::from_secs(1000),
            prioritised: false,
        }
    }

    /// The queue `PriorityBasedScheduling` asks for.
    pub(crate) fn for_gate(priority_based: bool) -> Self {
        if priority_based {
            QueueTiming::default()
        } else {
            QueueTiming::rate_limited()
        }
    }

    /// The backoff after `failures` consecutive failures (1 = first failure).
    pub(crate) fn backoff(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(31);
        self.initial_backoff
            .saturating_mul(1u32 << exponent)
            .min(self.max_backoff)
    }
}

/// Where a failed attempt goes (Karmada's `handleErr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Dropped: the namespace is terminating, or the error waits for a change to the object.
    Drop,
    /// The backoff queue.
    Backoff,
    /// The unschedulable queue (not enough capacity anywhere).
    Unschedulable,
}

/// Classifies a failed scheduling attempt.
pub(crate) fn retry_of(error: &Error) -> Retry {
    match error {
        Error::Kube {
            source: kube::Error::Api(status),
            ..
        } if status.details.as_ref().is_some_and(|details| {
            details
                .causes
                .iter()
                .any(|cause| cause.reason == "NamespaceTerminating")
        }) =>
        {
            Retry::Drop
        }
        Error::Schedule { reason, .. }
            if *reason == flotilla_api::names::conditions::REASON_UNSCHEDULABLE =>
        {
            Retry::Unschedulable
        }
        other if other.is_permanent() => Retry::Drop,
        _ => Retry::Backoff,
    }
}

struct State<K> {
    /// Active keys by (higher priority first, arrival order).
    active: BTreeMap<(Reverse<i32>, u64), K>,
    /// Position of each active key in `active`.
    active_keys: HashMap<K, (Reverse<i32>, u64)>,
    /// Backing-off keys: priority and when they become active.
    backoff: HashMap<K, (i32, Instant)>,
    /// Unschedulable keys: priority and when they become active at the latest.
    unschedulable: HashMap<K, (i32, Instant)>,
    processing: HashSet<K>,
    /// Keys added while processing, with the priority of the latest add.
    dirty: HashMap<K, i32>,
    failures: HashMap<K, u32>,
    sequence: u64,
    closed: bool,
}

impl<K: Clone + Eq + Hash> State<K> {
    fn push_active(&mut self, key: K, priority: i32) {
        if self.active_keys.contains_key(&key) {
            return;
        }
        self.sequence += 1;
        let position = (Reverse(priority), self.sequence);
        self.active_keys.insert(key.clone(), position);
        self.active.insert(position, key);
    }

    /// Moves the keys whose wait is over to the active queue; returns the next time one will be.
    fn flush_due(&mut self, now: Instant) -> Option<Instant> {
        let mut due: Vec<(Instant, K, i32)> = Vec::new();
        let mut next: Option<Instant> = None;
        for waiting in [&mut self.backoff, &mut self.unschedulable] {
            waiting.retain(|key, (priority, at)| {
                if *at <= now {
                    due.push((*at, key.clone(), *priority));
                    false
                } else {
                    next = Some(next.map_or(*at, |n| n.min(*at)));
                    true
                }
            });
        }
        // Those that became due first go first among equal priorities.
        due.sort_by_key(|(at, _, _)| *at);
        for (_, key, priority) in due {
            self.push_active(key, priority);
        }
        next
    }
}

/// The scheduler's queue.
pub(crate) struct SchedulingQueue<K> {
    state: Mutex<State<K>>,
    notify: Notify,
    timing: QueueTiming,
    /// The legacy queue's overall retry budget (none with priorities).
    bucket: Option<DefaultDirectRateLimiter>,
}

impl<K: Clone + Eq + Hash> SchedulingQueue<K> {
    /// An empty queue.
    pub(crate) fn new(timing: QueueTiming) -> Self {
        SchedulingQueue {
            state: Mutex::new(State {
                active: BTreeMap::new(),
                active_keys: HashMap::new(),
                backoff: HashMap::new(),
                unschedulable: HashMap::new(),
                processing: HashSet::new(),
                dirty: HashMap::new(),
                failures: HashMap::new(),
                sequence: 0,
                closed: false,
            }),
            notify: Notify::new(),
            timing,
            bucket: (!timing.prioritised).then(|| {
                let qps = NonZeroU32::new(LEGACY_QPS).unwrap_or(NonZeroU32::MIN);
                let burst = NonZeroU32::new(LEGACY_BURST).unwrap_or(NonZeroU32::MIN);
                RateLimiter::direct(Quota::per_second(qps).allow_burst(burst))
            }),
        }
    }

    /// The priority a key is ordered by: its own, or the same for all in the legacy queue.
    fn ordered_by(&self, priority: i32) -> i32 {
        if self.timing.prioritised { priority } else { 0 }
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        // The maps stay consistent between statements, so a panic elsewhere does not poison them in any way
        // that matters more than losing the queue.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `key` to the active queue with `priority` (leaving the backoff or unschedulable queue).
    pub(crate) fn add(&self, key: K, priority: i32) {
        let priority = self.ordered_by(priority);
        let mut state = self.lock();
        if state.closed {
            return;
        }
        if state.processing.contains(&key) {
            // The first add while processing decides, as later ones find the key already queued.
            state.dirty.entry(key).or_insert(priority);
            return;
        }
        state.backoff.remove(&key);
        state.unschedulable.remove(&key);
        state.push_active(key, priority);
        drop(state);
        self.notify.notify_one();
    }

    /// Puts `key` (being processed) in the backoff queue for the delay its consecutive failures earned;
    /// returns the delay.
    pub(crate) fn add_backoff(&self, key: K, priority: i32) -> Duration {
        let priority = self.ordered_by(priority);
        let mut state = self.lock();
        let failures = state.failures.entry(key.clone()).or_insert(0);
        *failures = failures.saturating_add(1);
        let mut delay = self.timing.backoff(*failures);
        if let Some(bucket) = &self.bucket
            && let Err(not_until) = bucket.check()
        {
            delay = delay.max(not_until.wait_time_from(Clock::now(bucket.clock())));
        }
        if !state.closed && !state.active_keys.contains_key(&key) {
            state.unschedulable.remove(&key);
            state
                .backoff
                .insert(key, (priority, Instant::now() + delay));
        }
        drop(state);
        // A waiting worker may now have an earlier deadline.
        self.notify.notify_waiters();
        delay
    }

    /// Puts `key` (being processed) in the unschedulable queue; the legacy queue has none and backs off.
    pub(crate) fn add_unschedulable(&self, key: K, priority: i32) {
        if !self.timing.prioritised {
            self.add_backoff(key, priority);
            return;
        }
        let mut state = self.lock();
        if !state.closed && !state.active_keys.contains_key(&key) {
            state.backoff.remove(&key);
            let until = Instant::now() + self.timing.max_unschedulable;
            state.unschedulable.insert(key, (priority, until));
        }
        drop(state);
        self.notify.notify_waiters();
    }

    /// Moves every unschedulable key to the active queue.
    // Karmada flushes the whole unschedulable queue on a Cluster event; the controller requeues only the bindings
    // a change can affect, so only the tests flush.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the tests flush the whole queue")
    )]
    pub(crate) fn flush_unschedulable(&self) {
        let mut state = self.lock();
        let mut waiting: Vec<_> = state.unschedulable.drain().collect();
        waiting.sort_by_key(|(_, (_, at))| *at);
        for (key, (priority, _)) in waiting {
            state.push_active(key, priority);
        }
        drop(state);
        self.notify.notify_waiters();
    }

    /// Forgets the failures of `key` (after a success or a dropped error).
    pub(crate) fn forget(&self, key: &K) {
        self.lock().failures.remove(key);
    }

    /// Waits for the next key; `None` once the queue is closed.
    pub(crate) async fn next(&self) -> Option<K> {
        loop {
            // Register as a waiter before looking, so an add or close between the look and the wait is seen.
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let deadline = {
                let mut state = self.lock();
                if state.closed {
                    return None;
                }
                let deadline = state.flush_due(Instant::now());
                if let Some((_, key)) = state.active.pop_first() {
                    state.active_keys.remove(&key);
                    state.processing.insert(key.clone());
                    return Some(key);
                }
                deadline
            };
            match deadline {
                Some(at) => {
                    tokio::select! {
                        () = notified => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Marks `key` processed; if it was added meanwhile it becomes active again.
    pub(crate) fn done(&self, key: &K) {
        let mut state = self.lock();
        state.processing.remove(key);
        if let Some(priority) = state.dirty.remove(key)
            && !state.closed
        {
            state.backoff.remove(key);
            state.unschedulable.remove(key);
            state.push_active(key.clone(), priority);
            drop(state);
            self.notify.notify_one();
        }
    }

    /// Stops handing out keys; workers finish their current key and exit.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// Keys in the active queue.
    pub(crate) fn len(&self) -> usize {
        self.lock().active.len()
    }

    /// Whether the active queue is empty.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the controller reads only the length")
    )]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
