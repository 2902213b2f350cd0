//! The durable half of the store: redb with group commit.
//!
//! One committer thread drains every queued write, commits them in one transaction with immediate
//! durability, and only then publishes their watch events and acknowledges them. Concurrent writers thus
//! share one fsync, which is how durability costs little throughput.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::watch::hub::{Event, Hub};

const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const RV_KEY: &str = "resourceVersion";
/// Upper bound on writes folded into one transaction.
const MAX_BATCH: usize = 4096;

/// Errors of the durable store.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// Opening or creating the database failed.
    #[error("failed to open the store at {path}")]
    Open {
        /// Database file.
        path: String,
        /// Cause.
        #[source]
        source: redb::DatabaseError,
    },
    /// Reading the stored objects failed.
    #[error("failed to load stored objects")]
    Load(#[source] redb::Error),
    /// A stored object is not valid JSON.
    #[error("failed to decode stored object {key}")]
    Decode {
        /// Storage key.
        key: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Committing a batch failed.
    #[error("failed to commit writes: {0}")]
    Commit(String),
    /// The committer thread is gone.
    #[error("the store is shut down")]
    Closed,
}

/// One change to persist.
pub enum DiskOp {
    /// Insert or replace.
    Put {
        /// Storage key.
        key: String,
        /// Object to store.
        object: Arc<Value>,
    },
    /// Remove.
    Delete {
        /// Storage key.
        key: String,
    },
}

/// A queued write: its ops, its RV, the events to publish after commit and who to tell.
pub struct Job {
    /// Changes.
    pub ops: Vec<DiskOp>,
    /// RV of the write.
    pub rv: u64,
    /// Events published once durable.
    pub events: Vec<Arc<Event>>,
    /// Acknowledgement.
    pub ack: Option<oneshot::Sender<Result<(), String>>>,
}

/// Everything loaded from disk at start.
pub struct Loaded {
    /// The counter.
    pub rv: u64,
    /// (key, object) pairs.
    pub objects: Vec<(String, Value)>,
}

/// Opens (or creates) the database and loads its content.
pub fn open(path: &Path) -> Result<(Arc<Database>, Loaded), DiskError> {
    let db = Database::builder()
        // The in-memory index serves reads; redb's cache only needs to cover the write path.
        .set_cache_size(16 * 1024 * 1024)
        .create(path)
        .map_err(|source| DiskError::Open {
            path: path.display().to_string(),
            source,
        })?;
    let loaded = load(&db)?;
    Ok((Arc::new(db), loaded))
}

fn load(db: &Database) -> Result<Loaded, DiskError> {
    let err = |e: redb::Error| DiskError::Load(e);
    // Make sure both tables exist so a fresh database reads as empty.
    let txn = db.begin_write().map_err(|e| err(e.into()))?;
    {
        txn.open_table(OBJECTS).map_err(|e| err(e.into()))?;
        txn.open_table(META).map_err(|e| err(e.into()))?;
    }
    txn.commit().map_err(|e| err(e.into()))?;
    let read = db.begin_read().map_err(|e| err(e.into()))?;
    let meta = read.open_table(META).map_err(|e| err(e.into()))?;
    let rv = meta
        .get(RV_KEY)
        .map_err(|e| err(e.into()))?
        .map(|v| v.value())
        .unwrap_or(0);
    let table = read.open_table(OBJECTS).map_err(|e| err(e.into()))?;
    let mut objects = Vec::new();
    for entry in table.iter().map_err(|e| err(e.into()))? {
        let (k, v) = entry.map_err(|e| err(e.into()))?;
        let key = k.value().to_string();
        let obj: Value = serde_json::from_slice(v.value()).map_err(|source| DiskError::Decode {
            key: key.clone(),
            source,
        })?;
        objects.push((key, obj));
    }
    Ok(Loaded { rv, objects })
}

/// Handle to the committer thread.
pub struct Committer {
    tx: mpsc::UnboundedSender<Job>,
    thread: Option<JoinHandle<()>>,
}

impl Committer {
    /// Starts the committer thread.
    pub fn start(db: Arc<Database>, hub: Arc<Hub>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let thread = std::thread::Builder::new()
            .name("flotilla-store-commit".into())
            .spawn(move || run(db, hub, rx))
            .ok();
        Self { tx, thread }
    }

    /// Queues a job; fails when the committer has stopped.
    pub fn send(&self, job: Job) -> Result<(), DiskError> {
        self.tx.send(job).map_err(|_| DiskError::Closed)
    }

    /// Stops accepting writes and waits until everything queued is committed.
    pub fn shutdown(&mut self) {
        // Closing the channel ends the thread's loop after it has drained the queue.
        let (tx, _) = mpsc::unbounded_channel();
        drop(std::mem::replace(&mut self.tx, tx));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(db: Arc<Database>, hub: Arc<Hub>, mut rx: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = rx.blocking_recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        let result = commit(&db, &jobs).map_err(|e| e.to_string());
        if let Err(e) = &result {
            tracing::error!(error = %e, "store commit failed; writes are not acknowledged");
        }
        for job in jobs {
            if result.is_ok() {
                for ev in job.events {
                    hub.publish(ev);
                }
            }
            if let Some(ack) = job.ack {
                let _ = ack.send(result.clone());
            }
        }
    }
}

fn commit(db: &Database, jobs: &[Job]) -> Result<(), redb::Error> {
    let mut txn = db.begin_write()?;
    txn.set_durability(Durability::Immediate)?;
    {
        let mut table = txn.open_table(OBJECTS)?;
        let mut max_rv = 0;
        for job in jobs {
            max_rv = max_rv.max(job.rv);
            for op in &job.ops {
                match op {
                    DiskOp::Put { key, object } => {
                        let bytes = serde_json::to_vec(object.as_ref()).unwrap_or_default();
                        table.insert(key.as_str(), bytes.as_slice())?;
                    }
                    DiskOp::Delete { key } => {
                        table.remove(key.as_str())?;
                    }
                }
            }
        }
        if max_rv > 0 {
            let mut meta = txn.open_table(META)?;
            meta.insert(RV_KEY, max_rv)?;
        }
    }
    txn.commit()?;
    Ok(())
}
