//! Who may start a reconcile: one pool of `workers` permits for the whole controller, or one pool per
//! partition of its objects. Controllers whose objects each belong to one member cluster partition by member,
//! so a member that answers slowly holds only its own pool's turns and the other members' reconciles go on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The partition an object's reconcile takes its permit from.
pub(crate) type PartitionFn<K> = dyn Fn(&ObjectRef<K>) -> String + Send + Sync;

/// The permits of one controller.
pub(crate) enum Permits<K: Resource> {
    /// One pool, possibly shared with other controllers.
    Shared(Arc<Semaphore>),
    /// `workers` permits per partition.
    Partitioned {
        workers: usize,
        partition: Arc<PartitionFn<K>>,
        pools: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
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

    /// Waits for a permit to reconcile `key`; `None` once the pool is closed (never, as pools are not closed).
    pub(crate) async fn acquire(&self, key: &ObjectRef<K>) -> Option<OwnedSemaphorePermit> {
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
                    .or_insert_with(|| Arc::new(Semaphore::new(*workers)))
                    .clone()
            }
        };
        pool.acquire_owned().await.ok()
    }
}
