//! Runs a controller's workers: take a key, reconcile it, record metrics, apply the error policy.

use std::fmt::Display;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;

use super::queue::Queue;
use crate::error::Error;
use crate::metrics::Metrics;

/// What to do with a key after a successful reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing until a watched change adds it again.
    AwaitChange,
    /// Reconcile again after the delay (periodic work, polling for a condition).
    RequeueAfter(Duration),
}

/// The error policy: permanent errors wait for a change to the object, transient ones back off exponentially
/// (capped), per key. Returns the delay chosen, if any.
pub fn error_policy<K>(queue: &Arc<Queue<K>>, key: K, error: &Error) -> Option<Duration>
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    if error.is_permanent() {
        queue.forget(&key);
        None
    } else {
        Some(queue.add_with_backoff(key))
    }
}

/// Runs `workers` worker tasks over `queue` until it is closed.
///
/// Guarantees: a key is reconciled by one worker at a time; each run is counted in `metrics` under
/// `controller` (with the error category on failure); errors go through [`error_policy`].
pub async fn run<K, F, Fut>(
    controller: &'static str,
    queue: Arc<Queue<K>>,
    workers: usize,
    metrics: Metrics,
    reconcile: F,
) where
    K: Clone + Eq + Hash + Display + Send + Sync + 'static,
    F: Fn(K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, Error>> + Send + 'static,
{
    let reconcile = Arc::new(reconcile);
    let tasks = (0..workers.max(1)).map(|_| {
        let queue = queue.clone();
        let metrics = metrics.clone();
        let reconcile = reconcile.clone();
        tokio::spawn(async move {
            while let Some(key) = queue.next().await {
                let start = tokio::time::Instant::now();
                let result = reconcile(key.clone()).await;
                let elapsed = start.elapsed();
                match result {
                    Ok(action) => {
                        metrics.observe(controller, elapsed, None);
                        queue.forget(&key);
                        if let Action::RequeueAfter(delay) = action {
                            queue.add_after(key.clone(), delay);
                        }
                    }
                    Err(err) => {
                        metrics.observe(controller, elapsed, Some(err.category()));
                        let retry = error_policy(&queue, key.clone(), &err);
                        tracing::debug!(
                            controller,
                            key = %key,
                            error = %err.message(),
                            retry_in = ?retry,
                            "reconcile failed"
                        );
                    }
                }
                queue.done(&key);
                metrics.set_queue_depth(controller, queue.len());
            }
        })
    });
    for result in join_all(tasks).await {
        if let Err(err) = result {
            tracing::error!(controller, error = %err, "controller worker ended abnormally");
        }
    }
}

/// Runs `workers` workers reconciling with `reconcile(state, key)` until `shutdown` is cancelled, then closes
/// the queue and waits for the workers to finish their current key: the tail every controller's `run` shares.
pub async fn run_until<K, C, F, Fut>(
    controller: &'static str,
    queue: Arc<Queue<K>>,
    workers: usize,
    metrics: Metrics,
    shutdown: tokio_util::sync::CancellationToken,
    state: Arc<C>,
    reconcile: F,
) where
    K: Clone + Eq + Hash + Display + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<C>, K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, Error>> + Send + 'static,
{
    let task = tokio::spawn(run(
        controller,
        queue.clone(),
        workers,
        metrics,
        move |key| reconcile(state.clone(), key),
    ));
    shutdown.cancelled().await;
    queue.close();
    if let Err(err) = task.await {
        tracing::error!(controller, error = %err, "controller ended abnormally");
    }
}

/// Whether a change asks for a sync of a spec-driven controller: creation, a spec change (generation), or
/// the start of deletion (which generation-filtered controllers must see, controllers spec pipeline notes).
pub fn spec_changed<K: kube::Resource>(change: &super::Change<'_, K>) -> bool {
    match change {
        super::Change::Added(_) => true,
        super::Change::Updated { old, new } => {
            old.meta().generation != new.meta().generation
                || (old.meta().deletion_timestamp.is_none()
                    && new.meta().deletion_timestamp.is_some())
        }
        super::Change::Deleted(_) => false,
    }
}
