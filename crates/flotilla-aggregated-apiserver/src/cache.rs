//! What the proxy reads about members, with the server's own identity: every Cluster (a reflector over the
//! control plane's Clusters, started with the server) and the Secrets they name (a reflector per namespace,
//! started the first time a Secret of that namespace is wanted). A miss in a cache falls back to a GET, as
//! Karmada's secret getter falls back from its lister, so an object just created is found at once.
//!
//! Clusters are read through the CRD's `storage` version ([`StoredCluster`]): once the APIService is
//! registered, `v1alpha1` on the control plane is this very server, and reading it would go round in a circle.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::cluster::v1alpha1::Cluster;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ClusterResourceScope;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_stream};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::RequestError;
use crate::names;

/// A Cluster as the control plane serves it at the CRD's `storage` version (the same schema as `v1alpha1`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub(crate) struct StoredCluster(pub(crate) Cluster);

impl Resource for StoredCluster {
    type DynamicType = ();
    type Scope = ClusterResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "Cluster".into()
    }

    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        names::GROUP.into()
    }

    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        names::STORAGE_VERSION.into()
    }

    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        names::RESOURCE.into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

/// One reflected collection and whether it has been listed once.
#[derive(Clone)]
struct Reflected<K: Resource + 'static>
where
    K::DynamicType: std::hash::Hash + Eq,
{
    store: Store<K>,
    synced: watch::Receiver<bool>,
}

impl<K> Reflected<K>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
    K::DynamicType: std::hash::Hash + Eq + Clone + Default,
{
    /// Starts reflecting `api` until `shutdown`.
    fn start(api: Api<K>, shutdown: CancellationToken) -> Reflected<K> {
        let (store, writer) = reflector::store();
        let (mark_synced, synced) = watch::channel(false);
        let events = reflector::reflector(
            writer,
            watch_stream(api, watcher::Config::default()).default_backoff(),
        );
        tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    event = events.next() => match event {
                        Some(Ok(Event::InitDone)) => {
                            mark_synced.send_replace(true);
                        }
                        Some(Ok(_)) => {}
                        Some(Err(error)) => tracing::debug!(
                            error = %crate::error::chain(&error),
                            "watching {} for the cluster proxy",
                            K::plural(&K::DynamicType::default())
                        ),
                        None => break,
                    },
                }
            }
        });
        Reflected { store, synced }
    }

    fn synced(&self) -> bool {
        *self.synced.borrow()
    }
}

/// The Clusters and their Secrets.
pub(crate) struct Members {
    client: Client,
    clusters: Reflected<StoredCluster>,
    secrets: Mutex<HashMap<String, Reflected<Secret>>>,
    shutdown: CancellationToken,
}

impl Members {
    /// Starts reflecting the control plane's Clusters through `client` until `shutdown`.
    pub(crate) fn start(client: Client, shutdown: CancellationToken) -> Members {
        let clusters = Reflected::start(Api::all(client.clone()), shutdown.clone());
        Members {
            client,
            clusters,
            secrets: Mutex::default(),
            shutdown,
        }
    }

    /// Whether the Clusters have been listed once.
    pub(crate) fn synced(&self) -> bool {
        self.clusters.synced()
    }

    /// Every Cluster, by name.
    pub(crate) fn clusters(&self) -> Vec<Arc<Cluster>> {
        let mut all: Vec<Arc<Cluster>> = self
            .clusters
            .store
            .state()
            .into_iter()
            .map(|stored| Arc::new(stored.0.clone()))
            .collect();
        all.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        all
    }

    /// The Cluster `name`.
    ///
    /// # Errors
    /// [`RequestError::ClusterNotFound`], or [`RequestError::ControlPlane`] when the GET failed otherwise.
    pub(crate) async fn cluster(&self, name: &str) -> Result<Arc<Cluster>, RequestError> {
        if let Some(found) = self.clusters.store.get(&ObjectRef::new(name)) {
            return Ok(Arc::new(found.0.clone()));
        }
        let api: Api<StoredCluster> = Api::all(self.client.clone());
        match api.get_opt(name).await {
            Ok(Some(cluster)) => Ok(Arc::new(cluster.0)),
            Ok(None) => Err(RequestError::ClusterNotFound {
                cluster: name.to_owned(),
            }),
            Err(source) => Err(RequestError::ControlPlane {
                action: format!("read cluster {name}"),
                source,
            }),
        }
    }

    /// The Secret `namespace/name`.
    ///
    /// # Errors
    /// [`RequestError::SecretNotFound`], or [`RequestError::ControlPlane`] when the GET failed otherwise.
    pub(crate) async fn secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<Secret>, RequestError> {
        let reflected = self.secrets_of(namespace);
        if let Some(found) = reflected.store.get(&ObjectRef::new(name).within(namespace)) {
            return Ok(found);
        }
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        match api.get_opt(name).await {
            Ok(Some(secret)) => Ok(Arc::new(secret)),
            Ok(None) => Err(RequestError::SecretNotFound {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            }),
            Err(source) => Err(RequestError::ControlPlane {
                action: format!("read secret {namespace}/{name}"),
                source,
            }),
        }
    }

    fn secrets_of(&self, namespace: &str) -> Reflected<Secret> {
        let mut secrets = self.secrets.lock().unwrap_or_else(PoisonError::into_inner);
        secrets
            .entry(namespace.to_owned())
            .or_insert_with(|| {
                Reflected::start(
                    Api::namespaced(self.client.clone(), namespace),
                    self.shutdown.clone(),
                )
            })
            .clone()
    }
}
