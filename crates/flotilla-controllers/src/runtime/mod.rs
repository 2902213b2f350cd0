//! The controller runtime, on kube-runtime: informers (kube-runtime reflector stores fed by its watcher, with
//! change handlers) shared between every controller that watches the same resource, and controllers on
//! kube-runtime's applier with the error policy, spans, metrics and logs every reconcile gets.

pub mod controller;
pub mod informer;
pub mod permits;
pub mod reconcile;
#[cfg(test)]
mod tests;

use std::any::Any;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use kube::api::{ApiResource, DynamicObject};
use kube::runtime::watcher;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

pub use controller::{Action, Backoff, Controller, Runtime, Trigger, spec_changed};
pub use flotilla_client::lenient::{Undecodable, UndecodableHook, UndecodableObject};
pub use informer::{Change, Informer};
pub use permits::Pool;

type Entry = (Arc<dyn Any + Send + Sync>, JoinHandle<()>);

/// The running informers, or none for good once shut down.
#[derive(Default)]
struct Entries {
    running: HashMap<String, Entry>,
    /// Set by [`Informers::shutdown`]: a holder of a stale handle (a member replaced by a newer client, a task
    /// still finishing at shutdown) gets an informer that watches nothing rather than one nobody stops, which
    /// would keep reconnecting to a server that is gone.
    closed: bool,
}

/// Informers over one API server, shared by every controller that watches the same resource.
#[derive(Clone)]
pub struct Informers {
    client: Client,
    name: Arc<str>,
    entries: Arc<Mutex<Entries>>,
    hook: Option<UndecodableHook>,
    /// The typed informers that watch one namespace only, by key.
    within: Arc<HashMap<String, String>>,
}

impl Informers {
    /// Informers over `client`'s API server; `name` appears in logs (`control-plane`, a cluster name).
    pub fn new(client: Client, name: &str) -> Self {
        Informers {
            client,
            name: Arc::from(name),
            entries: Arc::default(),
            hook: None,
            within: Arc::default(),
        }
    }

    /// The same informers, with the one of namespaced resource `K` watching `namespace` only: for a process
    /// allowed to list `K` there and nowhere else (an agent's Works). Set before that informer starts.
    #[must_use]
    pub fn watching_within<K>(mut self, namespace: &str) -> Self
    where
        K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>,
    {
        Arc::make_mut(&mut self.within).insert(typed_key::<K>(), namespace.to_owned());
        self
    }

    /// The same informers, each telling `hook` of every object it cannot read (besides logging it). Set before
    /// the first informer starts.
    #[must_use]
    pub fn reporting_undecodable(mut self, hook: UndecodableHook) -> Self {
        self.hook = Some(hook);
        self
    }

    /// The client the informers watch through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cluster-wide informer of a typed resource, started on first use.
    pub fn typed<K>(&self) -> Arc<Informer<K>>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let key = typed_key::<K>();
        let mut entries = self.lock();
        if let Some(found) = entries
            .running
            .get(&key)
            .and_then(|(any, _)| any.clone().downcast::<Informer<K>>().ok())
        {
            return found;
        }
        if entries.closed {
            return Informer::detached((), key).0;
        }
        let (informer, task) = Informer::start_within(
            self.client.clone(),
            self.within.get(&key).map(String::as_str),
            (),
            watcher::Config::default(),
            format!("{}: {}", self.name, K::plural(&())),
            self.hook.clone(),
        );
        entries.running.insert(key, (informer.clone(), task));
        informer
    }

    /// The cluster-wide informer of a dynamic resource, started on first use.
    pub fn dynamic(&self, resource: &ApiResource) -> Arc<Informer<DynamicObject>> {
        let key = dynamic_key(resource);
        let mut entries = self.lock();
        if let Some(found) = entries
            .running
            .get(&key)
            .and_then(|(any, _)| any.clone().downcast::<Informer<DynamicObject>>().ok())
        {
            return found;
        }
        if entries.closed {
            return Informer::detached(resource.clone(), key).0;
        }
        let (informer, task) = Informer::start(
            self.client.clone(),
            resource.clone(),
            watcher::Config::default(),
            format!(
                "{}: {}/{}",
                self.name, resource.api_version, resource.plural
            ),
            self.hook.clone(),
        );
        entries.running.insert(key, (informer.clone(), task));
        informer
    }

    /// The informer of a dynamic resource if one is running.
    pub fn dynamic_if_started(
        &self,
        resource: &ApiResource,
    ) -> Option<Arc<Informer<DynamicObject>>> {
        self.lock()
            .running
            .get(&dynamic_key(resource))
            .and_then(|(any, _)| any.clone().downcast::<Informer<DynamicObject>>().ok())
    }

    /// Stops the informer of a dynamic resource (its API went away).
    pub fn stop_dynamic(&self, resource: &ApiResource) {
        if let Some((_, task)) = self.lock().running.remove(&dynamic_key(resource)) {
            task.abort();
        }
    }

    /// Stops every informer; none starts afterwards.
    pub fn shutdown(&self) {
        let mut entries = self.lock();
        entries.closed = true;
        for (_, (_, task)) in entries.running.drain() {
            task.abort();
        }
    }
}

fn typed_key<K: Resource<DynamicType = ()>>() -> String {
    format!("typed:{}", ApiResource::erase::<K>(&()).api_version) + "/" + &K::plural(&())
}

fn dynamic_key(resource: &ApiResource) -> String {
    format!("dynamic:{}/{}", resource.api_version, resource.plural)
}
