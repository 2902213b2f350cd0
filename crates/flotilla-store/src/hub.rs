//! Fan-out of committed events to watchers, with a bounded per-resource history for resumes.
//!
//! Events are published here only after they are durable, strictly in resourceVersion order (the committer
//! is the only publisher). A resume from before the retained window is refused so the caller can answer 410.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::key::ResKey;

/// How many events each resource keeps for resumes, at most.
pub(crate) const HISTORY_PER_RESOURCE: usize = 8192;
/// How much stored JSON each resource's history holds, at most (the newest event is always kept). Every
/// retained version of an object is a whole `serde_json::Value`, several times its JSON size in memory, so
/// a count alone lets a resource of large objects (Works carry their manifests) hold hundreds of megabytes.
pub(crate) const HISTORY_BYTES_PER_RESOURCE: usize = 2 << 20;
/// Capacity of each watcher's queue; a watcher further behind is closed and must resume.
const CHANNEL_CAPACITY: usize = 4096;

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Object created.
    Added,
    /// Object changed.
    Modified,
    /// Object removed.
    Deleted,
}

impl EventType {
    /// Wire name (`ADDED`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One committed change.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub kind: EventType,
    /// The resourceVersion of the change.
    pub rv: u64,
    /// Which resource.
    pub res: ResKey,
    /// The object after the change (for deletions: the last state with the deletion RV).
    pub object: Arc<Value>,
    /// The object before the change, for selector transitions.
    pub prev: Option<Arc<Value>>,
}

struct ResHub {
    tx: broadcast::Sender<Arc<Event>>,
    history: VecDeque<Arc<Event>>,
    /// Stored size of each event in `history`, and their sum.
    sizes: VecDeque<usize>,
    bytes: usize,
    /// Every event with RV > compacted is in `history` (or not yet published).
    compacted: u64,
}

struct Inner {
    start_rv: u64,
    published: u64,
    resources: HashMap<ResKey, ResHub>,
}

/// A live receiver of one resource's events.
pub(crate) type Subscription = broadcast::Receiver<Arc<Event>>;

/// The watch hub.
pub struct Hub {
    inner: Mutex<Inner>,
    published_tx: tokio::sync::watch::Sender<u64>,
    all: broadcast::Sender<Arc<Event>>,
    history_cap: usize,
    history_bytes: usize,
}

/// A resume point older than the retained history.
#[derive(Debug, Clone, Copy)]
pub struct TooOld {
    /// The oldest RV a resume may start from.
    pub oldest: u64,
}

impl Hub {
    /// A hub for a store whose counter stood at `start_rv` when the process started.
    pub fn new(start_rv: u64) -> Self {
        Self::with_history(start_rv, HISTORY_PER_RESOURCE, HISTORY_BYTES_PER_RESOURCE)
    }

    /// A hub with a custom history size: at most `history_cap` events and `history_bytes` of stored JSON per
    /// resource (tests).
    pub fn with_history(start_rv: u64, history_cap: usize, history_bytes: usize) -> Self {
        let (all, _) = broadcast::channel(CHANNEL_CAPACITY * 4);
        let (published_tx, _) = tokio::sync::watch::channel(start_rv);
        Self {
            published_tx,
            inner: Mutex::new(Inner {
                start_rv,
                published: start_rv,
                resources: HashMap::new(),
            }),
            all,
            history_cap: history_cap.max(1),
            history_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes a committed event whose object took `bytes` in the store (called by the committer only, in
    /// RV order).
    pub fn publish(&self, ev: Arc<Event>, bytes: usize) {
        let mut inner = self.lock();
        inner.published = inner.published.max(ev.rv);
        let start = inner.start_rv;
        let hub = inner
            .resources
            .entry(ev.res.clone())
            .or_insert_with(|| new_res_hub(start));
        hub.history.push_back(ev.clone());
        hub.sizes.push_back(bytes);
        hub.bytes += bytes;
        while hub.history.len() > self.history_cap
            || (hub.bytes > self.history_bytes && hub.history.len() > 1)
        {
            if let Some(old) = hub.history.pop_front() {
                hub.compacted = old.rv;
            }
            hub.bytes -= hub.sizes.pop_front().unwrap_or(0);
        }
        let rv = ev.rv;
        let _ = hub.tx.send(ev.clone());
        let _ = self.all.send(ev);
        drop(inner);
        self.published_tx.send_replace(rv);
    }

    /// Waits until every event up to `rv` is published.
    pub async fn wait_published(&self, rv: u64) {
        let mut rx = self.published_tx.subscribe();
        let _ = rx.wait_for(|p| *p >= rv).await;
    }

    /// Subscribes to live events of `res` without replay.
    pub fn subscribe(&self, res: &ResKey) -> broadcast::Receiver<Arc<Event>> {
        let mut inner = self.lock();
        let start = inner.start_rv;
        inner
            .resources
            .entry(res.clone())
            .or_insert_with(|| new_res_hub(start))
            .tx
            .subscribe()
    }

    /// Subscribes to `res` from RV `from`: returns retained events after `from`, then the live receiver.
    pub fn subscribe_from(
        &self,
        res: &ResKey,
        from: u64,
    ) -> Result<(Vec<Arc<Event>>, Subscription), TooOld> {
        let mut inner = self.lock();
        let start = inner.start_rv;
        let hub = inner
            .resources
            .entry(res.clone())
            .or_insert_with(|| new_res_hub(start));
        if from < hub.compacted {
            return Err(TooOld {
                oldest: hub.compacted,
            });
        }
        let replay = hub
            .history
            .iter()
            .filter(|e| e.rv > from)
            .cloned()
            .collect();
        Ok((replay, hub.tx.subscribe()))
    }

    /// Retained events of `res` after `from`, newest last, or `TooOld`.
    pub fn since(&self, res: &ResKey, from: u64) -> Result<Vec<Arc<Event>>, TooOld> {
        self.subscribe_from(res, from).map(|(replay, _)| replay)
    }

    /// Every event of every resource (internal controllers).
    pub fn subscribe_all(&self) -> broadcast::Receiver<Arc<Event>> {
        self.all.subscribe()
    }

    /// RV of the last published event.
    pub fn published(&self) -> u64 {
        self.lock().published
    }
}

fn new_res_hub(start_rv: u64) -> ResHub {
    let (tx, _) = broadcast::channel(CHANNEL_CAPACITY);
    ResHub {
        tx,
        history: VecDeque::new(),
        sizes: VecDeque::new(),
        bytes: 0,
        compacted: start_rv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(rv: u64) -> Arc<Event> {
        Arc::new(Event {
            kind: EventType::Added,
            rv,
            res: ResKey::new("", "configmaps"),
            object: Arc::new(serde_json::json!({})),
            prev: None,
        })
    }

    #[test]
    fn resume_replays_and_compaction_refuses_old() {
        let hub = Hub::with_history(10, 3, usize::MAX);
        let res = ResKey::new("", "configmaps");
        assert!(hub.subscribe_from(&res, 9).is_err());
        for rv in 11..=15 {
            hub.publish(ev(rv), 1);
        }
        let (replay, _) = hub.subscribe_from(&res, 13).expect("inside window");
        assert_eq!(
            replay.iter().map(|e| e.rv).collect::<Vec<_>>(),
            vec![14, 15]
        );
        assert!(hub.subscribe_from(&res, 11).is_err());
        assert!(hub.subscribe_from(&res, 12).is_ok());
    }

    #[test]
    fn history_is_bounded_by_bytes_and_keeps_the_newest() {
        let hub = Hub::with_history(0, 100, 250);
        let res = ResKey::new("", "configmaps");
        for rv in 1..=4 {
            hub.publish(ev(rv), 100);
        }
        // 400 bytes published, 250 allowed: the two newest remain.
        assert!(hub.subscribe_from(&res, 1).is_err());
        let (replay, _) = hub.subscribe_from(&res, 2).expect("inside window");
        assert_eq!(replay.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![3, 4]);
        // One event larger than the budget still stays (a resume from just before it works).
        hub.publish(ev(5), 1000);
        assert!(hub.subscribe_from(&res, 3).is_err());
        let (replay, _) = hub.subscribe_from(&res, 4).expect("newest kept");
        assert_eq!(replay.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![5]);
    }

    #[tokio::test]
    async fn live_events_reach_subscribers() {
        let hub = Hub::new(0);
        let res = ResKey::new("", "configmaps");
        let mut rx = hub.subscribe(&res);
        hub.publish(ev(1), 1);
        assert_eq!(rx.recv().await.expect("event").rv, 1);
    }
}
