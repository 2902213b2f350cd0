//! The work queue both aggregator controllers run on, as client-go's rate-limited queue serves
//! kube-aggregator's: one sync per APIService name at a time (a name asked for while it syncs is synced again
//! right after), each sync on its own task, failures retried with an exponential backoff per name, and what a
//! success asks for (a later refresh) scheduled.

use super::Aggregator;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// What a sync asks for.
pub(crate) type Outcome = Result<Option<Duration>, ()>;

/// How a controller's queue behaves.
pub(crate) struct Policy {
    /// The first retry after a failure, doubled after each further failure.
    pub first_retry: Duration,
    /// The longest retry.
    pub max_retry: Duration,
    /// How often every APIService is synced again, if at all.
    pub resync: Option<Duration>,
}

#[derive(Default)]
struct Queue {
    due: HashMap<String, Instant>,
    /// Names being synced, with whether they were asked for again meanwhile.
    busy: HashMap<String, bool>,
    failures: HashMap<String, u32>,
}

impl Queue {
    fn add(&mut self, name: String) {
        match self.busy.get_mut(&name) {
            Some(again) => *again = true,
            None => {
                self.due.insert(name, Instant::now());
            }
        }
    }

    fn take_ready(&mut self) -> Vec<String> {
        let now = Instant::now();
        let ready: Vec<String> = self
            .due
            .iter()
            .filter(|(n, at)| **at <= now && !self.busy.contains_key(*n))
            .map(|(n, _)| n.clone())
            .collect();
        for name in &ready {
            self.due.remove(name);
            self.busy.insert(name.clone(), false);
        }
        ready
    }

    fn done(&mut self, name: String, outcome: Outcome, policy: &Policy, now: Instant) {
        let again = self.busy.remove(&name).unwrap_or(false);
        let delay = match outcome {
            Ok(next) => {
                self.failures.remove(&name);
                next
            }
            Err(()) => {
                let n = self.failures.entry(name.clone()).or_insert(0);
                *n += 1;
                let backoff = policy.first_retry.saturating_mul(1 << (*n - 1).min(20));
                Some(backoff.min(policy.max_retry))
            }
        };
        match (again, delay) {
            (true, _) => {
                self.due.insert(name, now);
            }
            (false, Some(d)) => {
                let at = now + d;
                let entry = self.due.entry(name).or_insert(at);
                *entry = (*entry).min(at);
            }
            (false, None) => {}
        }
    }
}

/// Runs `sync` for each name on `changes` (after `on_change`), for every APIService at each resync, and as the
/// outcomes ask, until shutdown.
pub(crate) async fn drive<S, Fut, C>(
    agg: Arc<Aggregator>,
    mut changes: UnboundedReceiver<String>,
    policy: Policy,
    on_change: C,
    sync: S,
) where
    S: Fn(Arc<Aggregator>, String) -> Fut,
    Fut: Future<Output = Outcome> + Send + 'static,
    C: Fn(&Aggregator, &str),
{
    let mut queue = Queue::default();
    let mut running = tokio::task::JoinSet::new();
    let period = policy.resync.unwrap_or(Duration::from_secs(3600));
    let mut resync = tokio::time::interval_at(Instant::now() + period, period);
    loop {
        for name in queue.take_ready() {
            let work = sync(agg.clone(), name.clone());
            running.spawn(async move { (name, work.await) });
        }
        let next = queue.due.values().min().copied();
        tokio::select! {
            _ = agg.registry.shutdown.cancelled() => return,
            Some(name) = changes.recv() => {
                on_change(&agg, &name);
                queue.failures.remove(&name);
                queue.add(name);
            }
            _ = resync.tick(), if policy.resync.is_some() => {
                for name in agg.index().keys() {
                    queue.due.entry(name.clone()).or_insert_with(Instant::now);
                }
            }
            Some(Ok((name, outcome))) = running.join_next() => {
                queue.done(name, outcome, &policy, Instant::now());
            }
            _ = async {
                match next {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: Policy = Policy {
        first_retry: Duration::from_millis(5),
        max_retry: Duration::from_secs(30),
        resync: None,
    };

    #[test]
    fn failures_back_off_and_a_name_asked_for_while_syncing_runs_again() {
        let mut q = Queue::default();
        q.add("a".into());
        assert_eq!(q.take_ready(), ["a"]);
        q.add("a".into());
        assert!(q.take_ready().is_empty(), "one sync at a time");
        q.done("a".into(), Ok(None), &POLICY, Instant::now());
        assert_eq!(q.take_ready(), ["a"], "asked for meanwhile: again at once");
        q.done("a".into(), Ok(None), &POLICY, Instant::now());
        assert!(q.due.is_empty());
        let mut delays = Vec::new();
        for _ in 0..14 {
            q.add("b".into());
            q.take_ready();
            let now = Instant::now();
            q.done("b".into(), Err(()), &POLICY, now);
            delays.push(q.due["b"] - now);
        }
        assert_eq!(delays[0], Duration::from_millis(5));
        assert_eq!(delays[1], Duration::from_millis(10));
        assert_eq!(delays[13], Duration::from_secs(30), "capped");
        q.add("b".into());
        q.take_ready();
        let now = Instant::now();
        q.done("b".into(), Ok(Some(Duration::from_secs(60))), &POLICY, now);
        assert_eq!(q.due["b"] - now, Duration::from_secs(60));
        assert!(q.failures.is_empty(), "a success forgets the failures");
    }
}
