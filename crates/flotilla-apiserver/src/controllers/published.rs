//! Objects every fresh cluster holds and keeps: in every active namespace the `default` ServiceAccount
//! (kube-controller-manager's serviceaccounts controller: recreated when deleted) and the `kube-root-ca.crt`
//! ConfigMap (its root-ca-cert-publisher: `ca.crt` is the server CA, restored when deleted or changed); and the `kubernetes` Service in `default` with its Endpoints and EndpointSlice (kube-apiserver's
//! bootstrap controller: recreated when deleted, the endpoints pointed back at this server when changed).
//! In-cluster clients (client-go's `rest.InClusterConfig`, kube-rs' `Config::incluster`) and tools that
//! look for `kubernetes.default.svc` rely on them. Also the `cluster-admin` ClusterRole and binding kube-apiserver's
//! RBAC bootstrap creates.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast::{self, error::RecvError};

use super::{ensure, namespaces_key};
use crate::catalog::ResKey;
use crate::context::Ctx;
use crate::meta;
use crate::registry::{self, Outcome};
use crate::watch::hub::{Event, EventType};

/// Name of the ConfigMap holding the cluster CA in every namespace.
pub(crate) const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
/// The `kubernetes` Service's cluster IP: the first host of the service CIDR, which allocation skips.
pub(crate) const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";
const KUBERNETES: &str = "kubernetes";
const DEFAULT_SERVICE_ACCOUNT: &str = "default";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
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
async fn reconcile_service(ctx: &Ctx) {
    let (_, port) = endpoint(ctx);
    let svc = json!({
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP, "clusterIPs": [KUBERNETES_SERVICE_IP],
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]},
    });
    let _ = ensure(ctx, "", "v1", "services", svc).await;
    let subsets = endpoints_subsets(ctx);
    let ep = json!({
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": subsets,
    });
    let _ = ensure(ctx, "", "v1", "endpoints", ep).await;
    let endpoints_key = ResKey::new("", "endpoints");
    restore(
        ctx,
        &endpoints_key,
        "default",
        KUBERNETES,
        &[("subsets", Some(&subsets))],
    )
    .await;
    let (endpoints, ports, family) = slice_body(ctx);
    let slice = json!({
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": {"kubernetes.io/service-name": KUBERNETES}},
        "addressType": family, "endpoints": endpoints, "ports": ports,
    });
    let _ = ensure(ctx, "discovery.k8s.io", "v1", "endpointslices", slice).await;
    let fields = [("endpoints", Some(&endpoints)), ("ports", Some(&ports))];
    let slices_key = ResKey::new("discovery.k8s.io", "endpointslices");
    restore(ctx, &slices_key, "default", KUBERNETES, &fields).await;
}

/// Sets each of `fields` (`None`: absent) on `ns/name` of `res` where the stored object differs; an object
/// being deleted is left alone.
pub(super) async fn restore(
    ctx: &Ctx,
    res: &ResKey,
    ns: &str,
    name: &str,
    fields: &[(&str, Option<&Value>)],
) {
    let _ = registry::guaranteed_update(&ctx.store, res, ns, name, false, |cur| {
        let Some(cur) = cur.filter(|c| !meta::is_deleting(c)) else {
            return Ok(Outcome::Unchanged);
        };
        if fields.iter().all(|(k, want)| cur.get(*k) == *want) {
            return Ok(Outcome::Unchanged);
        }
        let mut new = cur.as_ref().clone();
        if let Some(obj) = new.as_object_mut() {
            for (k, want) in fields {
                match want {
                    Some(v) => obj.insert((*k).to_string(), (*v).clone()),
                    None => obj.remove(*k),
                };
            }
        }
        Ok(Outcome::Put(new))
    })
    .await;
}

/// Creates the `default` ServiceAccount and the CA ConfigMap in `ns` if the namespace is active, or restores
/// the ConfigMap's content.
async fn reconcile_namespace(ctx: &Ctx, ns: &str) {
    let active = ctx
        .store
        .get(&namespaces_key(), "", ns)
        .is_some_and(|n| !meta::is_deleting(&n));
    if !active {
        return;
    }
    let sa = json!({"metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": ns}});
    let _ = ensure(ctx, "", "v1", "serviceaccounts", sa).await;
    let data = json!({"ca.crt": ctx.ca_pem});
    let cm = json!({
        "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": ns, "annotations": {"kubernetes.io/description": DESCRIPTION}},
        "data": data,
    });
    let _ = ensure(ctx, "", "v1", "configmaps", cm).await;
    // Upstream's publisher also clears binaryData.
    let fields = [("data", Some(&data)), ("binaryData", None)];
    restore(ctx, &configmaps(), ns, ROOT_CA_CONFIGMAP, &fields).await;
}

/// Creates kube-apiserver's `cluster-admin` ClusterRole and its binding to `system:masters` where missing, as
/// its RBAC bootstrap does at every start (roles are stored, not enforced, but installers and `kubectl
/// describe` name them).
pub(crate) async fn bootstrap_rbac(ctx: &Ctx) {
    let meta = json!({"name": "cluster-admin",
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}});
    let role = json!({"metadata": meta, "rules": [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["*"]},
    ]});
    let _ = ensure(ctx, RBAC_GROUP, "v1", "clusterroles", role).await;
    let binding = json!({"metadata": meta,
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": "system:masters"}]});
    let _ = ensure(ctx, RBAC_GROUP, "v1", "clusterrolebindings", binding).await;
}

/// Publishes the `default` ServiceAccount and CA ConfigMap in every active namespace and the `kubernetes`
/// Service and endpoints.
pub(crate) async fn resync(ctx: &Ctx) {
    for ns in ctx.store.list(&namespaces_key(), None).1 {
        if let Some(name) = meta::meta_str(&ns, "name") {
            reconcile_namespace(ctx, name).await;
        }
    }
    reconcile_service(ctx).await;
}

/// What an event asks for.
enum Work {
    Namespace(String),
    Service,
    Resync,
    Stop,
}

fn work_for(ev: Result<Arc<Event>, RecvError>) -> Option<Work> {
    let ev = match ev {
        Ok(ev) => ev,
        Err(RecvError::Lagged(_)) => return Some(Work::Resync),
        Err(RecvError::Closed) => return Some(Work::Stop),
    };
    let name = meta::meta_str(&ev.object, "name").unwrap_or("");
    let ns = meta::meta_str(&ev.object, "namespace").unwrap_or("");
    if ev.res == namespaces_key() {
        return (ev.kind == EventType::Added).then(|| Work::Namespace(name.to_string()));
    }
    if ev.kind == EventType::Added {
        return None;
    }
    if ev.res == configmaps() {
        return (name == ROOT_CA_CONFIGMAP).then(|| Work::Namespace(ns.to_string()));
    }
    if ev.res == serviceaccounts() {
        let gone = ev.kind == EventType::Deleted && name == DEFAULT_SERVICE_ACCOUNT;
        return gone.then(|| Work::Namespace(ns.to_string()));
    }
    (ns == "default" && name == KUBERNETES).then_some(Work::Service)
}

/// Creates the published objects, then keeps them until shutdown.
pub(crate) async fn run(ctx: Arc<Ctx>) {
    let hub = ctx.store.hub();
    let mut rx: Vec<broadcast::Receiver<Arc<Event>>> = [
        namespaces_key(),
        configmaps(),
        serviceaccounts(),
        ResKey::new("", "services"),
        ResKey::new("", "endpoints"),
        ResKey::new("discovery.k8s.io", "endpointslices"),
    ]
    .iter()
    .map(|k| hub.subscribe(k))
    .collect();
    resync(&ctx).await;
    loop {
        let next = futures::future::select_all(rx.iter_mut().map(|r| Box::pin(r.recv())));
        let (ev, _, _) = tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            ev = next => ev,
        };
        match work_for(ev) {
            None => {}
            Some(Work::Namespace(ns)) => reconcile_namespace(&ctx, &ns).await,
            Some(Work::Service) => reconcile_service(&ctx).await,
            Some(Work::Resync) => resync(&ctx).await,
            Some(Work::Stop) => return,
        }
    }
}
