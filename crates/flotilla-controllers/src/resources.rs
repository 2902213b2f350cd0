//! The control plane's served resources, kept current by discovery (on a timer and whenever CRDs change), so
//! controllers can turn a template's apiVersion/kind into an API path.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use kube::api::DynamicObject;
use kube::core::GroupVersionKind;
use kube::{Api, Client};
use tokio::sync::watch;

use crate::discovery::{ServedResource, discover, resolve_kind};
use crate::error::{Error, Result};
use crate::objects::split_api_version;

type Index = HashMap<(String, String, String), ServedResource>;

/// The control plane's served resources.
#[derive(Clone)]
pub struct Resources {
    client: Client,
    index: Arc<RwLock<Index>>,
    changed: Arc<watch::Sender<u64>>,
}

fn key(gvk: &GroupVersionKind) -> (String, String, String) {
    (gvk.group.clone(), gvk.version.clone(), gvk.kind.clone())
}

impl Resources {
    /// An empty registry over `client`; call [`Resources::refresh`] to fill it.
    pub fn new(client: Client) -> Self {
        Resources {
            client,
            index: Arc::default(),
            changed: Arc::new(watch::Sender::new(0)),
        }
    }

    /// Re-runs discovery; subscribers are notified when the set of served resources changed.
    ///
    /// # Errors
    /// When the group lists cannot be read.
    pub async fn refresh(&self) -> Result<()> {
        let found = discover(&self.client)
            .await
            .map_err(|source| Error::kube("discover", "the control plane's APIs", source))?;
        let mut fresh: Index = HashMap::new();
        for served in found.resources {
            fresh.insert(key(&served.gvk()), served);
        }
        let changed = {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            let changed = *index != fresh;
            *index = fresh;
            changed
        };
        if changed {
            self.changed.send_modify(|generation| *generation += 1);
        }
        Ok(())
    }

    /// The served resource of a kind, if discovery saw it.
    pub fn get(&self, gvk: &GroupVersionKind) -> Option<ServedResource> {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key(gvk))
            .cloned()
    }

    /// The served resource of `apiVersion`/`kind`.
    pub fn get_by_api_version(&self, api_version: &str, kind: &str) -> Option<ServedResource> {
        let (group, version) = split_api_version(api_version);
        self.get(&GroupVersionKind::gvk(group, version, kind))
    }

    /// The served resource of a kind, asking the server when discovery has not seen it yet (a CRD created a
    /// moment ago).
    ///
    /// # Errors
    /// `Waiting` when the server does not serve the kind; `Kube` when asking failed.
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<ServedResource> {
        if let Some(found) = self.get_by_api_version(api_version, kind) {
            return Ok(found);
        }
        let (group, version) = split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        match resolve_kind(&self.client, &gvk).await {
            Ok(Some(found)) => {
                self.index
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key(&gvk), found.clone());
                Ok(found)
            }
            Ok(None) => Err(Error::waiting(format!("{api_version} {kind} to be served"))),
            Err(err) if flotilla_client::api_error::is_not_found(&err) => {
                Err(Error::waiting(format!("{api_version} {kind} to be served")))
            }
            Err(source) => Err(Error::kube(
                "discover",
                format!("{api_version} {kind}"),
                source,
            )),
        }
    }

    /// Every served resource.
    pub fn all(&self) -> Vec<ServedResource> {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// A receiver that changes whenever the set of served resources changes.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// A dynamic API for `served` objects in `namespace` (ignored for cluster-scoped resources; empty means
    /// all namespaces).
    pub fn api(&self, served: &ServedResource, namespace: &str) -> Api<DynamicObject> {
        dynamic_api(&self.client, served, namespace)
    }
}

/// A dynamic API for `served` objects in `namespace` on `client`'s server.
pub fn dynamic_api(
    client: &Client,
    served: &ServedResource,
    namespace: &str,
) -> Api<DynamicObject> {
    if served.namespaced && !namespace.is_empty() {
        Api::namespaced_with(client.clone(), namespace, &served.resource)
    } else {
        Api::all_with(client.clone(), &served.resource)
    }
}
