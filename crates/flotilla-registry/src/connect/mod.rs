//! Pods' connect subresources `log` and `exec` up to the kubelet: what kube-apiserver decides before it proxies one
//! (its pod registry's `LogLocation` and `ExecLocation`). The request's options are read and validated
//! ([`LogOptions`], [`ExecOptions`]), the pod and the container are checked, and the kubelet of the pod's Node is
//! located ([`Location`]); the server then proxies the request there. This module knows no HTTP.
//!
//! The kubelet is reached on the first of the Node's `status.addresses` in [`PREFERRED_ADDRESS_TYPES`] order, on
//! the port of `status.daemonEndpoints.kubeletEndpoint.Port` (10250 when unset), over HTTPS.
//!
//! Errors are kube-apiserver's: a missing pod is `pods "<name>" not found`; a container the pod does not have is
//! `400 container <c> is not valid for pod <pod>`; no container named on a pod with several is `400 a container name
//! must be specified for pod <pod>, choose one of: [<names>]`; an exec into a pod no scheduler has bound is `400 pod
//! <pod> does not have a host assigned`, while its logs are empty ([`log_location`] answers `None`, which the server
//! turns into `204 No Content`, as kube-apiserver does); invalid log options are `422 PodLogOptions "<pod>" is
//! invalid`.

mod options;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::Value;

use crate::context::Ctx;
use crate::status::{ApiError, ApiResult};
use flotilla_store::ResKey;

pub use options::{ExecOptions, LogOptions};

/// The order in which a Node's addresses are tried for its kubelet: kube-apiserver's default
/// (`--kubelet-preferred-address-types`) with `Hostname` moved from first to last. Members' Nodes name
/// themselves (`node-1`, `member1-node-1`) in `Hostname` addresses that no resolver knows, while the kubelet
/// that serves them (the simulator's, or KWOK's in the kube world, which starts its kube-apiservers with the same
/// order) listens on the `InternalIP` it reports.
pub const PREFERRED_ADDRESS_TYPES: [&str; 5] = [
    "InternalIP",
    "InternalDNS",
    "ExternalIP",
    "ExternalDNS",
    "Hostname",
];

/// The kubelet port kube-apiserver assumes when a Node reports none (`--kubelet-port`).
pub const DEFAULT_KUBELET_PORT: u16 = 10250;

/// Where a connect request goes: the kubelet's HTTPS endpoint, the path and the query it is sent with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The Node address (an IP address or a host name).
    pub host: String,
    /// The kubelet's port.
    pub port: u16,
    /// `/containerLogs/<ns>/<pod>/<container>` or `/exec/<ns>/<pod>/<container>`.
    pub path: String,
    /// The query, as pairs (the server encodes them as Go's `url.Values` does, keys sorted).
    pub query: Vec<(String, String)>,
}

impl Location {
    /// `host:port`, an IPv6 address in brackets (Go's `net.JoinHostPort`).
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Where the logs of `ns/name`'s container go, or `None` when no scheduler has bound the pod yet (its logs are
/// then empty).
///
/// # Errors
/// The pod or its Node missing (404), the container invalid (400), the Node without a usable address (500).
pub fn log_location(
    ctx: &Ctx,
    ns: &str,
    name: &str,
    opts: &LogOptions,
) -> ApiResult<Option<Location>> {
    let pod = pod(ctx, ns, name)?;
    let container = container(&pod, name, opts.container.as_deref())?;
    let Some(node) = node_name(&pod) else {
        return Ok(None);
    };
    let (host, port) = kubelet(ctx, node)?;
    Ok(Some(Location {
        host,
        port,
        path: format!("/containerLogs/{ns}/{name}/{container}"),
        query: opts.kubelet_query(),
    }))
}

/// Where an exec into `ns/name`'s container goes.
///
/// # Errors
/// The pod or its Node missing (404), the container invalid or the pod not bound to a Node (400), the Node without
/// a usable address (500).
pub fn exec_location(ctx: &Ctx, ns: &str, name: &str, opts: &ExecOptions) -> ApiResult<Location> {
    let pod = pod(ctx, ns, name)?;
    let container = container(&pod, name, opts.container.as_deref())?;
    let Some(node) = node_name(&pod) else {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    };
    let (host, port) = kubelet(ctx, node)?;
    Ok(Location {
        host,
        port,
        path: format!("/exec/{ns}/{name}/{container}"),
        query: opts.kubelet_query(),
    })
}

fn pod(ctx: &Ctx, ns: &str, name: &str) -> ApiResult<Arc<Value>> {
    ctx.store
        .get(&ResKey::new("", "pods"), ns, name)
        .ok_or_else(|| ApiError::not_found("pods", "", name))
}

fn node_name(pod: &Value) -> Option<&str> {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
}

/// The names of the pod's containers as kube visits them: init containers, containers, ephemeral containers.
fn container_names(pod: &Value) -> Vec<&str> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|list| pod.get("spec")?.get(*list)?.as_array())
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect()
}

/// The container a request is for: the one named, which the pod must have, or the pod's only container.
fn container(pod: &Value, name: &str, wanted: Option<&str>) -> ApiResult<String> {
    if let Some(wanted) = wanted.filter(|w| !w.is_empty()) {
        if container_names(pod).contains(&wanted) {
            return Ok(wanted.to_string());
        }
        return Err(ApiError::bad_request(format!(
            "container {wanted} is not valid for pod {name}"
        )));
    }
    let containers: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    match containers.as_slice() {
        [only] => Ok((*only).to_string()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            container_names(pod).join(" ")
        ))),
    }
}

/// The kubelet of Node `node`: its preferred address and its port.
fn kubelet(ctx: &Ctx, node: &str) -> ApiResult<(String, u16)> {
    let node = ctx
        .store
        .get(&ResKey::new("", "nodes"), "", node)
        .ok_or_else(|| ApiError::not_found("nodes", "", node))?;
    let addresses: Vec<(&str, &str)> = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|a| {
                    let field = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or_default();
                    (field("type"), field("address"))
                })
                .collect()
        })
        .unwrap_or_default();
    let host = PREFERRED_ADDRESS_TYPES
        .iter()
        .find_map(|wanted| {
            addresses
                .iter()
                .find(|(kind, _)| kind == wanted)
                .map(|(_, address)| (*address).to_string())
        })
        .ok_or_else(|| {
            // Go's `%v` of the addresses, as kube's `NoMatchError` prints them; not a Status error upstream, so
            // a 500 without a reason.
            let known: Vec<String> = addresses
                .iter()
                .map(|(kind, address)| format!("{{{kind} {address}}}"))
                .collect();
            ApiError::new(
                500,
                "",
                format!(
                    "no preferred addresses found; known addresses: [{}]",
                    known.join(" ")
                ),
            )
        })?;
    let port = node
        .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_i64)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_KUBELET_PORT);
    Ok((host, port))
}
