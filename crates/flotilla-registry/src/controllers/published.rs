//! Objects every fresh cluster holds and keeps: in every active namespace the `default` ServiceAccount
//! (kube-controller-manager's serviceaccounts controller: recreated when deleted) and the `kube-root-ca.crt`
//! ConfigMap (its root-ca-cert-publisher: `ca.crt` is the server CA, restored when deleted or changed); and the
//! `kubernetes` Service in `default` with its Endpoints and EndpointSlice (kube-apiserver's bootstrap
//! controller: recreated when deleted, the endpoints pointed back at this server when changed). In-cluster
//! clients (client-go's `rest.InClusterConfig`, kube-rs' `Config::incluster`) and tools that look for
//! `kubernetes.default.svc` rely on them.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use flotilla_store::ResKey;
use flotilla_store::hub::{Event, EventType};
use serde_json::{Value, json};

use super::runtime::{Next, Reconciler, Watches};
use super::{Steps, ensure, namespaces_key, restore};
use crate::admission::ROOT_CA_CONFIGMAP;
use crate::context::Ctx;
use crate::meta;
use crate::status::{ApiError, ApiResult};
/// The `kubernetes` Service's cluster IP: the first host of the service CIDR, which allocation skips.
pub(crate) const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";
const KUBERNETES: &str = "kubernetes";
const DEFAULT_SERVICE_ACCOUNT: &str = "default";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

fn configmaps() -> ResKey {
    ResKey::new("", "configmaps")
}

fn serviceaccounts() -> ResKey {
    ResKey::new("", "serviceaccounts")
}

/// The address the `kubernetes` endpoints name: the listen address, or loopback when listening on every
/// interface (there is no single advertise address then).
fn endpoint(ctx: &Ctx) -> (IpAddr, u16) {
    let addr: Option<SocketAddr> = ctx.address.parse().ok();
    let port = addr.map_or(443, |a| a.port());
    let ip = addr
        .map(|a| a.ip())
        .filter(|ip| !ip.is_unspecified())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    (ip, port)
}

fn endpoints_subsets(ctx: &Ctx) -> Value {
    let (ip, port) = endpoint(ctx);
    json!([{"addresses": [{"ip": ip.to_string()}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}])
}

fn slice_body(ctx: &Ctx) -> (Value, Value, &'static str) {
    let (ip, port) = endpoint(ctx);
    let family = if ip.is_ipv4() { "IPv4" } else { "IPv6" };
    (
        json!([{"addresses": [ip.to_string()], "conditions": {"ready": true}}]),
        json!([{"name": "https", "port": port, "protocol": "TCP"}]),
        family,
    )
}

/// Creates the `kubernetes` Service, Endpoints and EndpointSlice where missing, and points the endpoints at
/// this server where they name another address.
async fn reconcile_service(ctx: &Ctx) -> ApiResult<()> {
    let mut steps = Steps::default();
    let (_, port) = endpoint(ctx);
    let svc = json!({
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP, "clusterIPs": [KUBERNETES_SERVICE_IP],
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]},
    });
    steps.note(ensure(ctx, "", "v1", "services", svc).await);
    let subsets = endpoints_subsets(ctx);
    let ep = json!({
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": subsets,
    });
    steps.note(ensure(ctx, "", "v1", "endpoints", ep).await);
    let endpoints_key = ResKey::new("", "endpoints");
    steps.note(
        restore(
            ctx,
            &endpoints_key,
            "default",
            KUBERNETES,
            &[("subsets", Some(&subsets))],
        )
        .await,
    );
    let (endpoints, ports, family) = slice_body(ctx);
    let slice = json!({
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": {"kubernetes.io/service-name": KUBERNETES}},
        "addressType": family, "endpoints": endpoints, "ports": ports,
    });
    steps.note(ensure(ctx, "discovery.k8s.io", "v1", "endpointslices", slice).await);
    let fields = [("endpoints", Some(&endpoints)), ("ports", Some(&ports))];
    let slices_key = ResKey::new("discovery.k8s.io", "endpointslices");
    steps.note(restore(ctx, &slices_key, "default", KUBERNETES, &fields).await);
    steps.finish()
}

/// Creates the `default` ServiceAccount and the CA ConfigMap in `ns` if the namespace is active, or restores
/// the ConfigMap's content.
async fn reconcile_namespace(ctx: &Ctx, ns: &str) -> ApiResult<()> {
    let active = ctx
        .store
        .get(&namespaces_key(), "", ns)
        .is_some_and(|n| !meta::is_deleting(&n));
    if !active {
        return Ok(());
    }
    let mut steps = Steps::default();
    let sa = json!({"metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": ns}});
    steps.note(ensure(ctx, "", "v1", "serviceaccounts", sa).await);
    let data = json!({"ca.crt": ctx.ca_pem});
    let cm = json!({
        "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": ns, "annotations": {"kubernetes.io/description": DESCRIPTION}},
        "data": data,
    });
    steps.note(ensure(ctx, "", "v1", "configmaps", cm).await);
    // Upstream's publisher also clears binaryData.
    let fields = [("data", Some(&data)), ("binaryData", None)];
    steps.note(restore(ctx, &configmaps(), ns, ROOT_CA_CONFIGMAP, &fields).await);
    steps.finish()
}

/// What the published-objects controller keeps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Published {
    /// The `default` ServiceAccount and CA ConfigMap of a namespace.
    Namespace(String),
    /// The `kubernetes` Service and its endpoints.
    Service,
}

/// The published-objects controller.
pub(crate) struct Publisher;

impl Reconciler for Publisher {
    type Key = Published;

    fn name(&self) -> &'static str {
        "published-objects"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![
            namespaces_key(),
            configmaps(),
            serviceaccounts(),
            ResKey::new("", "services"),
            ResKey::new("", "endpoints"),
            ResKey::new("discovery.k8s.io", "endpointslices"),
        ])
    }

    /// Every active namespace's objects and the `kubernetes` Service.
    fn resync(&mut self, ctx: &Ctx) -> Vec<Published> {
        let mut keys: Vec<Published> = ctx
            .store
            .list(&namespaces_key(), None)
            .1
            .iter()
            .filter_map(|ns| meta::meta_str(ns, "name"))
            .map(|name| Published::Namespace(name.to_string()))
            .collect();
        keys.push(Published::Service);
        keys
    }

    /// A new namespace; a change to a published object other than its creation (a deletion or an edit).
    fn observe(&mut self, _ctx: &Ctx, ev: &Event) -> Vec<Published> {
        let name = meta::meta_str(&ev.object, "name").unwrap_or("");
        let ns = meta::meta_str(&ev.object, "namespace").unwrap_or("");
        let key = if ev.res == namespaces_key() {
            (ev.kind == EventType::Added).then(|| Published::Namespace(name.to_string()))
        } else if ev.kind == EventType::Added {
            None
        } else if ev.res == configmaps() {
            (name == ROOT_CA_CONFIGMAP).then(|| Published::Namespace(ns.to_string()))
        } else if ev.res == serviceaccounts() {
            let gone = ev.kind == EventType::Deleted && name == DEFAULT_SERVICE_ACCOUNT;
            gone.then(|| Published::Namespace(ns.to_string()))
        } else {
            (ns == "default" && name == KUBERNETES).then_some(Published::Service)
        };
        key.into_iter().collect()
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, key: &Published) -> Result<Next, ApiError> {
        match key {
            Published::Namespace(ns) => reconcile_namespace(ctx, ns).await?,
            Published::Service => reconcile_service(ctx).await?,
        }
        Ok(Next::Done)
    }
}
