//! The embedded API server's object store: an in-memory index that serves every read, list and watch, backed
//! by the durable [`disk`] store that every acknowledged write reaches first, and the [`hub`] that fans
//! committed changes out to watchers.
//!
//! It knows objects only as JSON keyed by resource, namespace and name: nothing of kinds, requests or HTTP.
//! Its callers (the registry's write path, the server's reads and watches) turn its [`Error`]s into API
//! answers.
//!
//! Guarantees: writes are linearised under one lock that also assigns the next resourceVersion; a write's
//! response and its watch event are released only after its batch is committed to disk; events reach the
//! hub in RV order. Objects are `serde_json::Value`s keyed by (group, plural, namespace, name), kept with
//! their `managedFields` in the [`compact`] form: serialise them for clients with [`compact::Json`].
//!
//! Lock rule: the lock guards only a commit (the compare-and-swap on the resourceVersion a write was prepared
//! from, resourceVersion assignment, map update, hand-off to the committer) and the snapshot a watch starts
//! from. No code runs under it that could call back into the store: a write prepares its object beforehand,
//! with no lock held (the registry's write path). Debug builds panic on re-entry (`lock`).

pub mod commit;
pub mod compact;
pub mod disk;
pub mod hub;
mod key;
mod lock;
pub mod wal;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{broadcast, oneshot};

use crate::hub::{Event, EventType, Hub, TooOld};
use commit::{CommitStats, Committer};
use disk::{DiskError, DiskOp, Job};
use lock::StoreLock;

pub use key::{ObjKey, ObjRef, ResKey, obj_key};

/// A change to commit.
#[derive(Debug)]
pub enum Change {
    /// Store this object (create or replace); the store sets its `resourceVersion`.
    Put(Value),
    /// Remove the object.
    Delete,
}

/// What the stored object must be for a commit to apply: the compare of the compare-and-swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// No object under the key.
    Absent,
    /// The object at this resourceVersion.
    Version(u64),
}

impl Expect {
    /// What a commit prepared from `read` (the object as read, or `None`) expects.
    pub fn of(read: Option<&Value>) -> Self {
        match read {
            None => Self::Absent,
            Some(obj) => Self::Version(
                obj.pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .and_then(|rv| rv.parse().ok())
                    .unwrap_or(0),
            ),
        }
    }
}

/// Why a write did not happen.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The stored object is no longer the one the change was prepared from (the caller prepares again).
    #[error("the object changed since the write read it")]
    Conflict,
    /// A commit or checkpoint failed earlier: the in-memory state may hold writes that are not on disk, so
    /// the store takes no more until a restart replays the log.
    #[error("the store cannot persist writes (see the server log); restart the server to recover")]
    Unavailable,
    /// The change could not be persisted.
    #[error("failed to persist the write: {0}")]
    Persist(String),
    /// The store was shut down before the change was persisted.
    #[error("the store is shut down")]
    ShutDown,
    /// The committer did not take the change.
    #[error("{0}")]
    Refused(String),
}

/// The committer's answer for one queued change.
type Ack = oneshot::Receiver<Result<(), String>>;

/// Result of a write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The stored object; for deletions, the last state carrying the deletion RV.
    pub object: Arc<Value>,
    /// Whether the object did not exist before.
    pub created: bool,
    /// Whether the object was removed.
    pub deleted: bool,
}

#[derive(Default)]
struct State {
    rv: u64,
    objects: HashMap<ResKey, BTreeMap<ObjKey, Arc<Value>>>,
    uids: HashMap<String, ObjRef>,
}

/// The store.
pub struct Store {
    state: StoreLock<State>,
    committer: Mutex<Committer>,
    /// The committer's counters, readable without its lock (`failing` gates new writes).
    stats: Arc<CommitStats>,
    hub: Arc<Hub>,
}

/// Where a watch starts.
pub struct WatchStart {
    /// Synthetic initial objects (RV unset/0 or sendInitialEvents).
    pub initial: Option<Vec<Arc<Value>>>,
    /// RV of the snapshot or the resume point; live events must be newer.
    pub rv: u64,
    /// Retained events to replay.
    pub replay: Vec<Arc<Event>>,
    /// Live events.
    pub rx: broadcast::Receiver<Arc<Event>>,
}

/// Why a watch cannot start.
pub enum WatchRefused {
    /// Resume point older than the retained history.
    TooOld(u64),
    /// Resume point newer than the counter.
    TooNew(u64),
}

fn storage_key(res: &ResKey, ns: &str, name: &str) -> String {
    format!("{}\u{0}{}\u{0}{}\u{0}{}", res.group, res.plural, ns, name)
}

fn parse_key(key: &str) -> Option<(ResKey, String, String)> {
    let mut parts = key.split('\u{0}');
    let (g, p, ns, n) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    Some((ResKey::new(g, p), ns.to_string(), n.to_string()))
}

/// `metadata.uid` of an object, if any.
pub fn uid_of(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/uid").and_then(Value::as_str)
}

/// Sets `metadata.resourceVersion`.
pub fn set_rv(obj: &mut Value, rv: u64) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

impl Store {
    /// Opens the store in `dir` (`store.redb` and the write-ahead log in `wal/`), loading every object.
    pub fn open(dir: &Path) -> Result<Arc<Self>, DiskError> {
        let (durable, loaded) = disk::open(dir)?;
        let mut state = State {
            rv: loaded.rv,
            ..State::default()
        };
        for (key, mut obj) in loaded.objects {
            compact::compact(&mut obj);
            let Some((res, ns, name)) = parse_key(&key) else {
                tracing::warn!(key = %key.replace('\u{0}', "/"), "skipping stored object with a malformed key");
                continue;
            };
            if let Some(uid) = uid_of(&obj) {
                state.uids.insert(
                    uid.to_string(),
                    ObjRef {
                        res: res.clone(),
                        namespace: ns.clone(),
                        name: name.clone(),
                    },
                );
            }
            state
                .objects
                .entry(res)
                .or_default()
                .insert((ns, name), Arc::new(obj));
        }
        let hub = Arc::new(Hub::new(state.rv));
        let committer = Committer::start(durable, hub.clone());
        let stats = committer.stats().clone();
        Ok(Arc::new(Self {
            state: StoreLock::new(state),
            committer: Mutex::new(committer),
            stats,
            hub,
        }))
    }

    fn lock(&self) -> lock::Guard<'_, State> {
        self.state.lock()
    }

    /// The watch hub.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The current resourceVersion counter.
    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    /// One object.
    pub fn get(&self, res: &ResKey, ns: &str, name: &str) -> Option<Arc<Value>> {
        self.lock()
            .objects
            .get(res)?
            .get(&(ns.to_string(), name.to_string()))
            .cloned()
    }

    /// Every object of `res` (in one namespace if given), ordered by namespace then name, with the counter.
    pub fn list(&self, res: &ResKey, ns: Option<&str>) -> (u64, Vec<Arc<Value>>) {
        let state = self.lock();
        let items = match state.objects.get(res) {
            None => Vec::new(),
            Some(map) => match ns {
                None => map.values().cloned().collect(),
                Some(ns) => map
                    .range((ns.to_string(), String::new())..)
                    .take_while(|((n, _), _)| n == ns)
                    .map(|(_, v)| v.clone())
                    .collect(),
            },
        };
        (state.rv, items)
    }

    /// Namespaces that hold at least one object of `res`.
    pub fn count(&self, res: &ResKey, ns: &str) -> usize {
        self.list(res, Some(ns)).1.len()
    }

    /// Finds an object by uid.
    pub fn by_uid(&self, uid: &str) -> Option<ObjRef> {
        self.lock().uids.get(uid).cloned()
    }

    /// Every stored object with its reference (internal controllers' resync).
    pub fn all_objects(&self) -> Vec<(ObjRef, Arc<Value>)> {
        let state = self.lock();
        let mut out = Vec::new();
        for (res, map) in &state.objects {
            for ((ns, name), obj) in map {
                out.push((
                    ObjRef {
                        res: res.clone(),
                        namespace: ns.clone(),
                        name: name.clone(),
                    },
                    obj.clone(),
                ));
            }
        }
        out
    }

    /// Refuses writes once a commit or checkpoint has failed: the in-memory state may then hold writes that
    /// are not on disk, so nothing more is built on it until a restart replays the log.
    ///
    /// # Errors
    /// [`Error::Unavailable`] while the durable store is failing.
    pub fn writable(&self) -> Result<(), Error> {
        if self
            .stats
            .failing
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(Error::Unavailable);
        }
        Ok(())
    }

    /// Commits `change` to the object under (`res`, `ns`, `name`) if it is still as `expect` says (the
    /// compare-and-swap of an optimistic write), and returns once the change is on disk.
    ///
    /// Under the lock this only checks the precondition, takes the next resourceVersion, updates the maps and
    /// queues the change for the committer, which logs changes and publishes their events in the order they
    /// were queued, that is in resourceVersion order. Everything a write prepares (decoding, admission,
    /// validation, managed fields) happens before, in the registry's write path, with no lock held.
    ///
    /// # Errors
    /// [`Error::Conflict`] when the object is no longer the one `expect` names (the caller prepares again from
    /// the new one); [`Error::Unavailable`] once the durable store is failing; [`Error::Persist`],
    /// [`Error::ShutDown`] or [`Error::Refused`] when the change cannot be persisted.
    pub async fn commit(
        &self,
        res: &ResKey,
        ns: &str,
        name: &str,
        expect: Expect,
        change: Change,
    ) -> Result<Written, Error> {
        self.writable()?;
        let (written, ack) = self.apply(res, ns, name, expect, change)?;
        match ack.await {
            Ok(Ok(())) => Ok(written),
            Ok(Err(e)) => Err(Error::Persist(e)),
            Err(_) => Err(Error::ShutDown),
        }
    }

    /// The locked part of [`Store::commit`]: check, assign, store, queue.
    fn apply(
        &self,
        res: &ResKey,
        ns: &str,
        name: &str,
        expect: Expect,
        change: Change,
    ) -> Result<(Written, Ack), Error> {
        // What needs no lock is done first: the stored form and the disk key.
        let change = match change {
            Change::Put(mut obj) => {
                compact::compact(&mut obj);
                Change::Put(obj)
            }
            Change::Delete => Change::Delete,
        };
        let disk_key = storage_key(res, ns, name);
        let r = ObjRef {
            res: res.clone(),
            namespace: ns.to_string(),
            name: name.to_string(),
        };
        let key = (r.namespace.clone(), r.name.clone());
        let mut state = self.lock();
        let current = state.objects.get(res).and_then(|m| m.get(&key)).cloned();
        if Expect::of(current.as_deref()) != expect {
            return Err(Error::Conflict);
        }
        let rv = state.rv + 1;
        let (written, kind, object, op) = match change {
            Change::Put(mut obj) => {
                set_rv(&mut obj, rv);
                let obj = Arc::new(obj);
                let created = current.is_none();
                if let Some(old_uid) = current.as_deref().and_then(uid_of) {
                    state.uids.remove(old_uid);
                }
                if let Some(uid) = uid_of(&obj) {
                    state.uids.insert(uid.to_string(), r);
                }
                state
                    .objects
                    .entry(res.clone())
                    .or_default()
                    .insert(key, obj.clone());
                let kind = if created {
                    EventType::Added
                } else {
                    EventType::Modified
                };
                let op = DiskOp::Put {
                    key: disk_key,
                    object: obj.clone(),
                };
                let written = Written {
                    object: obj.clone(),
                    created,
                    deleted: false,
                };
                (written, kind, obj, op)
            }
            Change::Delete => {
                let Some(cur) = current.as_ref() else {
                    // `Expect::of(None)` is `Absent`: a delete expecting an existing object never gets here.
                    return Err(Error::Conflict);
                };
                let mut last = cur.as_ref().clone();
                set_rv(&mut last, rv);
                let last = Arc::new(last);
                if let Some(m) = state.objects.get_mut(res) {
                    m.remove(&key);
                }
                if let Some(uid) = uid_of(cur) {
                    state.uids.remove(uid);
                }
                let written = Written {
                    object: last.clone(),
                    created: false,
                    deleted: true,
                };
                let op = DiskOp::Delete { key: disk_key };
                (written, EventType::Deleted, last, op)
            }
        };
        let ev = Event {
            kind,
            rv,
            res: res.clone(),
            object,
            prev: current,
        };
        state.rv = rv;
        let ack = self.enqueue(op, rv, ev)?;
        Ok((written, ack))
    }

    fn enqueue(&self, op: DiskOp, rv: u64, ev: Event) -> Result<Ack, Error> {
        let (tx, rx) = oneshot::channel();
        let job = Job {
            ops: vec![op],
            rv,
            events: vec![Arc::new(ev)],
            ack: Some(tx),
        };
        self.committer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .map_err(|e| Error::Refused(e.to_string()))?;
        Ok(rx)
    }

    /// Starts a watch on `res`: from a fresh snapshot (`from == None`) or from a resume RV.
    pub fn watch(
        &self,
        res: &ResKey,
        ns: Option<&str>,
        from: Option<u64>,
    ) -> Result<WatchStart, WatchRefused> {
        match from {
            None => {
                // Holding the state lock while subscribing: no event newer than the snapshot can be
                // published before the receiver exists, because RVs are only assigned under this lock.
                let state = self.lock();
                let items = match state.objects.get(res) {
                    None => Vec::new(),
                    Some(map) => map
                        .iter()
                        .filter(|((n, _), _)| ns.is_none_or(|ns| ns == n))
                        .map(|(_, v)| v.clone())
                        .collect(),
                };
                let rx = self.hub.subscribe(res);
                Ok(WatchStart {
                    initial: Some(items),
                    rv: state.rv,
                    replay: Vec::new(),
                    rx,
                })
            }
            Some(rv) => {
                let current = self.current_rv();
                if rv > current {
                    return Err(WatchRefused::TooNew(current));
                }
                match self.hub.subscribe_from(res, rv) {
                    Ok((replay, rx)) => Ok(WatchStart {
                        initial: None,
                        rv,
                        replay,
                        rx,
                    }),
                    Err(TooOld { oldest }) => Err(WatchRefused::TooOld(oldest)),
                }
            }
        }
    }

    /// The objects of `res` (in `ns` if given) as they were at RV `at`, rebuilt from the current state and
    /// the retained history; `TooOld` when the history no longer reaches back that far.
    pub async fn snapshot(
        &self,
        res: &ResKey,
        ns: Option<&str>,
        at: u64,
    ) -> Result<Vec<Arc<Value>>, TooOld> {
        let (current, items) = self.list(res, ns);
        if at >= current {
            return Ok(items);
        }
        self.hub.wait_published(current).await;
        let events = self.hub.since(res, at)?;
        let mut map: BTreeMap<ObjKey, Arc<Value>> =
            items.into_iter().map(|o| (obj_key(&o), o)).collect();
        for ev in events.iter().rev().filter(|e| e.rv <= current) {
            let key = obj_key(&ev.object);
            match (ev.kind, &ev.prev) {
                (EventType::Added, _) | (_, None) => {
                    map.remove(&key);
                }
                (_, Some(prev)) => {
                    map.insert(key, prev.clone());
                }
            }
        }
        Ok(map
            .into_iter()
            .filter(|((n, _), _)| ns.is_none_or(|ns| ns == n))
            .map(|(_, v)| v)
            .collect())
    }

    /// The committer's counters (commits, writes, time spent committing).
    pub fn commit_stats(&self) -> Arc<CommitStats> {
        self.stats.clone()
    }

    /// Whether the durable store accepts commits (for `/healthz`, `/livez` and `/readyz`).
    pub fn healthy(&self) -> bool {
        self.committer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .healthy()
    }

    /// Stops the committer after flushing every queued write.
    pub fn shutdown(&self) {
        self.committer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .shutdown();
    }
}

#[cfg(test)]
mod tests;
