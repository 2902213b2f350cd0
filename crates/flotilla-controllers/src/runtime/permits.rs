//! Who may start a reconcile: one pool of `workers` permits for the whole controller, or one pool per
//! partition of its objects. Controllers whose objects each belong to one member cluster partition by member,
//! so a member that answers slowly holds only its own pool's turns and the other members' reconciles go on.
//!
//! A pool hands a freed permit to the waiting reconcile of the highest priority, the earliest first among
//! equals: with `ControllerPriorityQueue`, objects a controller learns of from its informer's first list wait
//! behind those that changed since ([`LOW_PRIORITY`]), as Karmada's priority queues order them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::oneshot;

/// The priority of a reconcile requested for an object of an informer's first list (Karmada's `LowPriority`).
pub const LOW_PRIORITY: i32 = -100;

/// The partition an object's reconcile takes its permit from.
pub(crate) type PartitionFn<K> = dyn Fn(&ObjectRef<K>) -> String + Send + Sync;

/// A number of permits, handed out by priority.
pub struct Pool {
    state: Mutex<PoolState>,
}

struct PoolState {
    available: usize,
    /// Waiting reconciles by (higher priority first, arrival order).
    waiting: BTreeMap<(Reverse<i32>, u64), oneshot::Sender<Permit>>,
    arrivals: u64,
}

/// A permit of a [`Pool`], given back when dropped.
pub struct Permit {
    pool: Arc<Pool>,
}

impl Pool {
    /// A pool of `permits` permits (at least one).
    pub fn new(permits: usize) -> Arc<Pool> {
        Arc::new(Pool {
            state: Mutex::new(PoolState {
                available: permits.max(1),
                waiting: BTreeMap::new(),
                arrivals: 0,
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, PoolState> {
        // The counts stay consistent between statements; a poisoned lock still holds usable state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a permit at `priority`.
    pub async fn acquire(self: &Arc<Self>, priority: i32) -> Permit {
        loop {
            let receiver = {
                let mut state = self.state();
                if state.available > 0 && state.waiting.is_empty() {
                    state.available -= 1;
                    return Permit { pool: self.clone() };
                }
                let (sender, receiver) = oneshot::channel();
                state.arrivals += 1;
                let place = (Reverse(priority), state.arrivals);
                state.waiting.insert(place, sender);
                receiver
            };
            // A waiter leaves the queue only with a permit; should one ever be dropped without, wait again.
            if let Ok(permit) = receiver.await {
                return permit;
            }
        }
    }

    /// Gives a permit back: to the first waiter still waiting, else to the pool.
    fn release(self: &Arc<Self>) {
        let mut state = self.state();
        while let Some((_, waiter)) = state.waiting.pop_first() {
            // A waiter that gave up (its reconcile was cancelled) returns the permit to us through `Err`.
            match waiter.send(Permit { pool: self.clone() }) {
                Ok(()) => return,
                Err(permit) => std::mem::forget(permit),
            }
        }
        state.available += 1;
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.pool.release();
    }
}

/// The permits of one controller.
pub(crate) enum Permits<K: Resource> {
    /// One pool, possibly shared with other controllers.
    Shared(Arc<Pool>),
    /// `workers` permits per partition.
    Partitioned {
        workers: usize,
        partition: Arc<PartitionFn<K>>,
        pools: Arc<Mutex<HashMap<String, Arc<Pool>>>>,
    },
}

impl<K: Resource> Clone for Permits<K> {
    fn clone(&self) -> Self {
        match self {
            Permits::Shared(pool) => Permits::Shared(pool.clone()),
            Permits::Partitioned {
                workers,
                partition,
                pools,
            } => Permits::Partitioned {
                workers: *workers,
                partition: partition.clone(),
                pools: pools.clone(),
            },
        }
    }
}

impl<K: Resource> Permits<K> {
    /// `workers` permits per partition `partition` names.
    pub(crate) fn partitioned(workers: usize, partition: Arc<PartitionFn<K>>) -> Self {
        Permits::Partitioned {
            workers: workers.max(1),
            partition,
            pools: Arc::default(),
        }
    }

    /// Waits for a permit to reconcile `key` at `priority`.
    pub(crate) async fn acquire(&self, key: &ObjectRef<K>, priority: i32) -> Permit {
        let pool = match self {
            Permits::Shared(pool) => pool.clone(),
            Permits::Partitioned {
                workers,
                partition,
                pools,
            } => {
                // A pool per partition ever seen: partitions are members, few and long-lived.
                let name = partition(key);
                pools
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(name)
                    .or_insert_with(|| Pool::new(*workers))
                    .clone()
            }
        };
        pool.acquire(priority).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_freed_permit_goes_to_the_highest_priority_then_the_earliest() {
        let pool = Pool::new(1);
        let held = pool.acquire(0).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for (name, priority) in [
            ("listed-1", LOW_PRIORITY),
            ("changed-1", 0),
            ("listed-2", LOW_PRIORITY),
            ("changed-2", 0),
        ] {
            let (waiter_pool, order) = (pool.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                let _permit = waiter_pool.acquire(priority).await;
                order
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(name);
            }));
            // Each waiter queues before the next one arrives.
            while pool.state().waiting.len() < waiters.len() {
                tokio::task::yield_now().await;
            }
        }
        drop(held);
        for waiter in waiters {
            assert!(waiter.await.is_ok());
        }
        assert_eq!(
            *order.lock().unwrap_or_else(PoisonError::into_inner),
            ["changed-1", "changed-2", "listed-1", "listed-2"]
        );
        assert_eq!(pool.state().available, 1);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_does_not_keep_the_permit() {
        let pool = Pool::new(1);
        let held = pool.acquire(0).await;
        let gave_up = tokio::spawn({
            let pool = pool.clone();
            async move { pool.acquire(0).await }
        });
        while pool.state().waiting.is_empty() {
            tokio::task::yield_now().await;
        }
        gave_up.abort();
        assert!(gave_up.await.is_err());
        drop(held);
        assert_eq!(pool.state().available, 1);
        let _again = pool.acquire(0).await;
        assert_eq!(pool.state().available, 0);
    }
}
