//! Watch-fed caches with change handlers: kube-runtime's watcher feeding a store, and every change (with the old
//! object for updates) handed to the registered handlers, as client-go's shared informers do.
//!
//! Guarantees: handlers see changes in watch order; a handler added late first sees every cached object as
//! `Added`, and then every later change, with nothing missed or seen twice; after a relist (watch restart),
//! objects that vanished meanwhile are reported `Deleted` and changed ones `Updated`. Handlers run on the watch
//! task and must be quick: they only enqueue keys.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A change an informer saw.
#[derive(Debug)]
pub enum Change<'a, K> {
    /// A new object (or, for a late handler, an object already cached).
    Added(&'a Arc<K>),
    /// An object changed.
    Updated {
        /// The cached object before the change.
        old: &'a Arc<K>,
        /// The object now.
        new: &'a Arc<K>,
    },
    /// An object was deleted (its last known state).
    Deleted(&'a Arc<K>),
}

// Manual impls: a change only holds references, so it is `Copy` whatever `K` is.
impl<K> Clone for Change<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Change<'_, K> {}

impl<'a, K> Change<'a, K> {
    /// The object after the change (the last known state for deletions).
    pub fn object(&self) -> &'a Arc<K> {
        match self {
            Change::Added(obj) | Change::Deleted(obj) => obj,
            Change::Updated { new, .. } => new,
        }
    }
}

type Handler<K> = Box<dyn Fn(Change<'_, K>) + Send + Sync>;
type Key = (String, String);

/// A cache of one resource type kept current by a watch, with change handlers.
pub struct Informer<K> {
    description: String,
    objects: RwLock<HashMap<Key, Arc<K>>>,
    handlers: Mutex<Vec<Handler<K>>>,
    synced: watch::Sender<bool>,
}

fn key_of<K: Resource>(obj: &K) -> Key {
    (obj.namespace().unwrap_or_default(), obj.name_any())
}

impl<K> Informer<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    /// Starts watching `api`; the informer lives until the returned task is aborted.
    pub fn start(
        api: Api<K>,
        config: watcher::Config,
        description: impl Into<String>,
    ) -> (Arc<Self>, JoinHandle<()>) {
        let informer = Arc::new(Informer {
            description: description.into(),
            objects: RwLock::new(HashMap::new()),
            handlers: Mutex::new(Vec::new()),
            synced: watch::Sender::new(false),
        });
        let task = tokio::spawn({
            let informer = informer.clone();
            async move { informer.run(api, config).await }
        });
        (informer, task)
    }

    async fn run(&self, api: Api<K>, config: watcher::Config) {
        let mut stream = watcher::watcher(api, config).default_backoff().boxed();
        let mut relist: Option<HashMap<Key, Arc<K>>> = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Apply(obj)) => self.apply(Arc::new(obj)),
                Ok(Event::Delete(obj)) => self.delete(&key_of(&obj)),
                Ok(Event::Init) => relist = Some(HashMap::new()),
                Ok(Event::InitApply(obj)) => {
                    let obj = Arc::new(obj);
                    relist
                        .get_or_insert_with(HashMap::new)
                        .insert(key_of(obj.as_ref()), obj);
                }
                Ok(Event::InitDone) => {
                    self.replace(relist.take().unwrap_or_default());
                    self.synced.send_replace(true);
                }
                Err(err) => {
                    tracing::debug!(informer = %self.description, error = %err, "watch error; retrying");
                }
            }
        }
    }

    fn handlers(&self) -> std::sync::MutexGuard<'_, Vec<Handler<K>>> {
        self.handlers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn apply(&self, new: Arc<K>) {
        let handlers = self.handlers();
        let old = self.write().insert(key_of(new.as_ref()), new.clone());
        let change = match &old {
            Some(old) => Change::Updated { old, new: &new },
            None => Change::Added(&new),
        };
        dispatch(&handlers, &change);
    }

    fn delete(&self, key: &Key) {
        let handlers = self.handlers();
        if let Some(old) = self.write().remove(key) {
            dispatch(&handlers, &Change::Deleted(&old));
        }
    }

    fn replace(&self, fresh: HashMap<Key, Arc<K>>) {
        let handlers = self.handlers();
        let old = std::mem::replace(&mut *self.write(), fresh.clone());
        for (key, gone) in &old {
            if !fresh.contains_key(key) {
                dispatch(&handlers, &Change::Deleted(gone));
            }
        }
        for (key, new) in &fresh {
            match old.get(key) {
                Some(prev) if same_version(prev.as_ref(), new.as_ref()) => {}
                Some(prev) => dispatch(&handlers, &Change::Updated { old: prev, new }),
                None => dispatch(&handlers, &Change::Added(new)),
            }
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Key, Arc<K>>> {
        self.objects.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Key, Arc<K>>> {
        self.objects.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a handler; it first sees every cached object as `Added`.
    pub fn add_handler(&self, handler: impl Fn(Change<'_, K>) + Send + Sync + 'static) {
        let mut handlers = self.handlers();
        for obj in self.read().values() {
            handler(Change::Added(obj));
        }
        handlers.push(Box::new(handler));
    }

    /// The cached object `namespace/name` (namespace empty for cluster-scoped objects).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.read()
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }

    /// Every cached object.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().values().cloned().collect()
    }

    /// Cached objects for which `keep` holds.
    pub fn filter(&self, keep: impl Fn(&K) -> bool) -> Vec<Arc<K>> {
        self.read()
            .values()
            .filter(|obj| keep(obj))
            .cloned()
            .collect()
    }

    /// Cached objects in `namespace`.
    pub fn list_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.read()
            .iter()
            .filter(|((ns, _), _)| ns == namespace)
            .map(|(_, obj)| obj.clone())
            .collect()
    }

    /// Whether the first list completed.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until the first list completed.
    pub async fn wait_synced(&self) {
        let mut rx = self.synced.subscribe();
        // The sender lives as long as `self`, so this only ends when synced.
        let _ = rx.wait_for(|synced| *synced).await;
    }

    /// What this informer watches, for logs.
    pub fn description(&self) -> &str {
        &self.description
    }
}

fn same_version<K: Resource>(a: &K, b: &K) -> bool {
    match (a.resource_version(), b.resource_version()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn dispatch<K>(handlers: &[Handler<K>], change: &Change<'_, K>) {
    for handler in handlers {
        handler(*change);
    }
}
