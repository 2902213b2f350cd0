//! Every Node of the member points at the simulated kubelet, as a kubelet reports where it listens: an
//! `InternalIP` address 127.0.0.1 first among `status.addresses` (the other addresses kept), and its port in
//! `status.daemonEndpoints.kubeletEndpoint.Port`. A Node that differs is rewritten through `nodes/<name>/status`
//! whenever the Node cache changes, so Nodes created later, and those a restarted simulator (another port) finds,
//! come to point at the kubelet that runs; a failed write is tried again a second later.

use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::FIELD_MANAGER;

/// The address the kubelet listens on, and every Node reports.
pub(crate) const ADDRESS: &str = "127.0.0.1";

/// How soon a failed write is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// `node` with its kubelet endpoint at `ADDRESS:port`, or `None` when it is there already.
pub(crate) fn with_endpoint(node: &Value, port: u16) -> Option<Value> {
    let addresses: Vec<Value> = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut wanted = vec![json!({"type": "InternalIP", "address": ADDRESS})];
    wanted.extend(
        addresses
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("InternalIP"))
            .cloned(),
    );
    let current_port = node
        .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_u64);
    if addresses == wanted && current_port == Some(u64::from(port)) {
        return None;
    }
    let mut updated = node.clone();
    if !updated.get("status").is_some_and(Value::is_object) {
        updated["status"] = json!({});
    }
    updated["status"]["addresses"] = Value::Array(wanted);
    updated["status"]["daemonEndpoints"] = json!({"kubeletEndpoint": {"Port": port}});
    Some(updated)
}

/// Keeps every Node in `nodes` pointing at the kubelet on `port` until `cancel`.
pub(crate) async fn keep_endpoints(
    client: Client,
    nodes: Store<Node>,
    mut changed: tokio::sync::watch::Receiver<()>,
    port: u16,
    cluster: String,
    cancel: CancellationToken,
) {
    let api: Api<Node> = Api::all(client);
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    loop {
        let mut failed = false;
        for node in nodes.state() {
            let Ok(current) = serde_json::to_value(node.as_ref()) else {
                continue;
            };
            let Some(updated) = with_endpoint(&current, port) else {
                continue;
            };
            let Ok(updated) = serde_json::from_value::<Node>(updated) else {
                continue;
            };
            if let Err(error) = api
                .replace_status(&node.name_any(), &params, &updated)
                .await
            {
                // A conflict is the Node's next change, which brings this loop round again.
                let conflict = matches!(&error, kube::Error::Api(s) if s.code == 409);
                if !conflict {
                    tracing::debug!(cluster = %cluster, node = %node.name_any(), %error, "simulator: failed to point the Node at the simulated kubelet; retrying");
                }
                failed = true;
            }
        }
        let retry = async {
            if failed {
                tokio::time::sleep(RETRY).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = cancel.cancelled() => return,
            seen = changed.changed() => if seen.is_err() { return },
            () = retry => {}
        }
    }
}
