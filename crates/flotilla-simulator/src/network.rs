//! Load-balancer addresses as a cloud's service controller and an ingress controller report them: a Service of
//! type `LoadBalancer` and every Ingress get one address in `status.loadBalancer.ingress`, stable per object
//! (derived from its uid) and kept once given. A Service that stops being a load balancer loses its address.

use serde_json::{Value, json};

use super::common::{fnv32, name, status_of};

/// A stable address in 192.0.2.0/24 (TEST-NET-1, reserved for documentation: never a real host).
fn address(obj: &Value) -> String {
    let key = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_else(|| name(obj));
    format!("192.0.2.{}", fnv32(key.as_bytes()) % 254 + 1)
}

/// The ingress list already reported, if any.
fn reported(obj: &Value) -> Option<&Vec<Value>> {
    obj.pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .filter(|list| !list.is_empty())
}

/// Service status: an address for a `LoadBalancer`, none otherwise.
pub(crate) fn service(obj: &Value) -> Value {
    let mut status = status_of(obj);
    let balancer = obj.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer");
    match (balancer, reported(obj)) {
        (true, Some(_)) => {}
        // The API server defaults `ipMode` to VIP for an address given as an IP; written out as it reads back.
        (true, None) => {
            status.insert(
                "loadBalancer".into(),
                json!({"ingress": [{"ip": address(obj), "ipMode": "VIP"}]}),
            );
        }
        (false, Some(_)) => {
            status.insert("loadBalancer".into(), json!({}));
        }
        (false, None) => {}
    }
    Value::Object(status)
}

/// Ingress status: the address of the ingress controller's load balancer.
pub(crate) fn ingress(obj: &Value) -> Value {
    let mut status = status_of(obj);
    if reported(obj).is_none() {
        status.insert(
            "loadBalancer".into(),
            json!({"ingress": [{"ip": address(obj)}]}),
        );
    }
    Value::Object(status)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use crate::{Kind, MemberView, pending_status};

    const NOW: &str = "2026-01-01T00:00:00Z";

    #[test]
    fn a_load_balancer_gets_a_stable_address_and_loses_it_when_it_stops_being_one() {
        let mut svc = json!({"metadata": {"name": "lb", "namespace": "default", "uid": "u1"},
                             "spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {}}});
        let member = MemberView::default();
        let status = pending_status(Kind::Service, &svc, &member, NOW).unwrap();
        let ingress = &status["loadBalancer"]["ingress"][0];
        assert!(ingress["ip"].as_str().unwrap().starts_with("192.0.2."));
        assert_eq!(ingress["ipMode"], "VIP");
        svc["status"] = status;
        assert_eq!(pending_status(Kind::Service, &svc, &member, NOW), None);
        svc["spec"]["type"] = json!("ClusterIP");
        let status = pending_status(Kind::Service, &svc, &member, NOW).unwrap();
        assert_eq!(status, json!({"loadBalancer": {}}));
    }

    #[test]
    fn a_cluster_ip_service_is_left_alone_and_an_ingress_gets_an_address() {
        let svc = json!({"metadata": {"name": "s", "namespace": "default"},
                         "spec": {"type": "ClusterIP"}, "status": {"loadBalancer": {}}});
        assert_eq!(
            pending_status(Kind::Service, &svc, &MemberView::default(), NOW),
            None
        );
        let ing =
            json!({"metadata": {"name": "i", "namespace": "default", "uid": "u2"}, "spec": {}});
        let status = pending_status(Kind::Ingress, &ing, &MemberView::default(), NOW).unwrap();
        assert!(status["loadBalancer"]["ingress"][0]["ip"].is_string());
    }
}
