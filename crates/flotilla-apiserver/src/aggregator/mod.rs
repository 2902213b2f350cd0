//! kube-aggregator in the embedded server: APIServices (`apiregistration.k8s.io/v1`) with a `spec.service` take
//! over their group-version, and every request under `/apis/<group>/<version>` goes to that service
//! ([`proxy`]) with the caller's identity in `X-Remote-*` headers and the front-proxy client certificate.
//!
//! The pieces, each after its kube-aggregator counterpart: [`apiservice`] reads APIService objects; this module
//! keeps the index of them the request path consults ([`Aggregator::claims`]); [`resolve`] finds a service's
//! address (an ExternalName's name, otherwise a ready endpoint); [`transport`] builds each APIService's TLS
//! client; [`available`] keeps the `Available` condition; [`discovery`] fetches and caches what each backend
//! serves, for aggregated discovery and the OpenAPI v3 index; both run on [`queue`].
//!
//! Call direction: the server asks [`Aggregator::claims`] before routing and hands claimed requests to
//! [`proxy`]; discovery and OpenAPI read the index and the cache; the controllers here read the store and write
//! APIService status through the registry, as `flotilla_registry::controllers` do.

pub(crate) mod apiservice;
pub(crate) mod available;
pub(crate) mod discovery;
pub(crate) mod proxy;
pub(crate) mod queue;
pub(crate) mod resolve;
pub(crate) mod transport;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use tokio::sync::broadcast;
use tokio::sync::mpsc::{self, UnboundedSender};

use crate::tls::FrontProxy;
use apiservice::ApiService;
use flotilla_registry::context::Ctx as RegistryCtx;
use flotilla_store::ResKey;
use flotilla_store::hub::Event;
use transport::Transport;

/// Storage key of APIServices.
pub(crate) fn apiservices() -> ResKey {
    ResKey::new("apiregistration.k8s.io", "apiservices")
}

/// One APIService as the request path sees it: its spec, whether it is available, and the client that reaches
/// its service (kept across status changes so pooled connections survive).
#[derive(Debug)]
pub(crate) struct Registered {
    /// The APIService.
    pub spec: ApiService,
    /// Whether its `Available` condition is `True` (requests to an unavailable one fail at once).
    pub available: bool,
    /// The client, or why it could not be built (answered with 500).
    pub transport: Result<Arc<Transport>, String>,
}

/// The aggregator's state: the front-proxy identity, the index of APIServices and the discovery cache.
pub struct Aggregator {
    /// The registry whose APIServices, Services and endpoints the aggregator reads and whose APIService status
    /// it writes.
    pub(crate) registry: Arc<RegistryCtx>,
    front_proxy: FrontProxy,
    index: RwLock<Arc<BTreeMap<String, Arc<Registered>>>>,
    /// The `resourceVersion` of every stored APIService the index was built from, those it leaves out too.
    read: RwLock<BTreeMap<String, String>>,
    /// What each backend serves (aggregated discovery and the OpenAPI v3 index).
    pub(crate) discovery: discovery::Cache,
}

impl Aggregator {
    /// An aggregator over `registry` presenting `front_proxy`'s client certificate, with no APIServices yet.
    pub fn new(registry: Arc<RegistryCtx>, front_proxy: FrontProxy) -> Self {
        Self {
            registry,
            front_proxy,
            index: RwLock::default(),
            read: RwLock::default(),
            discovery: discovery::Cache::default(),
        }
    }

    /// The front-proxy CA and client certificate.
    pub fn front_proxy(&self) -> &FrontProxy {
        &self.front_proxy
    }

    /// Every APIService, by name.
    pub(crate) fn index(&self) -> Arc<BTreeMap<String, Arc<Registered>>> {
        self.index.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The APIService with a service that serves `group`/`version`, if any.
    pub(crate) fn remote(&self, group: &str, version: &str) -> Option<Arc<Registered>> {
        let name = apiservice::name_of(group, version);
        self.index()
            .get(&name)
            .filter(|r| r.spec.service.is_some())
            .cloned()
    }

    /// The APIService a request path belongs to: exactly `/apis/<group>/<version>` or below it, for an
    /// APIService with a service (a local one leaves the path to this server's own handlers). The index is
    /// brought up to date first when the stored APIService changed since it was read, so that a client which saw
    /// the APIService become available is routed by that state.
    pub(crate) fn claims(&self, path: &str) -> Option<Arc<Registered>> {
        let rest = path.strip_prefix("/apis/")?;
        let mut parts = rest.splitn(3, '/');
        let (group, version) = (parts.next()?, parts.next()?);
        if group.is_empty() || version.is_empty() {
            return None;
        }
        self.current(group, version)
    }

    /// [`Self::remote`], after reloading the index if the stored APIService differs from the indexed one.
    fn current(&self, group: &str, version: &str) -> Option<Arc<Registered>> {
        let name = apiservice::name_of(group, version);
        let stored = self.registry.store.get(&apiservices(), "", &name);
        let stored_rv = stored
            .as_deref()
            .and_then(|o| flotilla_registry::meta::meta_str(o, "resourceVersion"));
        let read = self
            .read
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&name)
            .cloned();
        if read.as_deref() != stored_rv {
            self.reload();
        }
        self.remote(group, version)
    }

    /// The APIService whose backend serves the OpenAPI v3 document at `/openapi/v3/apis/<group>/<version>`, as
    /// its backend's `/openapi/v3` index says.
    pub(crate) fn claims_openapi(&self, path: &str) -> Option<Arc<Registered>> {
        let rest = path
            .strip_prefix("/openapi/v3/apis/")?
            .trim_end_matches('/');
        let (group, version) = rest.split_once('/')?;
        let target = self.current(group, version)?;
        self.discovery
            .openapi_entry(&target.spec.name)
            .is_some()
            .then_some(target)
    }

    /// Rebuilds the index from the stored APIServices, keeping each transport whose TLS inputs did not change.
    pub(crate) fn reload(&self) {
        let old = self.index();
        let mut next = BTreeMap::new();
        let mut read = BTreeMap::new();
        for obj in self.registry.store.list(&apiservices(), None).1 {
            if let (Some(name), Some(rv)) = (
                flotilla_registry::meta::meta_str(&obj, "name"),
                flotilla_registry::meta::meta_str(&obj, "resourceVersion"),
            ) {
                read.insert(name.to_string(), rv.to_string());
            }
            let Some(spec) = ApiService::parse(&obj) else {
                continue;
            };
            let transport = match old.get(&spec.name) {
                Some(prev) if prev.spec.same_transport(&spec) => prev.transport.clone(),
                _ => Transport::build(&spec, &self.front_proxy)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
            };
            let registered = Registered {
                available: apiservice::is_available(&obj),
                spec,
                transport,
            };
            next.insert(registered.spec.name.clone(), Arc::new(registered));
        }
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        *self.read.write().unwrap_or_else(|e| e.into_inner()) = read;
    }
}

/// Loads the index and starts the availability controller and the discovery manager.
pub(crate) fn start(agg: &Arc<Aggregator>) {
    agg.reload();
    let (available, available_rx) = mpsc::unbounded_channel();
    let (discovery, discovery_rx) = mpsc::unbounded_channel();
    let watch = Watch {
        available,
        discovery,
    };
    watch.all(agg);
    tokio::spawn(watch.run(agg.clone()));
    tokio::spawn(available::run(agg.clone(), available_rx));
    tokio::spawn(discovery::run(agg.clone(), discovery_rx));
}

/// Turns store events into work: an APIService change reloads the index and asks both controllers to look at
/// it; a change to a Service or its endpoints asks the availability controller about the APIServices on it.
struct Watch {
    available: UnboundedSender<String>,
    discovery: UnboundedSender<String>,
}

impl Watch {
    fn all(&self, agg: &Aggregator) {
        for name in agg.index().keys() {
            let _ = self.available.send(name.clone());
            let _ = self.discovery.send(name.clone());
        }
    }

    /// The APIServices whose service is `namespace`/`name`.
    fn on_service(&self, agg: &Aggregator, namespace: &str, name: &str) {
        for (apiservice, r) in agg.index().iter() {
            if r.spec
                .service
                .as_ref()
                .is_some_and(|s| s.namespace == namespace && s.name == name)
            {
                let _ = self.available.send(apiservice.clone());
            }
        }
    }

    async fn run(self, agg: Arc<Aggregator>) {
        let hub = agg.registry.store.hub();
        let keys = [
            apiservices(),
            resolve::services(),
            resolve::endpoint_slices(),
            resolve::endpoints(),
        ];
        let mut rx: Vec<broadcast::Receiver<Arc<Event>>> =
            keys.iter().map(|k| hub.subscribe(k)).collect();
        // Changes between the first load and the subscriptions.
        agg.reload();
        self.all(&agg);
        loop {
            let next = futures::future::select_all(rx.iter_mut().map(|r| Box::pin(r.recv())));
            let (event, _, _) = tokio::select! {
                _ = agg.registry.shutdown.cancelled() => return,
                ev = next => ev,
            };
            let ev = match event {
                Ok(ev) => ev,
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    agg.reload();
                    self.all(&agg);
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let name = flotilla_registry::meta::meta_str(&ev.object, "name").unwrap_or("");
            let namespace =
                flotilla_registry::meta::meta_str(&ev.object, "namespace").unwrap_or("");
            if ev.res == apiservices() {
                agg.reload();
                let _ = self.available.send(name.to_string());
                let _ = self.discovery.send(name.to_string());
            } else if ev.res == resolve::endpoint_slices() {
                let service = ev
                    .object
                    .pointer("/metadata/labels/kubernetes.io~1service-name")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                self.on_service(&agg, namespace, service);
            } else {
                self.on_service(&agg, namespace, name);
            }
        }
    }
}

#[cfg(test)]
mod tests;
