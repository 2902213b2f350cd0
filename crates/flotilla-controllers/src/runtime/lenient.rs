//! Objects decoded one at a time, so that one an informer cannot read does not stop it.
//!
//! kube-runtime's watcher decodes a whole list page at once: a single object our types cannot read (a value a
//! closed enum does not know, a field of another type that an older or newer CRD let through) fails the list,
//! the informer never syncs, and every controller waiting on it never starts. Watching [`Lenient<K>`] instead,
//! each object decodes on its own: those that do not are set apart as [`Undecodable`] (their metadata, and
//! where and why decoding failed) for the informer to report, and the others go on.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An object as the watcher hands it: decoded, or set apart.
#[derive(Clone, Debug)]
pub(super) enum Lenient<K> {
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
