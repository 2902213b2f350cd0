//! AggregateStatus for Services of type LoadBalancer and Ingresses: the union of every member's
//! load-balancer ingress points, deduplicated and sorted.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use serde_json::{Map, Value, json};

use super::NativeError;
use super::aggregate::{member_error, member_status, replace_status};
use super::object::str_at;

/// A Service's status: only for `type: LoadBalancer`, grouping ingress points by hostname, IP and ipMode.
pub(crate) fn aggregate_service(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    if str_at(&object, &["spec", "type"]) != Some("LoadBalancer") {
        return Ok(object);
    }
    aggregate(object, items, true)
}

/// An Ingress's status, grouping ingress points by hostname and IP.
pub(crate) fn aggregate_ingress(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    aggregate(object, items, false)
}

/// Group key of an ingress point: hostname, IP and (Services only) ipMode.
type Key = (String, String, Option<String>);

fn aggregate(
    object: Value,
    items: &[AggregatedStatusItem],
    with_ip_mode: bool,
) -> Result<Value, NativeError> {
    let mut groups: BTreeMap<Key, Vec<Value>> = BTreeMap::new();
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        let ingress = status.get("loadBalancer").and_then(|lb| lb.get("ingress"));
        let entries = match ingress {
            None | Some(Value::Null) => continue,
            Some(Value::Array(entries)) => entries,
            Some(_) => {
                return Err(member_error(
                    &object,
                    item,
                    "loadBalancer.ingress",
                    "expected a list".to_owned(),
                ));
            }
        };
        for entry in entries {
            let text = |key: &str| {
                entry
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let ip_mode = if with_ip_mode {
                entry
                    .get("ipMode")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            } else {
                None
            };
            let ports = groups
                .entry((text("hostname"), text("ip"), ip_mode))
                .or_default();
            for port in entry
                .get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !ports.contains(port) {
                    ports.push(port.clone());
                }
            }
        }
    }
    let mut keys: Vec<(Key, Vec<Value>)> = groups.into_iter().collect();
    keys.sort_by(|(a, _), (b, _)| compare_keys(a, b));
    let ingress: Vec<Value> = keys
        .into_iter()
        .map(|((hostname, ip, ip_mode), mut ports)| {
            ports.sort_by(compare_ports);
            let mut entry = Map::new();
            if !hostname.is_empty() {
                entry.insert("hostname".to_owned(), Value::from(hostname));
            }
            if !ip.is_empty() {
                entry.insert("ip".to_owned(), Value::from(ip));
            }
            if let Some(mode) = ip_mode {
                entry.insert("ipMode".to_owned(), Value::from(mode));
            }
            if !ports.is_empty() {
                entry.insert("ports".to_owned(), Value::Array(ports));
            }
            Value::Object(entry)
        })
        .collect();
    let mut status = Map::new();
    let load_balancer = if ingress.is_empty() {
        json!({})
    } else {
        json!({ "ingress": ingress })
    };
    status.insert("loadBalancer".to_owned(), load_balancer);
    Ok(replace_status(object, status))
}

/// Hostnames first in ascending order, empty hostname last; then IP; then ipMode with absent last.
fn compare_keys(a: &Key, b: &Key) -> Ordering {
    let empty_last = |x: &str, y: &str| match (x.is_empty(), y.is_empty()) {
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.cmp(y),
    };
    let mode = match (&a.2, &b.2) {
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (x, y) => x.cmp(y),
    };
    empty_last(&a.0, &b.0)
        .then_with(|| a.1.cmp(&b.1))
        .then(mode)
}

/// By port, then protocol, then error (absent first).
fn compare_ports(a: &Value, b: &Value) -> Ordering {
    let port = |v: &Value| v.get("port").and_then(Value::as_i64).unwrap_or_default();
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    port(a)
        .cmp(&port(b))
        .then_with(|| {
            text(a, "protocol")
                .unwrap_or_default()
                .cmp(&text(b, "protocol").unwrap_or_default())
        })
        .then_with(|| text(a, "error").cmp(&text(b, "error")))
}
