//! `/metrics`: `apiserver_request_total` counts requests with kube-apiserver's labels, for authenticated
//! clients only.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use flotilla_apiserver::metrics::parse_requests;

use crate::common::{mk_cm, start};

async fn scrape(client: &kube::Client) -> Result<String, kube::Error> {
    client
        .request_text(http::Request::get("/metrics").body(Vec::new()).unwrap())
        .await
}

fn count(text: &str, resource: &str, subresource: &str, verb: &str, code: &str) -> f64 {
    parse_requests(text)
        .iter()
        .filter(|s| {
            s.label("resource") == resource
                && s.label("subresource") == subresource
                && s.label("verb") == verb
                && s.label("code") == code
                && s.label("component") == "apiserver"
        })
        .map(|s| s.value)
        .sum()
}

#[tokio::test]
async fn request_counts_carry_kube_apiservers_labels_and_need_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &mk_cm("a", json!({})))
        .await
        .unwrap();
    cms.create(&PostParams::default(), &mk_cm("a", json!({})))
        .await
        .expect_err("409");
    cms.patch(
        "a",
        &PatchParams::apply("test"),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}})),
    )
    .await
    .unwrap();
    cms.get("a").await.unwrap();
    cms.list(&Default::default()).await.unwrap();

    let text = scrape(&client).await.unwrap();
    assert_eq!(count(&text, "configmaps", "", "POST", "201"), 1.0, "{text}");
    assert_eq!(count(&text, "configmaps", "", "POST", "409"), 1.0, "{text}");
    assert_eq!(
        count(&text, "configmaps", "", "APPLY", "200"),
        1.0,
        "{text}"
    );
    assert_eq!(count(&text, "configmaps", "", "GET", "200"), 1.0, "{text}");
    assert_eq!(count(&text, "configmaps", "", "LIST", "200"), 1.0, "{text}");
    assert!(text.contains(r#"scope="namespace",subresource="",verb="LIST",version="v1"}"#));

    let anonymous = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    // Without credentials the request is the anonymous user's, whom RBAC does not let read the metrics.
    let answer = anonymous
        .get(format!("{}/metrics", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
    let status: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(
        status["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/metrics""#
    );
}
