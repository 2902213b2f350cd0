//! The `Available` condition and the proxy's answers following the backend and its Service.

use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use super::backend::{GROUP, VERSION};
use super::*;

#[tokio::test]
async fn availability_follows_the_backend_and_its_service() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, backend) = setup(dir.path(), 200).await;
    let (http, url, token) = raw(&server);
    backend.stop();
    let port = backend.addr.port();
    let widgets_url = format!("{url}/apis/{GROUP}/{VERSION}/namespaces/{NS}/widgets");
    let answer = || async {
        let r = http
            .get(&widgets_url)
            .header("Authorization", &token)
            .send()
            .await
            .ok()?;
        let (code, ct) = (
            r.status().as_u16(),
            r.headers()["content-type"].to_str().ok()?.to_string(),
        );
        Some((code, ct, r.text().await.ok()?))
    };
    // Any change to the Service checks again at once (otherwise the 30 s resync does).
    let services: Api<k8s_openapi::api::core::v1::Service> = Api::namespaced(client.clone(), NS);
    services
        .patch(
            "backend",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "1"}}})),
        )
        .await
        .unwrap();
    let failed = wait_reason(&client, "FailedDiscoveryCheck").await;
    assert_eq!(failed.0, "False");
    let probe = format!("https://127.0.0.1:{port}/apis/{GROUP}/{VERSION}");
    assert_eq!(
        failed.2,
        format!(
            "failing or missing response from {probe}: Get \"{probe}\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    // Once marked unavailable: kube-aggregator's plain 503.
    flotilla_testing::eventually("service unavailable", || async {
        answer()
            .await
            .filter(|a| a.0 == 503 && a.2 == "service unavailable\n")
    })
    .await;
    let group = flotilla_testing::eventually("v1 stale", || async {
        aggregated_group(&http, &url, &token)
            .await
            .filter(|g| g["versions"][0]["freshness"] == "Stale")
    })
    .await;
    assert!(group["versions"][0].get("resources").is_none(), "{group}");
    services
        .delete("backend", &DeleteParams::default())
        .await
        .unwrap();
    let gone = wait_reason(&client, "ServiceNotFound").await;
    assert_eq!(
        gone.2,
        format!("service/backend in \"{NS}\" is not present")
    );
    // A Local APIService is always available.
    apply(&client, "apiregistration.k8s.io", "apiservices", "APIService", json!({"apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService", "metadata": {"name": APISERVICE}, "spec": {"group": GROUP, "version": VERSION,
        "groupPriorityMinimum": 2000, "versionPriority": 200, "service": null, "caBundle": null}})).await;
    let local = wait_reason(&client, "Local").await;
    assert_eq!(
        (local.0.as_str(), local.2.as_str()),
        ("True", "Local APIServices are always available")
    );
    server.shutdown().await;
}
