//! Where an APIService's service is reached, as kube-aggregator resolves it.
//!
//! An `ExternalName` Service is reached at its external name and the APIService's port (kube-aggregator's
//! cluster-IP resolver; this is what Flotilla registers, with host 127.0.0.1). Every other type is reached at one
//! of its ready endpoints (the endpoint resolver of `--enable-aggregator-routing=true`: no Service has a routable
//! cluster IP here): the Service port numbered as the APIService's port names the EndpointSlice port whose
//! number is used. A real kube-apiserver uses one resolver for all types; routing refuses ExternalName there.
//! With no EndpointSlices for the Service, its v1 Endpoints are read instead, standing in for the EndpointSlice
//! mirroring controller the embedded server does not run.

use rand::seq::IndexedRandom;
use serde_json::Value;

use super::apiservice::ServiceRef;
use flotilla_store::ResKey;
use flotilla_store::Store;

/// Why a service has no address (kube-aggregator's resolver errors, in its words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ResolveError {
    /// No such Service.
    #[error("service \"{0}\" not found")]
    NotFound(String),
    /// A Service type the aggregator cannot route to.
    #[error("unsupported service type \"{0}\"")]
    UnsupportedType(String),
    /// The Service has no port numbered as the APIService's.
    #[error("no service port {port} found for service \"{service}\"")]
    NoPort {
        /// APIService port.
        port: i64,
        /// Service name.
        service: String,
    },
    /// No ready endpoint serves the port.
    #[error("no endpoints available for service \"{0}\"")]
    NoEndpoints(String),
}

pub(crate) fn services() -> ResKey {
    ResKey::new("", "services")
}

pub(crate) fn endpoint_slices() -> ResKey {
    ResKey::new("discovery.k8s.io", "endpointslices")
}

pub(crate) fn endpoints() -> ResKey {
    ResKey::new("", "endpoints")
}

/// `host:port` as Go's `net.JoinHostPort` writes it (IPv6 in brackets).
pub(crate) fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The Service's type (`ClusterIP` when unset, as defaulting makes it).
pub(crate) fn service_type(svc: &Value) -> &str {
    svc.pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

/// The name of the Service port numbered `port`, if the Service has one.
pub(crate) fn port_name(svc: &Value, port: i64) -> Option<String> {
    svc.pointer("/spec/ports")?
        .as_array()?
        .iter()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        .map(|p| {
            p.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
}

/// One EndpointSlice port or Endpoints subset port: its name (`None` when unnamed in a slice) and number.
struct Port {
    name: Option<String>,
    number: Option<i64>,
}

/// A group of addresses sharing ports: an EndpointSlice or an Endpoints subset.
struct Group {
    ports: Vec<Port>,
    /// Addresses of the endpoints that are ready (or whose readiness is unknown).
    ready: Vec<String>,
}

fn ports_of(list: Option<&Value>, name_optional: bool) -> Vec<Port> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| Port {
            name: match p.get("name").and_then(Value::as_str) {
                Some(n) => Some(n.to_string()),
                // An Endpoints port's name is a plain string, empty when unset.
                None if name_optional => Some(String::new()),
                None => None,
            },
            number: p.get("port").and_then(Value::as_i64),
        })
        .collect()
}

/// The EndpointSlices of the Service, or its Endpoints' subsets when it has no slices.
fn groups(store: &Store, svc: &ServiceRef) -> Vec<Group> {
    let slices: Vec<Group> = store
        .list(&endpoint_slices(), Some(&svc.namespace))
        .1
        .iter()
        .filter(|s| {
            s.pointer("/metadata/labels/kubernetes.io~1service-name")
                .and_then(Value::as_str)
                == Some(svc.name.as_str())
        })
        .map(|s| Group {
            ports: ports_of(s.get("ports"), false),
            ready: s
                .get("endpoints")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|e| e.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false))
                .filter_map(|e| e.pointer("/addresses/0").and_then(Value::as_str))
                .map(str::to_string)
                .collect(),
        })
        .collect();
    if !slices.is_empty() {
        return slices;
    }
    let Some(ep) = store.get(&endpoints(), &svc.namespace, &svc.name) else {
        return Vec::new();
    };
    ep.get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|subset| Group {
            ports: ports_of(subset.get("ports"), true),
            ready: subset
                .get("addresses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|a| a.get("ip").and_then(Value::as_str))
                .map(str::to_string)
                .collect(),
        })
        .collect()
}

/// Whether the Service has any EndpointSlices (or, standing in for them, Endpoints subsets).
pub(crate) fn has_endpoint_groups(store: &Store, svc: &ServiceRef) -> bool {
    !groups(store, svc).is_empty()
}

/// Whether some slice has a ready endpoint and a port named `port_name` (kube's `hasAvailableEndpoint`).
pub(crate) fn has_available_endpoint(store: &Store, svc: &ServiceRef, port_name: &str) -> bool {
    groups(store, svc).iter().any(|g| {
        !g.ready.is_empty()
            && g.ports
                .iter()
                .any(|p| p.name.as_deref() == Some(port_name) && p.number.is_some())
    })
}

/// The `host:port` a request for the APIService's service goes to.
///
/// # Errors
/// The reasons of [`ResolveError`].
pub(crate) fn resolve(store: &Store, svc: &ServiceRef) -> Result<String, ResolveError> {
    let service = store
        .get(&services(), &svc.namespace, &svc.name)
        .ok_or_else(|| ResolveError::NotFound(svc.name.clone()))?;
    match service_type(&service) {
        "ExternalName" => {
            let host = service
                .pointer("/spec/externalName")
                .and_then(Value::as_str)
                .unwrap_or("");
            Ok(join_host_port(host, svc.port))
        }
        "ClusterIP" | "NodePort" | "LoadBalancer" => {
            let name = port_name(&service, svc.port).ok_or_else(|| ResolveError::NoPort {
                port: svc.port,
                service: svc.name.clone(),
            })?;
            let candidates: Vec<String> = groups(store, svc)
                .iter()
                .flat_map(|g| {
                    let number = g
                        .ports
                        .iter()
                        .find(|p| p.name.as_deref() == Some(name.as_str()))
                        .and_then(|p| p.number);
                    number
                        .into_iter()
                        .flat_map(move |n| g.ready.iter().map(move |ip| join_host_port(ip, n)))
                })
                .collect();
            candidates
                .choose(&mut rand::rng())
                .cloned()
                .ok_or_else(|| ResolveError::NoEndpoints(svc.name.clone()))
        }
        other => Err(ResolveError::UnsupportedType(other.to_string())),
    }
}
