//! kube-aggregator in the embedded server, against a fake aggregated API server started here
//! (`tests/support/backend.rs`), which trusts only what the published front-proxy ConfigMap says and records
//! every request: every verb proxied with the caller's (possibly impersonated) identity in `X-Remote-*`
//! headers, watches streamed, large bodies passed through (`proxying`), a CRD's version taken over and given
//! back, legacy and aggregated discovery, the OpenAPI v3 index (`discovery`), and the `Available` condition
//! following the backend (`availability`); here the published ConfigMap and impersonation's SelfSubjectReview.

mod availability;
mod discovery;
mod proxying;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::common::start;
use flotilla_apiserver::RunningServer;

#[path = "../../support/backend.rs"]
mod backend;

use backend::{Backend, GROUP, Trust, VERSION};

pub(super) const NS: &str = "aggregated";
pub(super) const APISERVICE: &str = "v1.things.example.com";

pub(super) fn widgets_resource() -> ApiResource {
    ApiResource {
        group: GROUP.into(),
        version: VERSION.into(),
        api_version: format!("{GROUP}/{VERSION}"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    }
}

pub(super) fn widget(name: &str, size: i64) -> DynamicObject {
    serde_json::from_value(
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget",
        "metadata": {"name": name, "namespace": NS}, "spec": {"size": size}}),
    )
    .unwrap()
}

pub(super) fn resource(group: &str, version: &str, plural: &str, kind: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: if group.is_empty() {
            version.into()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

pub(super) fn dynamic(
    client: &Client,
    group: &str,
    version: &str,
    plural: &str,
    kind: &str,
) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &resource(group, version, plural, kind))
}

/// The admin's raw HTTPS client and the server URL.
pub(super) fn raw(server: &RunningServer) -> (reqwest::Client, String, String) {
    (
        flotilla_testing::https_client_trusting(server.ca_pem().as_bytes()),
        server.url(),
        format!("Bearer {}", server.admin_token()),
    )
}

pub(super) async fn apply(client: &Client, group: &str, plural: &str, kind: &str, obj: Value) {
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    let api = match obj["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource(group, "v1", plural, kind)),
        None => dynamic(client, group, "v1", plural, kind),
    };
    api.patch(
        &name,
        &PatchParams::apply("test").force(),
        &Patch::Apply(obj),
    )
    .await
    .unwrap_or_else(|e| panic!("applying {kind} {name}: {e}"));
}

pub(super) fn apiservice(backend: &Backend, version_priority: i64) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": APISERVICE},
        "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 2000, "versionPriority": version_priority,
                 "caBundle": backend.ca_bundle,
                 "service": {"namespace": NS, "name": "backend", "port": backend.addr.port()}}})
}

/// Creates the namespace [`NS`].
pub(super) async fn namespace(client: &Client) {
    apply(
        client,
        "",
        "namespaces",
        "Namespace",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    )
    .await;
}

/// `GET <url><path>` as the admin, decoded.
pub(super) async fn get_json(http: &reqwest::Client, url: &str, token: &str, path: &str) -> Value {
    http.get(format!("{url}{path}"))
        .header("Authorization", token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The `Available` condition of the APIService, as (status, reason, message).
pub(super) async fn available(client: &Client) -> Option<(String, String, String)> {
    let api = dynamic(
        client,
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
    );
    let obj = api.get_opt(APISERVICE).await.ok().flatten()?;
    let conditions = obj.data.pointer("/status/conditions")?.as_array()?.clone();
    let c = conditions.iter().find(|c| c["type"] == "Available")?;
    let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
    Some((s("status"), s("reason"), s("message")))
}

pub(super) async fn wait_reason(client: &Client, reason: &str) -> (String, String, String) {
    flotilla_testing::eventually(&format!("APIService {reason}"), || async {
        available(client).await.filter(|c| c.1 == reason)
    })
    .await
}

/// A server, a backend trusting its published front proxy, and the APIService routing to it through an
/// ExternalName Service (as Flotilla registers its aggregated API server).
pub(super) async fn setup(
    dir: &std::path::Path,
    version_priority: i64,
) -> (RunningServer, Client, Backend) {
    let (server, client) = start(dir).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    let cm = cms.get("extension-apiserver-authentication").await.unwrap();
    let data = serde_json::to_value(cm.data.unwrap()).unwrap();
    let backend = Backend::start("backend.aggregated.svc", Trust::from_configmap_data(&data)).await;
    namespace(&client).await;
    apply(
        &client,
        "",
        "services",
        "Service",
        json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "backend", "namespace": NS},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}}),
    )
    .await;
    apply(
        &client,
        "apiregistration.k8s.io",
        "apiservices",
        "APIService",
        apiservice(&backend, version_priority),
    )
    .await;
    let passed = wait_reason(&client, "Passed").await;
    assert_eq!(
        (passed.0.as_str(), passed.2.as_str()),
        ("True", "all checks passed")
    );
    (server, client, backend)
}

pub(super) async fn aggregated_group(
    http: &reqwest::Client,
    url: &str,
    token: &str,
) -> Option<Value> {
    let doc: Value = http
        .get(format!("{url}/apis"))
        .header("Authorization", token)
        .header(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    doc["items"]
        .as_array()?
        .iter()
        .find(|g| g["metadata"]["name"] == GROUP)
        .cloned()
}

#[tokio::test]
async fn the_front_proxy_configmap_is_published_as_kube_apiserver_publishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    let cm = cms.get("extension-apiserver-authentication").await.unwrap();
    let data = cm.data.unwrap();
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "requestheader-allowed-names",
            "requestheader-client-ca-file",
            "requestheader-extra-headers-prefix",
            "requestheader-group-headers",
            "requestheader-uid-headers",
            "requestheader-username-headers",
        ]
    );
    assert_eq!(
        data["requestheader-allowed-names"],
        r#"["front-proxy-client"]"#
    );
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        r#"["X-Remote-Extra-"]"#
    );
    let front_proxy_ca = std::fs::read_to_string(dir.path().join("front-proxy-ca.crt")).unwrap();
    assert_eq!(data["requestheader-client-ca-file"], front_proxy_ca);
    // Deleted, it comes back.
    cms.delete(
        "extension-apiserver-authentication",
        &DeleteParams::default(),
    )
    .await
    .unwrap();
    flotilla_testing::eventually("the ConfigMap restored", || async {
        cms.get_opt("extension-apiserver-authentication")
            .await
            .ok()
            .flatten()
            .filter(|c| c.data.as_ref().is_some_and(|d| d.len() == 6))
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn selfsubjectreview_answers_with_the_impersonated_identity() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _client) = start(dir.path()).await;
    let (http, url, token) = raw(&server);
    let review = |headers: Vec<(&'static str, &'static str)>| {
        let mut req = http
            .post(format!(
                "{url}/apis/authentication.k8s.io/v1/selfsubjectreviews"
            ))
            .header("Authorization", &token)
            .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}));
        for (k, v) in headers {
            req = req.header(k, v);
        }
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let me = review(vec![]).await;
    assert_eq!(
        me["status"]["userInfo"],
        json!({"username": "system:admin", "groups": ["system:masters", "system:authenticated"]})
    );
    let jane = review(vec![
        ("Impersonate-User", "jane"),
        ("Impersonate-Group", "dev"),
        ("Impersonate-Uid", "u-1"),
        ("Impersonate-Extra-Example.com%2fteam", "blue"),
    ])
    .await;
    assert_eq!(
        jane["status"]["userInfo"],
        json!({"username": "jane", "uid": "u-1", "groups": ["dev", "system:authenticated"],
               "extra": {"example.com/team": ["blue"]}})
    );
    let bot = review(vec![("Impersonate-User", "system:serviceaccount:ns1:bot")]).await;
    assert_eq!(
        bot["status"]["userInfo"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:ns1",
            "system:authenticated"
        ])
    );
    server.shutdown().await;
}
