//! Service defaults and the cluster IP and node port allocation the real server does when creating one.

use super::{Allocations, set_if_absent, set_if_empty};
use serde_json::{Map, Value, json};

/// The first address handed out: `10.96.0.1` is the `kubernetes` Service's by convention, so user Services start
/// at `10.96.0.10`.
const FIRST_HOST: u32 = 10;
/// 10.96.0.0/12: the default service CIDR of kubeadm and kind clusters.
const CIDR_BASE: u32 = (10 << 24) | (96 << 16);
const CIDR_SIZE: u32 = 1 << 20;
const NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;

pub(super) fn service(obj: &mut Value, alloc: &mut Allocations) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    set_if_empty(spec, "type", json!("ClusterIP"));
    set_if_empty(spec, "sessionAffinity", json!("None"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    if ty == "ExternalName" {
        return;
    }
    set_if_empty(spec, "internalTrafficPolicy", json!("Cluster"));
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
        set_if_empty(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        set_if_absent(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    for p in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(p) = p.as_object_mut() else { continue };
        set_if_empty(p, "protocol", json!("TCP"));
        let unset_target = p
            .get("targetPort")
            .is_none_or(|t| t.is_null() || *t == json!(0) || *t == json!(""));
        if unset_target && let Some(port) = p.get("port").cloned() {
            p.insert("targetPort".to_string(), port);
        }
        let wants_node_port = matches!(ty.as_str(), "NodePort" | "LoadBalancer");
        if wants_node_port
            && p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) == 0
            && let Some(port) = alloc.next_node_port()
        {
            p.insert("nodePort".to_string(), json!(port));
        }
    }
    assign_cluster_ip(spec, alloc);
}

fn assign_cluster_ip(spec: &mut Map<String, Value>, alloc: &mut Allocations) {
    let current = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let ip = if current.is_empty() {
        match alloc.next_cluster_ip() {
            Some(ip) => ip,
            None => return,
        }
    } else {
        current
    };
    spec.insert("clusterIP".to_string(), json!(ip));
    set_if_absent(spec, "clusterIPs", json!([ip]));
    if ip != "None" {
        set_if_absent(spec, "ipFamilies", json!(["IPv4"]));
    }
    set_if_absent(spec, "ipFamilyPolicy", json!("SingleStack"));
}

impl Allocations {
    /// The lowest free address of 10.96.0.0/12 from 10.96.0.10 on.
    pub(super) fn next_cluster_ip(&mut self) -> Option<String> {
        (FIRST_HOST..CIDR_SIZE - 1)
            .map(|host| std::net::Ipv4Addr::from(CIDR_BASE + host).to_string())
            .find(|ip| {
                if self.cluster_ips.contains(ip) {
                    return false;
                }
                self.cluster_ips.insert(ip.clone());
                true
            })
    }

    /// The lowest free node port of 30000–32767.
    pub(super) fn next_node_port(&mut self) -> Option<u16> {
        NODE_PORTS.clone().find(|p| self.node_ports.insert(*p))
    }
}
