//! The connect handlers against a kubelet of the test's own: what reaches it, and how its answers come back.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use http::{Request, Response as HttpResponse, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::serve;
use crate::context::Ctx;
use crate::route::{Route, parse};
use flotilla_registry::write::{Outcome, guaranteed_update};
use flotilla_store::ResKey;

/// A kubelet on a free port that answers every request with `status` and a body naming what it was asked.
async fn kubelet(status: u16) -> u16 {
    let serving = flotilla_testing::tls::serving(&["127.0.0.1"]);
    let acceptor = tokio_rustls::TlsAcceptor::from(serving.config);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    move |req: Request<hyper::body::Incoming>| async move {
                        let asked = format!(
                            "{} {} auth={}",
                            req.method(),
                            req.uri(),
                            req.headers().contains_key(http::header::AUTHORIZATION)
                        );
                        let mut response = HttpResponse::new(Full::new(bytes::Bytes::from(asked)));
                        *response.status_mut() = StatusCode::from_u16(status).expect("status");
                        Ok::<_, Infallible>(response)
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    port
}

async fn put(ctx: &Ctx, plural: &str, ns: &str, object: Value) {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    guaranteed_update(
        &ctx.registry.store,
        &ResKey::new("", plural),
        ns,
        &name,
        false,
        |_| Ok(Outcome::Put(object.clone())),
    )
    .await
    .expect("stored");
}

/// A server context with pod `web` on `node-1`, whose kubelet listens on `port`, and pod `pending`, unbound.
async fn world(dir: &std::path::Path, port: u16) -> Arc<Ctx> {
    let ctx = Ctx::for_test(dir);
    put(&ctx, "nodes", "", json!({"metadata": {"name": "node-1"}, "status": {
        "addresses": [{"type": "Hostname", "address": "node-1"}, {"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}))
    .await;
    for (name, node) in [("web", Some("node-1")), ("pending", None)] {
        let mut pod = json!({"metadata": {"name": name, "namespace": "ns"},
                             "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        if let Some(node) = node {
            pod["spec"]["nodeName"] = json!(node);
        }
        put(&ctx, "pods", "ns", pod).await;
    }
    ctx
}

/// `method uri` through the connect handler: status, content type and body.
async fn call(ctx: &Arc<Ctx>, method: &str, uri: &str) -> (u16, String, String) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::AUTHORIZATION, "Bearer caller")
        .body(Body::empty())
        .expect("request");
    let Route::Resource(rp) = parse(request.uri().path()) else {
        panic!("not a resource path: {uri}");
    };
    assert!(rp.is_connect(), "{uri}");
    let (parts, body) = request.into_parts();
    let response = serve(ctx, parts, body, &rp).await;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        content_type,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

fn message(body: &str) -> String {
    let status: Value =
        serde_json::from_str(body).unwrap_or_else(|_| panic!("not a Status: {body}"));
    status["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn logs_stream_from_the_kubelet_with_the_options_passed_on_and_no_credentials() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = kubelet(200).await;
    let ctx = world(dir.path(), port).await;
    let (status, content_type, body) = call(
        &ctx,
        "GET",
        "/api/v1/namespaces/ns/pods/web/log?tailLines=2&timestamps=true&container=c",
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "text/plain"));
    assert_eq!(
        body,
        "GET /containerLogs/ns/web/c?tailLines=2&timestamps=true auth=false"
    );
    let (status, _, body) = call(&ctx, "GET", "/api/v1/namespaces/ns/pods/pending/log").await;
    assert_eq!(
        (status, body.as_str()),
        (204, ""),
        "an unbound pod has no logs yet"
    );
    let (status, _, body) = call(&ctx, "POST", "/api/v1/namespaces/ns/pods/web/log").await;
    assert_eq!(status, 405, "{body}");
    let (status, _, body) = call(
        &ctx,
        "GET",
        "/api/v1/namespaces/ns/pods/web/log?tailLines=-1",
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        message(&body),
        "PodLogOptions \"web\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
    );
}

#[tokio::test]
async fn a_kubelets_refusal_becomes_the_status_kube_makes_of_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path(), kubelet(400).await).await;
    let (status, _, body) = call(
        &ctx,
        "GET",
        "/api/v1/namespaces/ns/pods/web/log?previous=true",
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        message(&body),
        "GET /containerLogs/ns/web/c?previous=true auth=false"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path(), kubelet(404).await).await;
    let (status, _, body) = call(&ctx, "GET", "/api/v1/namespaces/ns/pods/web/log").await;
    assert_eq!(status, 404);
    assert_eq!(
        message(&body),
        "the server could not find the requested resource ( pods/log web)"
    );
}

#[tokio::test]
async fn an_unreachable_kubelet_is_named_as_go_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let ctx = world(dir.path(), closed).await;
    let (status, _, body) = call(&ctx, "GET", "/api/v1/namespaces/ns/pods/web/log").await;
    assert_eq!(status, 500);
    assert_eq!(
        message(&body),
        format!(
            "Get \"https://127.0.0.1:{closed}/containerLogs/ns/web/c\": dial tcp 127.0.0.1:{closed}: connect: connection refused"
        )
    );
}

#[tokio::test]
async fn exec_needs_an_upgrade_and_a_bound_pod() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path(), kubelet(200).await).await;
    let exec = "/api/v1/namespaces/ns/pods/web/exec?command=true&stdout=true";
    let (status, _, body) = call(&ctx, "POST", exec).await;
    assert_eq!(
        (status, message(&body).as_str()),
        (400, "Upgrade request required")
    );
    let (status, _, body) = call(&ctx, "PUT", exec).await;
    assert_eq!(status, 405, "{body}");
    let (status, _, body) = call(
        &ctx,
        "GET",
        "/api/v1/namespaces/ns/pods/pending/exec?command=true&stdout=true",
    )
    .await;
    assert_eq!(
        (status, message(&body).as_str()),
        (400, "pod pending does not have a host assigned")
    );
    let (status, _, body) = call(
        &ctx,
        "GET",
        "/api/v1/namespaces/ns/pods/web/exec?command=true&stdout=true&container=nope",
    )
    .await;
    assert_eq!(
        (status, message(&body).as_str()),
        (400, "container nope is not valid for pod web")
    );
}
