//! The durable half of the store: a write-ahead log in front of redb.
//!
//! Writes become durable by one `fdatasync` of the log (see [`wal`](super::wal) and the committer in
//! [`commit`](super::commit)); redb is brought up to date from the log a segment at a time by the
//! checkpointer, and a segment is deleted only after redb durably holds everything in it. This module opens
//! the files, replays what a crash left in the log on top of redb and checkpoints it, and defines the jobs
//! the committer takes.
//!
//! Guarantees: an acknowledged write is in the log on disk; redb's resourceVersion plus the log never go
//! backwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::oneshot;

use super::wal;
use crate::hub::Event;

const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const RV_KEY: &str = "resourceVersion";

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
    /// The write-ahead log could not be read, replayed or started.
    #[error("failed to use the write-ahead log in {path}")]
    Log {
        /// Log directory or segment.
        path: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// A logged record holds an object that is not valid JSON.
    #[error("failed to decode logged object {key} in {path}")]
    LoggedDecode {
        /// Storage key.
        key: String,
        /// Segment file.
        path: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Checkpointing the replayed log into redb failed.
    #[error("failed to checkpoint the replayed write-ahead log")]
    Checkpoint(#[source] redb::Error),
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

/// The durable files of one store: redb and the log directory.
pub struct Durable {
    pub(super) db: Arc<Database>,
    pub(super) log_dir: PathBuf,
    pub(super) next_segment: u64,
}

/// Opens (or creates) the store in `dir` (`store.redb` and the log in `wal/`), replays the log on top of redb
/// and checkpoints it, and returns the content.
///
/// # Errors
/// When redb or the log cannot be opened or read, or a stored or logged object is not JSON.
pub fn open(dir: &Path) -> Result<(Durable, Loaded), DiskError> {
    let path = dir.join("store.redb");
    let db = Database::builder()
        // The in-memory index serves reads; redb's cache only needs to cover the checkpoints.
        .set_cache_size(16 * 1024 * 1024)
        .create(&path)
        .map_err(|source| DiskError::Open {
            path: path.display().to_string(),
            source,
        })?;
    let loaded = load(&db)?;
    let log_dir = dir.join("wal");
    let log_err = |p: &Path| {
        let path = p.display().to_string();
        move |source| DiskError::Log { path, source }
    };
    std::fs::create_dir_all(&log_dir).map_err(log_err(&log_dir))?;
    let segments = wal::segments(&log_dir).map_err(log_err(&log_dir))?;
    let mut objects: BTreeMap<String, Value> = loaded.objects.into_iter().collect();
    let mut rv = loaded.rv;
    let mut replayed: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    for (_, seg_path) in &segments {
        let seg = wal::read(seg_path).map_err(log_err(seg_path))?;
        if seg.torn {
            // Only a write whose flush never completed can be cut short; it was not acknowledged.
            tracing::warn!(segment = %seg_path.display(), "write-ahead log segment ends in an incomplete record");
        }
        for record in seg.records.into_iter().filter(|r| r.rv > loaded.rv) {
            rv = rv.max(record.rv);
            for (key, value) in record.ops {
                match &value {
                    Some(bytes) => {
                        let obj = serde_json::from_slice(bytes).map_err(|source| {
                            DiskError::LoggedDecode {
                                key: key.clone(),
                                path: seg_path.display().to_string(),
                                source,
                            }
                        })?;
                        objects.insert(key.clone(), obj);
                    }
                    None => {
                        objects.remove(&key);
                    }
                }
                replayed.insert(key, value);
            }
        }
    }
    let db = Arc::new(db);
    if !segments.is_empty() {
        checkpoint(
            &db,
            replayed.iter().map(|(k, v)| (k.as_str(), v.as_deref())),
            rv,
        )
        .map_err(DiskError::Checkpoint)?;
        for (_, seg_path) in &segments {
            std::fs::remove_file(seg_path).map_err(log_err(seg_path))?;
        }
        wal::sync_dir(&log_dir).map_err(log_err(&log_dir))?;
    }
    let next_segment = segments.last().map_or(1, |(seq, _)| seq + 1);
    Ok((
        Durable {
            db,
            log_dir,
            next_segment,
        },
        Loaded {
            rv,
            objects: objects.into_iter().collect(),
        },
    ))
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

/// One durable redb transaction holding `ops` and the counter `rv` (ignored when 0 or not newer).
pub(super) fn checkpoint<'a>(
    db: &Database,
    ops: impl Iterator<Item = (&'a str, Option<&'a [u8]>)>,
    rv: u64,
) -> Result<(), redb::Error> {
    let mut txn = db.begin_write()?;
    txn.set_durability(Durability::Immediate)?;
    {
        let mut table = txn.open_table(OBJECTS)?;
        for (key, value) in ops {
            match value {
                Some(bytes) => {
                    table.insert(key, bytes)?;
                }
                None => {
                    table.remove(key)?;
                }
            }
        }
        let mut meta = txn.open_table(META)?;
        let current = meta.get(RV_KEY)?.map(|v| v.value()).unwrap_or(0);
        if rv > current {
            meta.insert(RV_KEY, rv)?;
        }
    }
    txn.commit()?;
    Ok(())
}
