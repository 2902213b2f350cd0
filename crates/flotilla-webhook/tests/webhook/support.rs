//! Fixtures: a workload, TLS servers on loopback, webhook configurations, and error-chain text.

use axum::Router;
use flotilla_api::config::v1alpha1::{
    InterpreterOperation, ResourceInterpreterWebhook, ResourceInterpreterWebhookConfiguration,
    RuleWithOperations,
};
use flotilla_interpreter::webhook::{WebhookLayer, error_chain};
use flotilla_interpreter::{Layer, Request, Response};
use flotilla_webhook::{RunningServer, generate_self_signed, serve_tls};
use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;
use serde_json::{Value, json};

/// The path every test server serves.
pub(crate) const PATH: &str = "/hook";

/// A Workload like the walkthrough's, with 3 replicas of which `ready` are ready.
pub(crate) fn mk_workload(ready: i64) -> Value {
    json!({
        "apiVersion": "workload.example.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "paused": false,
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}
            }
        },
        "status": {"readyReplicas": ready}
    })
}

/// A TLS server on 127.0.0.1 serving `router`, its URL for [`PATH`] and the CA bundle that verifies it.
pub(crate) struct TestServer {
    /// The running server, held so it serves as long as the fixture lives.
    #[expect(dead_code, reason = "held for its Drop")]
    pub server: RunningServer,
    /// `https://127.0.0.1:<port>/hook`.
    pub url: String,
    /// PEM of the CA that signed its certificate.
    pub ca: Vec<u8>,
}

/// Serves `router` over TLS with a fresh self-signed certificate for `hosts`.
pub(crate) async fn serve_router(router: Router, hosts: &[&str]) -> TestServer {
    let generated = generate_self_signed(hosts).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = serve_tls(
        listener,
        generated.identity.server_config().unwrap(),
        router,
    )
    .unwrap();
    let url = format!("https://{}{PATH}", server.local_addr());
    TestServer {
        server,
        url,
        ca: generated.ca_pem,
    }
}

/// Serves an SDK handler on [`PATH`] over TLS for 127.0.0.1.
pub(crate) async fn serve_handler<H: flotilla_webhook::Handler>(handler: H) -> TestServer {
    serve_router(flotilla_webhook::router(PATH, handler), &["127.0.0.1"]).await
}

/// A rule for every operation on every kind.
pub(crate) fn rule_all() -> RuleWithOperations {
    RuleWithOperations {
        operations: vec![InterpreterOperation::All],
        api_groups: vec!["*".into()],
        api_versions: vec!["*".into()],
        kinds: vec!["*".into()],
    }
}

/// A configuration `config` with one webhook `hook` at `url`, trusting `ca`.
pub(crate) fn mk_config(
    config: &str,
    hook: &str,
    url: &str,
    ca: &[u8],
    timeout_seconds: Option<i32>,
    rules: Vec<RuleWithOperations>,
) -> ResourceInterpreterWebhookConfiguration {
    let mut configuration = ResourceInterpreterWebhookConfiguration::default();
    configuration.metadata.name = Some(config.to_owned());
    configuration.webhooks = vec![ResourceInterpreterWebhook {
        name: hook.to_owned(),
        client_config: WebhookClientConfig {
            url: Some(url.to_owned()),
            ca_bundle: Some(k8s_openapi::ByteString(ca.to_vec())),
            service: None,
        },
        rules,
        timeout_seconds,
        interpreter_context_versions: vec!["v1alpha1".into()],
    }];
    configuration
}

/// A webhook layer whose only webhook, `test/hook.example.com`, answers everything at `url`.
pub(crate) fn layer_for(url: &str, ca: &[u8], timeout_seconds: Option<i32>) -> WebhookLayer {
    let layer = WebhookLayer::new(None);
    layer.replace_all(vec![mk_config(
        "test",
        "hook.example.com",
        url,
        ca,
        timeout_seconds,
        vec![rule_all()],
    )]);
    layer
}

/// Calls the layer, expecting success.
pub(crate) async fn call(layer: &WebhookLayer, request: Request) -> Response {
    match layer.interpret(request).await {
        Ok(response) => response,
        Err(error) => panic!("webhook call failed: {}", error_chain(&error)),
    }
}

/// Calls the layer, expecting a failure; returns the whole error chain.
pub(crate) async fn call_err(layer: &WebhookLayer, request: Request) -> String {
    match layer.interpret(request).await {
        Ok(response) => panic!("webhook call unexpectedly succeeded: {response:?}"),
        Err(error) => error_chain(&error),
    }
}

/// Asserts that `chain` names the test webhook and contains `reason`.
#[track_caller]
pub(crate) fn assert_names(chain: &str, webhook: &str, reason: &str) {
    assert!(
        chain.contains(&format!("failed calling webhook \"{webhook}\"")),
        "webhook not named in: {chain}"
    );
    assert!(chain.contains(reason), "{reason:?} not in: {chain}");
}

/// A raw HTTPS client trusting `ca` only, for posting to servers directly.
pub(crate) fn raw_client(ca: &[u8]) -> reqwest::Client {
    flotilla_testing::https_client_trusting(ca)
}
