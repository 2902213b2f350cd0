//! A deduplicating work queue with delayed adds and per-key exponential backoff, in the manner of client-go's
//! rate-limited work queue.
//!
//! Guarantees: a key is handed to at most one worker at a time; a key added while it is being processed is
//! processed again once, after the current run ends; adding a key that is already waiting does nothing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

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

struct State<K> {
    ready: VecDeque<K>,
    queued: HashSet<K>,
    processing: HashSet<K>,
    dirty: HashSet<K>,
    /// Keys whose coalescing window is open (see [`Queue::add_coalesced`]).
    gathering: HashSet<K>,
    failures: HashMap<K, u32>,
    closed: bool,
}

/// The work queue of one controller.
pub struct Queue<K> {
    state: Mutex<State<K>>,
    notify: Notify,
    backoff: Backoff,
}

impl<K: Clone + Eq + Hash + Send + Sync + 'static> Queue<K> {
    /// An empty queue.
    pub fn new(backoff: Backoff) -> Arc<Self> {
        Arc::new(Queue {
            state: Mutex::new(State {
                ready: VecDeque::new(),
                queued: HashSet::new(),
                processing: HashSet::new(),
                dirty: HashSet::new(),
                gathering: HashSet::new(),
                failures: HashMap::new(),
                closed: false,
            }),
            notify: Notify::new(),
            backoff,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        // A panic while holding this lock cannot leave the sets inconsistent in a way that matters more than
        // losing the queue, so keep going with the inner value.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds `key` now.
    pub fn add(&self, key: K) {
        let mut state = self.lock();
        if state.closed || state.queued.contains(&key) {
            return;
        }
        if state.processing.contains(&key) {
            state.dirty.insert(key);
            return;
        }
        state.queued.insert(key.clone());
        state.ready.push_back(key);
        drop(state);
        self.notify.notify_one();
    }

    /// Adds `key` after `delay`.
    pub fn add_after(self: &Arc<Self>, key: K, delay: Duration) {
        if delay.is_zero() {
            self.add(key);
            return;
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Some(queue) = weak.upgrade() {
                queue.add(key);
            }
        });
    }

    /// Adds `key` once `window` has passed since the first of a burst of such adds: every add of the key
    /// meanwhile (and any add while it already waits) folds into that one run. Level-triggered reconciles then
    /// see a burst of changes at once and write their result once instead of once per change.
    pub fn add_coalesced(self: &Arc<Self>, key: K, window: Duration) {
        {
            let mut state = self.lock();
            if state.closed || state.queued.contains(&key) || !state.gathering.insert(key.clone()) {
                return;
            }
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(window).await;
            if let Some(queue) = weak.upgrade() {
                queue.lock().gathering.remove(&key);
                queue.add(key);
            }
        });
    }

    /// Adds `key` after the backoff its consecutive failures earned, and counts one more failure.
    pub fn add_with_backoff(self: &Arc<Self>, key: K) -> Duration {
        let delay = {
            let mut state = self.lock();
            let failures = state.failures.entry(key.clone()).or_insert(0);
            *failures = failures.saturating_add(1);
            self.backoff.delay(*failures)
        };
        self.add_after(key, delay);
        delay
    }

    /// Forgets the failures of `key` (after a success).
    pub fn forget(&self, key: &K) {
        self.lock().failures.remove(key);
    }

    /// Waits for the next key; `None` once the queue is closed.
    pub async fn next(&self) -> Option<K> {
        loop {
            // Register as a waiter before looking, so an add or close between the look and the wait is seen.
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.lock();
                if state.closed {
                    return None;
                }
                if let Some(key) = state.ready.pop_front() {
                    state.queued.remove(&key);
                    state.processing.insert(key.clone());
                    return Some(key);
                }
            }
            notified.await;
        }
    }

    /// Marks `key` processed; if it was added meanwhile it becomes ready again.
    pub fn done(&self, key: &K) {
        let mut state = self.lock();
        state.processing.remove(key);
        if state.dirty.remove(key) && !state.closed && state.queued.insert(key.clone()) {
            state.ready.push_back(key.clone());
            drop(state);
            self.notify.notify_one();
        }
    }

    /// Stops handing out keys; workers finish their current key and exit.
    pub fn close(&self) {
        self.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// Keys waiting to be processed.
    pub fn len(&self) -> usize {
        self.lock().ready.len()
    }

    /// Whether no key is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let backoff = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        assert_eq!(backoff.delay(1), Duration::from_millis(100));
        assert_eq!(backoff.delay(2), Duration::from_millis(200));
        assert_eq!(backoff.delay(4), Duration::from_millis(800));
        assert_eq!(backoff.delay(5), Duration::from_secs(1));
        assert_eq!(backoff.delay(100), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn duplicate_adds_collapse_and_adds_while_processing_rerun_once() {
        let queue = Queue::new(Backoff::default());
        queue.add("a");
        queue.add("a");
        queue.add("b");
        assert_eq!(queue.len(), 2);
        let first = queue.next().await.unwrap();
        assert_eq!(first, "a");
        // Added while processing: not handed out concurrently, but once more after done.
        queue.add("a");
        queue.add("a");
        assert_eq!(queue.next().await.unwrap(), "b");
        queue.done(&"b");
        assert!(queue.is_empty());
        queue.done(&"a");
        assert_eq!(queue.next().await.unwrap(), "a");
        queue.done(&"a");
        assert!(queue.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_and_backed_off_keys_arrive_later() {
        let queue = Queue::new(Backoff {
            base: Duration::from_secs(1),
            max: Duration::from_secs(8),
        });
        queue.add_after("late", Duration::from_secs(5));
        assert!(queue.is_empty());
        assert_eq!(queue.add_with_backoff("fail"), Duration::from_secs(1));
        assert_eq!(queue.next().await.unwrap(), "fail");
        queue.done(&"fail");
        assert_eq!(queue.add_with_backoff("fail"), Duration::from_secs(2));
        queue.forget(&"fail");
        assert_eq!(queue.add_with_backoff("fail"), Duration::from_secs(1));
        let start = tokio::time::Instant::now();
        assert_eq!(queue.next().await.unwrap(), "fail");
        queue.done(&"fail");
        assert_eq!(queue.next().await.unwrap(), "fail");
        queue.done(&"fail");
        assert_eq!(queue.next().await.unwrap(), "late");
        assert!(start.elapsed() >= Duration::from_secs(4));
    }

    #[tokio::test(start_paused = true)]
    async fn coalesced_adds_fold_into_one_run_after_the_window() {
        let queue = Queue::new(Backoff::default());
        let window = Duration::from_millis(300);
        let start = tokio::time::Instant::now();
        queue.add_coalesced("a", window);
        tokio::time::sleep(Duration::from_millis(100)).await;
        queue.add_coalesced("a", window);
        assert!(queue.is_empty());
        assert_eq!(queue.next().await.unwrap(), "a");
        assert!(start.elapsed() >= window);
        queue.done(&"a");
        // The burst produced one run; a later add opens a new window.
        assert!(queue.is_empty());
        queue.add_coalesced("a", window);
        let again = tokio::time::Instant::now();
        assert_eq!(queue.next().await.unwrap(), "a");
        assert!(again.elapsed() >= window);
    }

    #[tokio::test]
    async fn close_releases_waiting_workers() {
        let queue: Arc<Queue<u32>> = Queue::new(Backoff::default());
        let waiter = tokio::spawn({
            let queue = queue.clone();
            async move { queue.next().await }
        });
        tokio::task::yield_now().await;
        queue.close();
        assert_eq!(waiter.await.unwrap(), None);
    }
}
