//! `metrics.k8s.io/v1beta1` as metrics-server answers it: discovery, PodMetrics (one, a namespace's, all) and
//! NodeMetrics (one, all), with `labelSelector` and `fieldSelector` on lists.
//!
//! Each request reads the Pods and Nodes from the member's API server with the caller's selectors, so selection
//! means exactly what it means there (and a bad selector gets the API server's own refusal). As metrics-server:
//! a Pod that does not exist is `404 pods "<name>" not found`; one without metrics (not running, or whose usage
//! annotation is no quantity) is `404 pods.metrics.k8s.io "<namespace>/<name>" not found`; a Node without its
//! metrics likewise `nodes.metrics.k8s.io`. Lists leave out what has no metrics.

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use super::usage::{node_metrics, pod_metrics};

const GROUP: &str = "metrics.k8s.io";
const GROUP_VERSION: &str = "metrics.k8s.io/v1beta1";
/// The field manager of what the simulator registers.
const MANAGER: &str = "flotilla-simulator";

/// The routes, for the simulated kubelet's server to serve beside its own.
pub(crate) fn router(client: Client) -> Router {
    Router::new()
        .route("/apis/metrics.k8s.io", get(group))
        .route("/apis/metrics.k8s.io/v1beta1", get(resources))
        .route("/apis/metrics.k8s.io/v1beta1/pods", get(all_pods))
        .route(
            "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods",
            get(namespace_pods),
        )
        .route(
            "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}",
            get(one_pod),
        )
        .route("/apis/metrics.k8s.io/v1beta1/nodes", get(all_nodes))
        .route("/apis/metrics.k8s.io/v1beta1/nodes/{name}", get(one_node))
        .with_state(client)
}

/// Registers the API with the member's aggregator at `127.0.0.1:port`, as metrics-server's manifests do (its
/// certificate is self-signed, so the APIService skips verification).
///
/// # Errors
/// The member API server's refusal of the Service or the APIService.
pub(crate) async fn register(client: &Client, port: u16) -> Result<(), kube::Error> {
    let params = PatchParams::apply(MANAGER).force();
    let service: Service = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "metrics-server", "namespace": "kube-system", "labels": {"k8s-app": "metrics-server"}},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1",
                 "ports": [{"name": "https", "port": port, "targetPort": port}]},
    }))
    .map_err(kube::Error::SerdeError)?;
    Api::<Service>::namespaced(client.clone(), "kube-system")
        .patch("metrics-server", &params, &Patch::Apply(&service))
        .await?;
    let api_service: APIService = serde_json::from_value(json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.k8s.io", "labels": {"k8s-app": "metrics-server"}},
        "spec": {"group": GROUP, "version": "v1beta1",
                 "service": {"namespace": "kube-system", "name": "metrics-server", "port": port},
                 "insecureSkipTLSVerify": true, "groupPriorityMinimum": 100, "versionPriority": 100},
    }))
    .map_err(kube::Error::SerdeError)?;
    Api::<APIService>::all(client.clone())
        .patch(
            "v1beta1.metrics.k8s.io",
            &params,
            &Patch::Apply(&api_service),
        )
        .await?;
    Ok(())
}

async fn group() -> Response {
    let version = json!({"groupVersion": GROUP_VERSION, "version": "v1beta1"});
    ok(json!({
        "kind": "APIGroup", "apiVersion": "v1", "name": GROUP,
        "versions": [version], "preferredVersion": version,
    }))
}

async fn resources() -> Response {
    let resource = |name: &str, kind: &str, namespaced: bool| json!({"name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": ["get", "list"]});
    ok(json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
        "resources": [resource("nodes", "NodeMetrics", false), resource("pods", "PodMetrics", true)],
    }))
}

async fn all_pods(
    State(client): State<Client>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    pod_list(Api::all(client), &query).await
}

async fn namespace_pods(
    State(client): State<Client>,
    Path(namespace): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    pod_list(Api::namespaced(client, &namespace), &query).await
}

async fn one_pod(
    State(client): State<Client>,
    Path((namespace, name)): Path<(String, String)>,
) -> Response {
    let pod = match Api::<Pod>::namespaced(client, &namespace)
        .get_opt(&name)
        .await
    {
        Ok(Some(pod)) => pod,
        Ok(None) => return not_found("", "pods", &name),
        Err(error) => return failure(&error),
    };
    match pod_metrics(&to_value(&pod), &now()) {
        Ok(Some(metrics)) => ok(metrics),
        Ok(None) => not_found(GROUP, "pods", &format!("{namespace}/{name}")),
        Err(error) => {
            tracing::warn!(%error, "simulated metrics-server: no metrics for this pod");
            not_found(GROUP, "pods", &format!("{namespace}/{name}"))
        }
    }
}

async fn pod_list(api: Api<Pod>, query: &HashMap<String, String>) -> Response {
    let pods = match api.list(&list_params(query)).await {
        Ok(list) => list.items,
        Err(error) => return failure(&error),
    };
    let now = now();
    let items: Vec<Value> = pods
        .iter()
        .filter_map(|pod| match pod_metrics(&to_value(pod), &now) {
            Ok(metrics) => metrics,
            Err(error) => {
                tracing::warn!(%error, "simulated metrics-server: no metrics for this pod");
                None
            }
        })
        .collect();
    ok(
        json!({"kind": "PodMetricsList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}),
    )
}

async fn all_nodes(
    State(client): State<Client>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let nodes = match Api::<Node>::all(client.clone())
        .list(&list_params(&query))
        .await
    {
        Ok(list) => list.items,
        Err(error) => return failure(&error),
    };
    let pods = match running_pods(client, None).await {
        Ok(pods) => pods,
        Err(error) => return failure(&error),
    };
    let now = now();
    let items: Vec<Value> = nodes
        .iter()
        .map(|node| node_metrics(&to_value(node), &pods, &now))
        .collect();
    ok(
        json!({"kind": "NodeMetricsList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}),
    )
}

async fn one_node(State(client): State<Client>, Path(name): Path<String>) -> Response {
    let node = match Api::<Node>::all(client.clone()).get_opt(&name).await {
        Ok(Some(node)) => node,
        Ok(None) => return not_found(GROUP, "nodes", &name),
        Err(error) => return failure(&error),
    };
    match running_pods(client, Some(&name)).await {
        Ok(pods) => ok(node_metrics(&to_value(&node), &pods, &now())),
        Err(error) => failure(&error),
    }
}

/// The Pods that can use anything: those in phase Running, of Node `node` or of all (field selectors the API
/// server applies, so one Node's metrics read only its Pods).
async fn running_pods(client: Client, node: Option<&str>) -> Result<Vec<Value>, kube::Error> {
    let fields = match node {
        Some(node) => format!("status.phase=Running,spec.nodeName={node}"),
        None => "status.phase=Running".to_owned(),
    };
    let list = Api::<Pod>::all(client)
        .list(&ListParams::default().fields(&fields))
        .await?;
    Ok(list.items.iter().map(to_value).collect())
}

fn list_params(query: &HashMap<String, String>) -> ListParams {
    let mut params = ListParams::default();
    if let Some(labels) = query.get("labelSelector").filter(|s| !s.is_empty()) {
        params = params.labels(labels);
    }
    if let Some(fields) = query.get("fieldSelector").filter(|s| !s.is_empty()) {
        params = params.fields(fields);
    }
    params
}

fn to_value<T: serde::Serialize>(object: &T) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

fn ok(body: Value) -> Response {
    (StatusCode::OK, axum::Json(body)).into_response()
}

/// A Status as the API machinery writes a NotFound for `group`'s `resource` `name`.
fn not_found(group: &str, resource: &str, name: &str) -> Response {
    let qualified = if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    };
    let mut details = json!({"name": name, "kind": resource});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{qualified} \"{name}\" not found"),
        Some(details),
    )
}

/// The member API server's refusal passed on as it was given; any other failure as an internal error.
fn failure(error: &kube::Error) -> Response {
    match error {
        kube::Error::Api(response) => {
            let code =
                StatusCode::from_u16(response.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            status(code, &response.reason, &response.message, None)
        }
        other => status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            &format!("Internal error occurred: {other}"),
            None,
        ),
    }
}

fn status(code: StatusCode, reason: &str, message: &str, details: Option<Value>) -> Response {
    let mut body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
    });
    if let Some(details) = details {
        body["details"] = details;
    }
    (code, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(response: Response) -> Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn a_missing_pod_is_not_found_as_metrics_server_says_it() {
        let response = not_found("", "pods", "web-1");
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let body = body(response).await;
        assert_eq!(body["message"], "pods \"web-1\" not found");
        assert_eq!(body["details"], json!({"name": "web-1", "kind": "pods"}));
    }

    #[tokio::test]
    async fn a_pod_without_metrics_is_not_found_in_the_metrics_group() {
        let body = body(not_found(GROUP, "pods", "shop/web-1")).await;
        assert_eq!(
            body["message"],
            "pods.metrics.k8s.io \"shop/web-1\" not found"
        );
        assert_eq!(body["details"]["group"], GROUP);
        assert_eq!(body["reason"], "NotFound");
    }

    #[tokio::test]
    async fn discovery_lists_both_kinds() {
        let body = body(resources().await).await;
        let kinds: Vec<&str> = body["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["kind"].as_str())
            .collect();
        assert_eq!(kinds, ["NodeMetrics", "PodMetrics"]);
    }

    #[test]
    fn selectors_pass_through() {
        let query = HashMap::from([
            ("labelSelector".to_owned(), "app=web".to_owned()),
            ("fieldSelector".to_owned(), String::new()),
        ]);
        let params = list_params(&query);
        assert_eq!(params.label_selector.as_deref(), Some("app=web"));
        assert_eq!(params.field_selector, None);
    }
}
