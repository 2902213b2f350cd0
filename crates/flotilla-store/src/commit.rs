//! The committer and checkpointer threads (group commit over the write-ahead log).
//!
//! One committer thread drains every queued write, appends the batch to the log as one record followed by one
//! `fdatasync`, and only then publishes the batch's watch events and acknowledges it: concurrent writers share
//! one flush, and a flush writes one sequential block rather than the dozen scattered B-tree pages and header
//! a redb commit writes. When recent batches showed concurrent writers, the committer waits up to a third of a
//! flush (at most 1 ms) for as many to come back, so batches stay as large as the concurrency.
//!
//! The checkpointer applies each closed segment (about one a second) to redb in one durable transaction, so
//! B-tree pages are written once per checkpoint instead of once per write, then deletes the segment.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use redb::Database;

use super::disk::{DiskError, DiskOp, Durable, Job, checkpoint};
use super::wal;
use crate::hub::Hub;

/// Upper bound on writes folded into one log record.
const MAX_BATCH: usize = 4096;
/// Longest wait for writers to join a batch.
const MAX_GATHER: Duration = Duration::from_millis(1);
/// A log segment is handed to the checkpointer after this long...
const SEGMENT_AGE: Duration = Duration::from_secs(1);
/// ... or once it is this large.
const SEGMENT_BYTES: u64 = 16 * 1024 * 1024;

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

/// Handle to the committer thread (which owns the checkpointer thread).
pub struct Committer {
    tx: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<CommitStats>,
}

impl Committer {
    /// Starts the committer thread on the opened store.
    pub fn start(durable: Durable, hub: Arc<Hub>) -> Self {
        let (tx, rx) = mpsc::channel();
        let stats = Arc::new(CommitStats::default());
        let thread_stats = stats.clone();
        let thread = std::thread::Builder::new()
            .name("flotilla-store-commit".into())
            .spawn(move || run(durable, &hub, &rx, &thread_stats))
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

    /// Whether writes can be committed: the thread runs and the log and checkpoints work.
    pub fn healthy(&self) -> bool {
        self.tx.is_some()
            && self.thread.as_ref().is_some_and(|t| !t.is_finished())
            && !self.stats.failing.load(Ordering::Relaxed)
    }

    /// Stops accepting writes and waits until everything queued is logged and checkpointed into redb.
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

/// A closed log segment and the changes it holds, for the checkpointer.
struct Checkpoint {
    ops: Vec<(String, Option<Vec<u8>>)>,
    rv: u64,
    segment: PathBuf,
}

/// The log being appended to, with what it holds that redb does not have yet.
struct Log {
    dir: PathBuf,
    writer: Option<wal::Writer>,
    next: u64,
    opened: Instant,
    pending: Vec<(String, Option<Vec<u8>>)>,
    pending_rv: u64,
    /// An append failed: whatever the segment ends with must not be followed by more records.
    damaged: bool,
}

impl Log {
    fn segment(&mut self) -> std::io::Result<&mut wal::Writer> {
        if self.writer.is_none() {
            self.writer = Some(wal::Writer::create(&self.dir, self.next)?);
            self.next += 1;
            self.opened = Instant::now();
        }
        self.writer
            .as_mut()
            .ok_or_else(|| std::io::Error::other("no log segment"))
    }

    /// Closes the current segment and hands it to the checkpointer, if it holds anything.
    fn rotate(&mut self, checkpoints: &mpsc::Sender<Checkpoint>) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        self.damaged = false;
        let segment = wal::segment_path(&self.dir, writer.seq);
        let ops = std::mem::take(&mut self.pending);
        let rv = self.pending_rv;
        if ops.is_empty() && writer.bytes == 0 {
            let _ = std::fs::remove_file(&segment);
            return;
        }
        let _ = checkpoints.send(Checkpoint { ops, rv, segment });
    }

    fn due(&self) -> bool {
        self.writer.as_ref().is_some_and(|w| {
            self.damaged || w.bytes >= SEGMENT_BYTES || self.opened.elapsed() >= SEGMENT_AGE
        })
    }
}

/// What a logged batch holds: its changes for the checkpointer and the stored size of each job's objects.
type Logged = (Vec<(String, Option<Vec<u8>>)>, Vec<usize>);

/// Logs one batch: one record, one flush.
fn log_batch(log: &mut Log, jobs: &[Job]) -> std::io::Result<Logged> {
    let mut ops = Vec::new();
    let mut sizes = Vec::with_capacity(jobs.len());
    let mut rv = 0;
    for job in jobs {
        rv = rv.max(job.rv);
        let first = ops.len();
        for op in &job.ops {
            ops.push(match op {
                DiskOp::Put { key, object } => (
                    key.clone(),
                    Some(serde_json::to_vec(object.as_ref()).map_err(std::io::Error::other)?),
                ),
                DiskOp::Delete { key } => (key.clone(), None),
            });
        }
        sizes.push(
            ops.iter()
                .skip(first)
                .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len))
                .sum(),
        );
    }
    let mut buf = Vec::with_capacity(
        ops.iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len) + 9)
            .sum::<usize>()
            + 24,
    );
    wal::encode(
        &mut buf,
        rv,
        ops.iter().map(|(k, v)| (k.as_str(), v.as_deref())),
    )?;
    if let Err(e) = log.segment()?.append(&buf) {
        log.damaged = true;
        return Err(e);
    }
    log.pending_rv = log.pending_rv.max(rv);
    Ok((ops, sizes))
}

fn run(durable: Durable, hub: &Hub, rx: &mpsc::Receiver<Job>, stats: &Arc<CommitStats>) {
    let (ck_tx, ck_rx) = mpsc::channel::<Checkpoint>();
    let (db, ck_stats, ck_dir) = (durable.db.clone(), stats.clone(), durable.log_dir.clone());
    let checkpointer = std::thread::Builder::new()
        .name("flotilla-store-checkpoint".into())
        .spawn(move || checkpoints(&db, &ck_dir, &ck_rx, &ck_stats))
        .ok();
    let mut log = Log {
        dir: durable.log_dir,
        writer: None,
        next: durable.next_segment,
        opened: Instant::now(),
        pending: Vec::new(),
        pending_rv: 0,
        damaged: false,
    };
    let mut expected = 1;
    let mut window = Duration::ZERO;
    loop {
        let first = match rx.recv_timeout(SEGMENT_AGE) {
            Ok(j) => j,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Idle: let redb catch up rather than keep the log growing.
                log.rotate(&ck_tx);
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let jobs = gather(rx, first, expected, window);
        let started = Instant::now();
        let result = log_batch(&mut log, &jobs).map_err(|e| e.to_string());
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
        let (result, sizes) = match result {
            Ok((ops, sizes)) => {
                log.pending.extend(ops);
                (Ok(()), sizes)
            }
            Err(e) => {
                stats.failing.store(true, Ordering::Relaxed);
                tracing::error!(error = %e, "write-ahead log append failed; writes are not acknowledged");
                (Err(e), Vec::new())
            }
        };
        for (i, job) in jobs.into_iter().enumerate() {
            if result.is_ok() {
                let bytes = sizes.get(i).copied().unwrap_or(0);
                for ev in job.events {
                    hub.publish(ev, bytes);
                }
            }
            if let Some(ack) = job.ack {
                let _ = ack.send(result.clone());
            }
        }
        if log.due() {
            log.rotate(&ck_tx);
        }
    }
    log.rotate(&ck_tx);
    drop(ck_tx);
    if let Some(t) = checkpointer {
        let _ = t.join();
    }
}

/// Applies closed segments to redb, one durable transaction each, deleting each segment once redb holds it.
/// After a failed checkpoint it stops (later segments would otherwise move redb's resourceVersion past the
/// failed one's records, and the replay at the next start would skip them); the log keeps everything.
fn checkpoints(db: &Database, dir: &Path, rx: &mpsc::Receiver<Checkpoint>, stats: &CommitStats) {
    let mut broken = false;
    while let Ok(ck) = rx.recv() {
        if broken {
            continue;
        }
        match checkpoint(
            db,
            ck.ops.iter().map(|(k, v)| (k.as_str(), v.as_deref())),
            ck.rv,
        ) {
            Ok(()) => {
                if let Err(e) = std::fs::remove_file(&ck.segment) {
                    tracing::warn!(segment = %ck.segment.display(), error = %e, "failed to remove a checkpointed log segment");
                }
            }
            Err(e) => {
                broken = true;
                stats.failing.store(true, Ordering::Relaxed);
                tracing::error!(error = %e, log = %dir.display(), "checkpoint into redb failed; the log keeps every write until restart");
            }
        }
    }
}
