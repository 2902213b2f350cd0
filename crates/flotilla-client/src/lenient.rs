//! Objects decoded one at a time, so that one a watch cannot read does not stop it.
//!
//! kube-runtime's watcher decodes a whole list page at once: a single object our types cannot read (a value a
//! closed enum does not know, a field of another type that an older or newer CRD let through) fails the list,
//! the watch never completes its first list, and everything waiting on it (controllers, the interpreter's user
//! layers) never starts. Watching [`Lenient<K>`] instead, each object decodes on its own: those that do not are
//! set apart as [`Undecodable`] (their metadata, and where and why decoding failed), a [`Reporter`] reports
//! them, and the others go on ([`Reporter::readable`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::runtime::watcher::Event;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An object as the watcher hands it: decoded, or set apart.
#[derive(Clone, Debug)]
pub enum Lenient<K> {
    /// Read as `K`.
    Decoded(K),
    /// Not readable as `K`.
    Undecodable(Box<Undecodable>),
}

/// An object its informer's type cannot read.
#[derive(Clone, Debug)]
pub struct Undecodable {
    /// Its metadata (name, namespace, uid, resourceVersion), read on its own.
    pub meta: ObjectMeta,
    /// Where decoding failed (a JSON path such as `spec.placement.replicaScheduling.replicaSchedulingType`)
    /// and why.
    pub error: String,
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match serde_path_to_error::deserialize::<_, K>(&value) {
            Ok(object) => Ok(Lenient::Decoded(object)),
            Err(err) => {
                let path = err.path().to_string();
                let meta = value
                    .get("metadata")
                    .and_then(|meta| ObjectMeta::deserialize(meta).ok())
                    .unwrap_or_default();
                let error = if path == "." {
                    err.into_inner().to_string()
                } else {
                    format!("{path}: {}", err.into_inner())
                };
                Ok(Lenient::Undecodable(Box::new(Undecodable { meta, error })))
            }
        }
    }
}

/// The resource of `K`: the watcher lists and watches `K`'s URL, across namespaces or within one (the scope is
/// left to the informer, which knows whether it was asked to watch one namespace only).
impl<K: Resource> Resource for Lenient<K> {
    type DynamicType = K::DynamicType;
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn api_version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::api_version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn url_path(dt: &Self::DynamicType, namespace: Option<&str>) -> String {
        K::url_path(dt, namespace)
    }

    fn meta(&self) -> &ObjectMeta {
        match self {
            Lenient::Decoded(object) => object.meta(),
            Lenient::Undecodable(undecodable) => &undecodable.meta,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Lenient::Decoded(object) => object.meta_mut(),
            Lenient::Undecodable(undecodable) => &mut undecodable.meta,
        }
    }
}

/// An object a watch cannot read, as a [`Reporter`]'s hook is told.
#[derive(Debug)]
pub struct UndecodableObject<'a> {
    /// What is watched (`control-plane: resourcebindings`).
    pub informer: &'a str,
    /// The object's `apiVersion` and `kind`.
    pub api_version: &'a str,
    /// See `api_version`.
    pub kind: &'a str,
    /// Its metadata and why it could not be read.
    pub object: &'a Undecodable,
}

/// Told of every object a watch cannot read (once per resourceVersion).
pub type UndecodableHook = Arc<dyn Fn(&UndecodableObject<'_>) + Send + Sync>;

/// One watch's undecodable objects: each reported once per resourceVersion, with a warning naming it and the
/// field, and to the hook. A hook set after objects were reported is told of those still unreadable, so one
/// attached once the process has an Event sink misses none of the first list.
pub struct Reporter {
    description: String,
    api_version: String,
    kind: String,
    hook: Mutex<Option<UndecodableHook>>,
    /// The objects reported and still unreadable, by namespace and name.
    reported: Mutex<HashMap<(String, String), Undecodable>>,
}

impl Reporter {
    /// A reporter for the watch `description` names, of objects of `api_version` and `kind`.
    pub fn new(
        description: impl Into<String>,
        api_version: impl Into<String>,
        kind: impl Into<String>,
        hook: Option<UndecodableHook>,
    ) -> Self {
        Reporter {
            description: description.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            hook: Mutex::new(hook),
            reported: Mutex::default(),
        }
    }

    /// Sets the hook, and tells it of the objects reported before that are still unreadable.
    pub fn set_hook(&self, hook: UndecodableHook) {
        let reported: Vec<Undecodable> = lock(&self.reported).values().cloned().collect();
        for object in &reported {
            hook(&self.describe(object));
        }
        *lock(&self.hook) = Some(hook);
    }

    /// What the watch describes itself as.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The event with undecodable objects reported and replaced by the version `cached` still holds, where
    /// there is one (kept through a relist, deleted by key); `None` when nothing is left to apply. A version
    /// that could be read before thus stays as it was: the watcher's user neither loses the object nor acts on
    /// what it cannot understand.
    pub fn readable<K>(
        &self,
        event: Event<Lenient<K>>,
        cached: impl Fn(&Undecodable) -> Option<K>,
    ) -> Option<Event<K>> {
        match event {
            Event::Apply(Lenient::Decoded(object)) => Some(Event::Apply(object)),
            Event::Apply(Lenient::Undecodable(object)) => {
                self.report(&object);
                None
            }
            Event::InitApply(Lenient::Decoded(object)) => Some(Event::InitApply(object)),
            Event::InitApply(Lenient::Undecodable(object)) => {
                self.report(&object);
                cached(&object).map(Event::InitApply)
            }
            Event::Delete(Lenient::Decoded(object)) => Some(Event::Delete(object)),
            Event::Delete(Lenient::Undecodable(object)) => {
                self.forget(&object);
                cached(&object).map(Event::Delete)
            }
            Event::Init => Some(Event::Init),
            Event::InitDone => Some(Event::InitDone),
        }
    }

    fn report(&self, object: &Undecodable) {
        let key = key(object);
        let version = object.meta.resource_version.clone().unwrap_or_default();
        let previous = lock(&self.reported).insert(key.clone(), object.clone());
        if previous
            .is_some_and(|previous| previous.meta.resource_version.as_deref() == Some(&version))
        {
            return;
        }
        let object_name = if key.0.is_empty() {
            format!("{} {}", self.kind, key.1)
        } else {
            format!("{} {}/{}", self.kind, key.0, key.1)
        };
        tracing::warn!(
            informer = %self.description,
            object = %object_name,
            resource_version = %version,
            error = %object.error,
            "cannot read the object; leaving it out (its last readable version, if any, stays cached)"
        );
        let hook = lock(&self.hook).clone();
        if let Some(hook) = hook {
            hook(&self.describe(object));
        }
    }

    fn forget(&self, object: &Undecodable) {
        lock(&self.reported).remove(&key(object));
    }

    fn describe<'a>(&'a self, object: &'a Undecodable) -> UndecodableObject<'a> {
        UndecodableObject {
            informer: &self.description,
            api_version: &self.api_version,
            kind: &self.kind,
            object,
        }
    }
}

fn key(object: &Undecodable) -> (String, String) {
    (
        object.meta.namespace.clone().unwrap_or_default(),
        object.meta.name.clone().unwrap_or_default(),
    )
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each map is consistent between statements; losing a report matters less than stopping the watch.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
