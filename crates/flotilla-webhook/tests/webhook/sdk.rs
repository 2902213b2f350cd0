//! The SDK's request handling as Karmada's Go SDK does it: HTTP 200 with `{"response": ...}`, early failures as
//! `Errored(400)` without uid, uid and status code completed for handler answers.

use flotilla_webhook::example::{ExampleConfig, RunningWebhook, serve};
use flotilla_webhook::{MAX_REQUEST_BYTES, Response, succeeded};
use serde_json::{Value, json};

use crate::support::{mk_workload, raw_client, serve_handler};

/// Posts `body` with `content_type` to `url`; returns the HTTP status and the decoded body.
async fn post(
    client: &reqwest::Client,
    url: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    let response = client
        .post(url)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap(),
    )
}

fn context(operation: &str, extra: Value) -> Vec<u8> {
    let mut request = json!({
        "uid": "uid-1",
        "kind": {"group": "workload.example.io", "version": "v1alpha1", "kind": "Workload"},
        "name": "nginx",
        "namespace": "default",
        "operation": operation,
        "object": mk_workload(1),
        "replicas": 0
    });
    for (key, value) in extra.as_object().cloned().unwrap_or_default() {
        request[key] = value;
    }
    serde_json::to_vec(&json!({"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": request})).unwrap()
}

#[tokio::test]
async fn request_problems_are_errored_400_without_uid() {
    let server = serve_handler(|_request| async { succeeded("").with_healthy(true) }).await;
    let client = raw_client(&server.ca);
    let oversized = {
        let mut body = context("InterpretHealth", json!({}));
        body.resize(MAX_REQUEST_BYTES + 1, b' ');
        body
    };
    let cases = [
        ("application/json", Vec::new(), "request body is empty"),
        (
            "text/plain",
            context("InterpretHealth", json!({})),
            "contentType=text/plain, expected application/json",
        ),
        (
            "application/json; charset=utf-8",
            context("InterpretHealth", json!({})),
            "expected application/json",
        ),
        ("application/json", b"{\"request\":".to_vec(), "EOF"),
        (
            "application/json",
            b"{\"kind\":\"ResourceInterpreterContext\"}".to_vec(),
            "request is missing",
        ),
        ("application/json", oversized, "at most 1048576 bytes"),
    ];
    for (content_type, body, message) in cases {
        let (status, reply) = post(&client, &server.url, content_type, body).await;
        assert_eq!(status, 200);
        let response = &reply["response"];
        assert_eq!(response["successful"], json!(false), "{reply}");
        assert_eq!(response["status"]["code"], json!(400), "{reply}");
        assert!(
            response["status"]["message"]
                .as_str()
                .unwrap()
                .contains(message),
            "{message:?}: {reply}"
        );
        assert_eq!(response["uid"], json!(""), "{reply}");
    }
}

#[tokio::test]
async fn handler_answers_are_completed() {
    let server = serve_handler(|request: flotilla_webhook::Request| async move {
        assert_eq!(request.operation.as_str(), "InterpretHealth");
        assert_eq!(
            request.decode::<Value>().unwrap()["metadata"]["name"],
            json!("nginx")
        );
        assert!(request.observed_object().is_err());
        Response::default().with_healthy(true)
    })
    .await;
    let (status, reply) = post(
        &raw_client(&server.ca),
        &server.url,
        "application/json",
        context("InterpretHealth", json!({})),
    )
    .await;
    assert_eq!(status, 200);
    // No apiVersion or kind, as Karmada's SDK writes it; uid copied; absent status becomes code 200.
    assert_eq!(
        reply,
        json!({"response": {"uid": "uid-1", "successful": false, "status": {"code": 200}, "healthy": true}})
    );
}

/// The example webhook's reply to `operation` on the test Workload, with `extra` request fields.
async fn ask_example(webhook: &RunningWebhook, operation: &str, extra: Value) -> Value {
    let client = raw_client(webhook.ca_bundle().unwrap());
    let body = context(operation, extra);
    let (status, reply) = post(&client, webhook.url(), "application/json", body).await;
    assert_eq!(status, 200);
    reply["response"].clone()
}

#[tokio::test]
async fn example_refuses_retain_without_observed_object_and_unknown_operations() {
    let webhook = serve(ExampleConfig::default()).await.unwrap();
    let retain = ask_example(&webhook, "Retain", json!({})).await;
    assert_eq!(retain["status"]["code"], json!(400), "{retain}");
    assert_eq!(retain["uid"], json!("uid-1"));
    let prune = ask_example(&webhook, "Prune", json!({})).await;
    assert_eq!(prune["status"]["code"], json!(400), "{prune}");
    assert!(
        prune["status"]["message"]
            .as_str()
            .unwrap()
            .contains("Prune"),
        "{prune}"
    );
    let components = ask_example(&webhook, "InterpretComponent", json!({})).await;
    assert_eq!(
        components["components"],
        json!([{"name": "main", "replicas": 3}]),
        "{components}"
    );
}

#[tokio::test]
async fn example_patches_are_rfc6902_diffs() {
    use base64::Engine;
    let webhook = serve(ExampleConfig::default()).await.unwrap();
    let revised = ask_example(&webhook, "ReviseReplica", json!({"replicas": 5})).await;
    assert_eq!(revised["successful"], json!(true));
    assert_eq!(revised["patchType"], json!("JSONPatch"));
    let patch = base64::engine::general_purpose::STANDARD
        .decode(revised["patch"].as_str().unwrap())
        .unwrap();
    let patch: Value = serde_json::from_slice(&patch).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "replace", "path": "/spec/replicas", "value": 5}])
    );
    // Asking for the replicas the object already has yields no patch at all.
    let unchanged = ask_example(&webhook, "ReviseReplica", json!({"replicas": 3})).await;
    assert!(unchanged.get("patch").is_none(), "{unchanged}");
    assert_eq!(unchanged["successful"], json!(true));
}
