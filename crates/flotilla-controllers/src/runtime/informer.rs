//! Watch-fed caches with change handlers: kube-runtime's watcher feeding a kube-runtime reflector store, and
//! every change (with the object before it for updates) handed to the registered handlers.
//!
//! The cache is kube-runtime's [`Store`], so controllers on kube-runtime's applier read the very objects the
//! handlers saw. The handlers are ours because kube-runtime's shared streams (`reflector::store_shared`)
//! give a subscriber only the object's current state: no deletions and no previous state, which the
//! triggers of Karmada's controllers need (a generation or label change, `deletionTimestamp` newly set, a
//! Work deleted, a dependency matched by its old labels). kube-runtime 5.0.0's `ReflectHandle` also loses
//! its wakeup when an object is deleted between its broadcast and the subscriber's poll, and a stalled
//! subscriber then holds back the shared watch by its backpressure.
//!
//! Guarantees: handlers see changes in watch order; a handler added late first sees every cached object as
//! `Added`, and then every later change, with nothing missed or seen twice; after a relist (watch restart),
//! objects that vanished meanwhile are reported `Deleted` and changed ones `Updated`. Handlers run on the watch
//! task and must be quick: they only request reconciles.
//!
//! An object the informer's type cannot read ([`flotilla_client::lenient`]) is reported once per
//! resourceVersion (a warning naming it and the field, and the informer's hook) and left out: a version that
//! could be read before stays cached as it was, so a controller neither loses the object nor acts on what it
//! cannot understand, and everything else goes on.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use flotilla_client::lenient::{Lenient, Reporter, Undecodable, UndecodableHook};

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

/// A cache of one resource type kept current by a watch, with change handlers.
pub struct Informer<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    description: String,
    dyntype: K::DynamicType,
    store: Store<K>,
    handlers: Mutex<Vec<Handler<K>>>,
    /// Whether the first list completed. Ours rather than the store's `wait_until_ready`: in kube-runtime
    /// 5.0.0 that wakes only the last of several concurrent waiters (a oneshot keeps one waker), and several
    /// controllers wait for the same store.
    synced: watch::Sender<bool>,
    /// Reports the objects it cannot read.
    reporter: Reporter,
}

thread_local! {
    /// Set while handlers are told of the objects of an informer's first list (or, for a handler added late,
    /// of the objects already cached): the changes Karmada's priority queues put behind the others.
    static LISTING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the handler now running is being told of an object of an informer's first list.
pub(super) fn is_listing() -> bool {
    LISTING.with(Cell::get)
}

/// Runs `tell` (which calls handlers synchronously) as part of a first list.
pub(super) fn listing<R>(tell: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            LISTING.with(|listing| listing.set(false));
        }
    }
    LISTING.with(|listing| listing.set(true));
    let _reset = Reset;
    tell()
}

impl<K> Informer<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    /// Starts watching every object of `dyntype` through `client`, telling `hook` of those it cannot read; the
    /// informer lives until the returned task is aborted.
    pub fn start(
        client: Client,
        dyntype: K::DynamicType,
        config: watcher::Config,
        description: impl Into<String>,
        hook: Option<UndecodableHook>,
    ) -> (Arc<Self>, JoinHandle<()>) {
        Self::start_within(client, None, dyntype, config, description, hook)
    }

    /// Like [`Informer::start`], but watching only `namespace` when one is given: all a client whose rights end
    /// at one namespace (an agent's at its execution namespace) may list.
    pub fn start_within(
        client: Client,
        namespace: Option<&str>,
        dyntype: K::DynamicType,
        config: watcher::Config,
        description: impl Into<String>,
        hook: Option<UndecodableHook>,
    ) -> (Arc<Self>, JoinHandle<()>) {
        let api = match namespace {
            Some(namespace) => Api::<Lenient<K>>::namespaced_with(client, namespace, &dyntype),
            None => Api::<Lenient<K>>::all_with(client, &dyntype),
        };
        let (informer, writer) = Self::with_hook(dyntype, description, hook);
        let task = tokio::spawn({
            let informer = informer.clone();
            async move { informer.run(api, config, writer).await }
        });
        (informer, task)
    }

    /// An informer fed by the returned writer (through [`Informer::apply`]) rather than by a watch.
    pub(super) fn detached(
        dyntype: K::DynamicType,
        description: impl Into<String>,
    ) -> (Arc<Self>, Writer<K>) {
        Self::with_hook(dyntype, description, None)
    }

    fn with_hook(
        dyntype: K::DynamicType,
        description: impl Into<String>,
        hook: Option<UndecodableHook>,
    ) -> (Arc<Self>, Writer<K>) {
        let writer = Writer::new(dyntype.clone());
        let description = description.into();
        let reporter = Reporter::new(
            description.clone(),
            K::api_version(&dyntype),
            K::kind(&dyntype),
            hook,
        );
        let informer = Arc::new(Informer {
            description,
            dyntype,
            store: writer.as_reader(),
            handlers: Mutex::new(Vec::new()),
            synced: watch::Sender::new(false),
            reporter,
        });
        (informer, writer)
    }

    async fn run(&self, api: Api<Lenient<K>>, config: watcher::Config, mut writer: Writer<K>) {
        let mut stream = watcher::watcher(api, config).default_backoff().boxed();
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => {
                    if let Some(event) = self.readable(event) {
                        self.apply(&mut writer, &event);
                    }
                }
                Err(err) => {
                    tracing::debug!(informer = %self.description, error = %err, "watch error; retrying");
                }
            }
        }
    }

    /// The event with undecodable objects reported and replaced by their cached version where there is one
    /// (kept through a relist, deleted by key); `None` when nothing is left to apply.
    pub(super) fn readable(&self, event: Event<Lenient<K>>) -> Option<Event<K>> {
        self.reporter.readable(event, |object| self.cached(object))
    }

    fn cached(&self, object: &Undecodable) -> Option<K> {
        let namespace = object.meta.namespace.as_deref().unwrap_or_default();
        let name = object.meta.name.as_deref().unwrap_or_default();
        self.get(namespace, name)
            .map(|cached| cached.as_ref().clone())
    }

    fn handlers(&self) -> MutexGuard<'_, Vec<Handler<K>>> {
        self.handlers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn key(&self, obj: &K) -> ObjectRef<K> {
        ObjectRef::from_obj_with(obj, self.dyntype.clone())
    }

    /// Writes the event to the store, then tells the handlers what changed. The handler list stays locked
    /// meanwhile, so a handler being added sees the store either before or after the change, never both.
    pub(super) fn apply(&self, writer: &mut Writer<K>, event: &Event<K>) {
        let handlers = self.handlers();
        match event {
            Event::Apply(obj) => {
                let key = self.key(obj);
                let old = self.store.get(&key);
                writer.apply_watcher_event(event);
                let Some(new) = self.store.get(&key) else {
                    return;
                };
                let change = match &old {
                    Some(old) => Change::Updated { old, new: &new },
                    None => Change::Added(&new),
                };
                dispatch(&handlers, change);
            }
            Event::Delete(obj) => {
                let old = self.store.get(&self.key(obj));
                writer.apply_watcher_event(event);
                if let Some(old) = &old {
                    dispatch(&handlers, Change::Deleted(old));
                }
            }
            Event::Init | Event::InitApply(_) => writer.apply_watcher_event(event),
            Event::InitDone => {
                let before = self.snapshot();
                writer.apply_watcher_event(event);
                let after = self.snapshot();
                for (key, gone) in &before {
                    if !after.contains_key(key) {
                        dispatch(&handlers, Change::Deleted(gone));
                    }
                }
                let first = !*self.synced.borrow();
                for (key, new) in &after {
                    match before.get(key) {
                        Some(old) if same_version(old.as_ref(), new.as_ref()) => {}
                        Some(old) => dispatch(&handlers, Change::Updated { old, new }),
                        None if first => listing(|| dispatch(&handlers, Change::Added(new))),
                        None => dispatch(&handlers, Change::Added(new)),
                    }
                }
                self.synced.send_replace(true);
            }
        }
    }

    fn snapshot(&self) -> HashMap<ObjectRef<K>, Arc<K>> {
        self.store
            .state()
            .into_iter()
            .map(|obj| (self.key(&obj), obj))
            .collect()
    }
}

impl<K> Informer<K>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    /// Registers a handler; it first sees every cached object as `Added`.
    pub fn add_handler(&self, handler: impl Fn(Change<'_, K>) + Send + Sync + 'static) {
        let mut handlers = self.handlers.lock().unwrap_or_else(PoisonError::into_inner);
        listing(|| {
            for obj in self.store.state() {
                handler(Change::Added(&obj));
            }
        });
        handlers.push(Box::new(handler));
    }

    /// The cache itself, as kube-runtime's controllers read it.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// The dynamic type of the cached objects (`()` for typed resources).
    pub fn dyntype(&self) -> &K::DynamicType {
        &self.dyntype
    }

    /// The cached object `namespace/name` (namespace empty for cluster-scoped objects).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let key = ObjectRef::new_with(name, self.dyntype.clone());
        let key = if namespace.is_empty() {
            key
        } else {
            key.within(namespace)
        };
        self.store.get(&key)
    }

    /// Every cached object.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.store.state()
    }

    /// Cached objects for which `keep` holds.
    pub fn filter(&self, keep: impl Fn(&K) -> bool) -> Vec<Arc<K>> {
        self.store.state_filter(keep)
    }

    /// Cached objects in `namespace`.
    pub fn list_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.store
            .state_filter(|obj| obj.meta().namespace.as_deref().unwrap_or_default() == namespace)
    }

    /// Whether the first list completed.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until the first list completed.
    pub async fn wait_synced(&self) {
        // The sender lives as long as `self`, so this only ends when synced.
        let _ = self.synced.subscribe().wait_for(|synced| *synced).await;
    }

    /// A receiver that turns true once the first list completed.
    pub fn synced(&self) -> watch::Receiver<bool> {
        self.synced.subscribe()
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

fn dispatch<K>(handlers: &[Handler<K>], change: Change<'_, K>) {
    for handler in handlers {
        handler(change);
    }
}
