//! The durable half of the store: redb with group commit.
//!
//! One committer thread drains every queued write, commits them in one transaction with immediate
//! durability, and only then publishes their watch events and acknowledges them. Concurrent writers thus
//! share one flush, which is how durability costs little throughput. redb's default one-phase commit issues
//! exactly one `fdatasync` per transaction (checksummed pages, then the header), so a transaction costs one
//! flush of the disk. When recent batches showed concurrent writers, the committer waits up to a third of a
//! flush (at most 1 ms) for as many to come back before it commits, so batches stay as large as the concurrency.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::watch::hub::{Event, Hub};

const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const RV_KEY: &str = "resourceVersion";
/// Upper bound on writes folded into one transaction.
const MAX_BATCH: usize = 4096;
/// Longest wait for writers to join a batch.
const MAX_GATHER: Duration = Duration::from_millis(1);

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

/// Counters of the committer, for benchmarks and metrics.
#[derive(Debug, Default)]
pub struct CommitStats {
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Writes those transactions carried.
    pub writes: AtomicU64,
    /// Time spent committing (including the flush), in microseconds.
    pub commit_micros: AtomicU64,
    /// Whether the last commit failed (the store is then unhealthy until one succeeds).
    pub failing: AtomicBool,
}

/// Handle to the committer thread.
pub struct Committer {
    tx: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<CommitStats>,
}

impl Committer {
    /// Starts the committer thread.
    pub fn start(db: Arc<Database>, hub: Arc<Hub>) -> Self {
        let (tx, rx) = mpsc::channel();
        let stats = Arc::new(CommitStats::default());
        let thread_stats = stats.clone();
        let thread = std::thread::Builder::new()
            .name("flotilla-store-commit".into())
            .spawn(move || run(&db, &hub, &rx, &thread_stats))
            .ok();
        Self {
            tx: Some(tx),
            thread,
            stats,
        }
    }

    /// Queues a job; fails when the committer has stopped.
    pub fn send(&self, job: Job) -> Result<(), DiskError> {
        self.tx
            .as_ref()
            .ok_or(DiskError::Closed)?
            .send(job)
            .map_err(|_| DiskError::Closed)
    }

    /// The committer's counters.
    pub fn stats(&self) -> &Arc<CommitStats> {
        &self.stats
    }

    /// Whether writes can be committed: the thread runs and the last commit succeeded.
    pub fn healthy(&self) -> bool {
        self.tx.is_some()
            && self.thread.as_ref().is_some_and(|t| !t.is_finished())
            && !self.stats.failing.load(Ordering::Relaxed)
    }

    /// Stops accepting writes and waits until everything queued is committed.
    pub fn shutdown(&mut self) {
        // Closing the channel ends the thread's loop after it has drained the queue.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Collects the next batch: everything queued, and, when the previous batch showed concurrent writers, a short
/// wait for them to come back. Clients that wait for their acknowledgement before writing again arrive a few
/// hundred microseconds apart after each commit; without the wait the committer would flush the first arrival
/// alone and make the others wait a whole flush for the next one.
fn gather(rx: &mpsc::Receiver<Job>, first: Job, expected: usize, window: Duration) -> Vec<Job> {
    let mut jobs = vec![first];
    let deadline = Instant::now() + window;
    while jobs.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(j) => {
                jobs.push(j);
                continue;
            }
            Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let now = Instant::now();
        if jobs.len() >= expected || now >= deadline {
            break;
        }
        match rx.recv_timeout(deadline - now) {
            Ok(j) => jobs.push(j),
            Err(_) => break,
        }
    }
    jobs
}

fn run(db: &Database, hub: &Hub, rx: &mpsc::Receiver<Job>, stats: &CommitStats) {
    let mut expected = 1;
    let mut window = Duration::ZERO;
    while let Ok(first) = rx.recv() {
        let jobs = gather(rx, first, expected, window);
        let started = Instant::now();
        let result = commit(db, &jobs).map_err(|e| e.to_string());
        let took = started.elapsed();
        stats.commits.fetch_add(1, Ordering::Relaxed);
        stats.writes.fetch_add(jobs.len() as u64, Ordering::Relaxed);
        stats.commit_micros.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        // Expect as many writers as recently seen (decaying by one per commit when fewer come), and wait up to
        // a third of a flush for them: the next flush then carries them instead of a flush of their own.
        expected = jobs.len().max(expected.saturating_sub(1)).max(1);
        window = (took / 3).min(MAX_GATHER);
        stats.failing.store(result.is_err(), Ordering::Relaxed);
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
