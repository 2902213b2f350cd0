//! Every way a webhook call can fail gives an error naming the webhook and the reason.

use axum::Router;
use axum::extract::RawQuery;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, post};
use flotilla_api::config::v1alpha1::ResourceInterpreterResponse;
use flotilla_interpreter::Request;
use flotilla_webhook::{Response, errored, generate_self_signed, succeeded};
use serde_json::{Value, json};

use crate::support::{
    PATH, TestServer, assert_names, call_err, layer_for, mk_workload, serve_handler, serve_router,
};

const HOOK: &str = "test/hook.example.com";

/// A server whose [`PATH`] is answered by a raw axum route (no SDK completion).
async fn raw(route: MethodRouter) -> TestServer {
    serve_router(Router::new().route(PATH, route), &["127.0.0.1"]).await
}

/// The error chain of an InterpretHealth call to `url`, trusting `ca`.
async fn health_error(url: &str, ca: &[u8], timeout_seconds: Option<i32>) -> String {
    let layer = layer_for(url, ca, timeout_seconds);
    call_err(
        &layer,
        Request::InterpretHealth {
            object: mk_workload(3),
        },
    )
    .await
}

#[tokio::test]
async fn timeout_is_reported_after_timeout_seconds() {
    let server = serve_handler(|_request| std::future::pending::<Response>()).await;
    let started = tokio::time::Instant::now();
    let error = health_error(&server.url, &server.ca, Some(1)).await;
    assert_names(&error, HOOK, "timed out after 1s");
    let elapsed = started.elapsed();
    let expected = std::time::Duration::from_secs(1)..std::time::Duration::from_secs(5);
    assert!(expected.contains(&elapsed), "{elapsed:?}");
}

#[tokio::test]
async fn timeout_is_sent_as_a_query_parameter() {
    // SDK handlers cannot see the URL, so a raw route echoes the query back as the failure message.
    let server = raw(post(
        |RawQuery(query): RawQuery, axum::Json(body): axum::Json<Value>| async move {
            let uid = body["request"]["uid"].clone();
            let status = json!({"code": 418, "message": query});
            axum::Json(json!({"response": {"uid": uid, "successful": false, "status": status}}))
        },
    ))
    .await;
    let error = health_error(&server.url, &server.ca, Some(7)).await;
    assert_names(&error, HOOK, "get status code: 418, msg: timeout=7s");
    let error = health_error(&server.url, &server.ca, None).await;
    assert_names(&error, HOOK, "msg: timeout=10s");
}

#[tokio::test]
async fn refused_connection() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}{PATH}", free.local_addr().unwrap());
    drop(free);
    let ca = generate_self_signed(&["127.0.0.1"]).unwrap().ca_pem;
    let error = health_error(&url, &ca, Some(2)).await;
    assert_names(
        &error,
        HOOK,
        &format!("failed to send the request to {url}"),
    );
    assert!(error.to_lowercase().contains("refused"), "{error}");
}

#[tokio::test]
async fn server_signed_by_another_ca_is_refused() {
    let server = serve_handler(|_request| async { succeeded("").with_healthy(true) }).await;
    let other_ca = generate_self_signed(&["127.0.0.1"]).unwrap().ca_pem;
    let error = health_error(&server.url, &other_ca, None).await;
    assert_names(&error, HOOK, "failed to send the request");
    // Both test CAs share a subject, so rustls finds the wrong one and reports a bad signature.
    assert!(error.contains("invalid peer certificate"), "{error}");
}

#[tokio::test]
async fn non_200_status() {
    let server = raw(post(|| async {
        (StatusCode::INTERNAL_SERVER_ERROR, "boom")
    }))
    .await;
    let error = health_error(&server.url, &server.ca, None).await;
    assert_names(&error, HOOK, "unexpected HTTP status 500: boom");
}

#[tokio::test]
async fn malformed_body() {
    let server = raw(post(|| async { "this is not json" })).await;
    let error = health_error(&server.url, &server.ca, None).await;
    assert_names(
        &error,
        HOOK,
        "failed to decode the response body as a ResourceInterpreterContext",
    );
}

#[tokio::test]
async fn body_without_response() {
    let server = raw(post(|| async {
        axum::Json(json!({"kind": "ResourceInterpreterContext"}))
    }))
    .await;
    let error = health_error(&server.url, &server.ca, None).await;
    assert_names(&error, HOOK, "webhook response was absent");
}

#[tokio::test]
async fn wrong_uid() {
    let reply =
        json!({"response": {"uid": "not-the-request", "successful": true, "healthy": true}});
    let server = raw(post(|| async move { axum::Json(reply) })).await;
    let error = health_error(&server.url, &server.ca, None).await;
    assert_names(&error, HOOK, "got \"not-the-request\"");
}

#[tokio::test]
async fn failed_response_with_status() {
    let server = serve_handler(|_request| async { errored(403, "forbidden by test") }).await;
    let error = health_error(&server.url, &server.ca, None).await;
    assert_names(
        &error,
        HOOK,
        "webhook call failed, get status code: 403, msg: forbidden by test",
    );
}

#[tokio::test]
async fn unappliable_patch() {
    let server = serve_handler(|_request| async {
        let patch =
            serde_json::to_vec(&json!([{"op": "remove", "path": "/spec/doesNotExist"}])).unwrap();
        Response {
            response: ResourceInterpreterResponse {
                successful: true,
                patch: Some(k8s_openapi::ByteString(patch)),
                patch_type: Some("JSONPatch".into()),
                ..Default::default()
            },
        }
    })
    .await;
    let layer = layer_for(&server.url, &server.ca, None);
    for request in [
        Request::ReviseReplica {
            object: mk_workload(0),
            replicas: 2,
        },
        Request::Retain {
            desired: mk_workload(0),
            observed: mk_workload(0),
        },
        Request::AggregateStatus {
            object: mk_workload(0),
            items: vec![],
        },
    ] {
        let error = call_err(&layer, request).await;
        assert_names(&error, HOOK, "failed to apply response.patch");
    }
}

#[tokio::test]
async fn missing_required_fields() {
    let server = serve_handler(|_request| async { succeeded("") }).await;
    let layer = layer_for(&server.url, &server.ca, None);
    let cases = [
        (
            Request::InterpretReplica {
                object: mk_workload(0),
            },
            "webhook returned nil response.replicas",
        ),
        (
            Request::InterpretHealth {
                object: mk_workload(0),
            },
            "webhook returned nil response.healthy",
        ),
        (
            Request::InterpretStatus {
                object: mk_workload(0),
            },
            "webhook returned nill response.rawStatus",
        ),
    ];
    for (request, reason) in cases {
        assert_names(&call_err(&layer, request).await, HOOK, reason);
    }
}

#[tokio::test]
async fn errors_name_the_operation_and_object() {
    let server = serve_handler(|_request| async { errored(500, "nope") }).await;
    let error = health_error(&server.url, &server.ca, None).await;
    let prefix = "webhook interpreter failed for InterpretHealth on Workload default/nginx: ";
    assert!(error.starts_with(prefix), "{error}");
}
