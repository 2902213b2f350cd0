//! The admission webhook both servers call in the `admission-webhooks` corpus: HTTPS on 127.0.0.1 with a CA of
//! its own (registered through `caBundle`), in this test process. Each server reaches it under a path prefix of
//! its own (`/embedded/...`, `/kube-apiserver/...`), so the AdmissionReviews each server sent can be compared.
//!
//! - `/<server>/mutate` adds the label `admitted-by: differential-webhook` by JSONPatch.
//! - `/<server>/validate` refuses objects whose name starts with `refused` and deletions of objects whose name
//!   starts with `undeletable`, and allows the rest.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio_rustls::TlsAcceptor;

/// What the webhook received, per server label.
type Seen = Arc<Mutex<BTreeMap<String, Vec<Value>>>>;

/// The running webhook.
pub(crate) struct WebhookServer {
    addr: SocketAddr,
    ca_pem: String,
    seen: Seen,
    _dir: tempfile::TempDir,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The answer to one AdmissionReview request sent to `hook` (`mutate` or `validate`).
fn answer(hook: &str, request: &Value) -> Value {
    let uid = request["uid"].clone();
    let name_of = |key: &str| {
        request
            .pointer(&format!("/{key}/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match hook {
        "mutate" if request["object"].is_object() => {
            let patch = if request
                .pointer("/object/metadata/labels")
                .is_some_and(Value::is_object)
            {
                json!([{"op": "add", "path": "/metadata/labels/admitted-by", "value": "differential-webhook"}])
            } else {
                json!([{"op": "add", "path": "/metadata/labels", "value": {"admitted-by": "differential-webhook"}}])
            };
            json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": b64(patch.to_string().as_bytes())})
        }
        "validate" if name_of("object").starts_with("refused") => json!({
            "uid": uid,
            "allowed": false,
            "status": {"code": 403, "message": "names starting with refused are refused by the differential webhook"},
        }),
        "validate"
            if request["operation"] == "DELETE"
                && name_of("oldObject").starts_with("undeletable") =>
        {
            json!({
                "uid": uid,
                "allowed": false,
                "status": {"code": 403, "message": "this object may not be deleted"},
                "warnings": ["deletion refused by the differential webhook"],
            })
        }
        _ => json!({"uid": uid, "allowed": true}),
    }
}

impl WebhookServer {
    /// Starts the webhook on a free port of 127.0.0.1.
    pub(crate) async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let certs = flotilla_apiserver::tls::ensure(dir.path(), &[]).expect("webhook certificates");
        let acceptor = TlsAcceptor::from(
            flotilla_apiserver::tls::server_config(&certs).expect("webhook TLS configuration"),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("webhook listens");
        let addr = listener.local_addr().expect("webhook address");
        let seen: Seen = Arc::default();
        let recorded = seen.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, recorded) = (acceptor.clone(), recorded.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let recorded = recorded.clone();
                        async move {
                            let path = req.uri().path().trim_matches('/').to_string();
                            let (server, hook) = path.split_once('/').unwrap_or(("", ""));
                            let (server, hook) = (server.to_string(), hook.to_string());
                            let body = req.into_body().collect().await.map(|b| b.to_bytes());
                            let review: Value = body
                                .ok()
                                .and_then(|b| serde_json::from_slice(&b).ok())
                                .unwrap_or(Value::Null);
                            let request = review["request"].clone();
                            let mut kept = request.clone();
                            kept["hook"] = json!(hook);
                            recorded
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .entry(server)
                                .or_default()
                                .push(kept);
                            let reply = json!({
                                "apiVersion": "admission.k8s.io/v1",
                                "kind": "AdmissionReview",
                                "response": answer(&hook, &request),
                            });
                            let mut response =
                                hyper::Response::new(Full::new(Bytes::from(reply.to_string())));
                            response.headers_mut().insert(
                                http::header::CONTENT_TYPE,
                                http::HeaderValue::from_static("application/json"),
                            );
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            ca_pem: certs.ca_pem,
            seen,
            _dir: dir,
        }
    }

    /// The URL prefix `server` calls the webhook at.
    pub(super) fn url(&self, server: &str) -> String {
        format!("https://127.0.0.1:{}/{server}", self.addr.port())
    }

    /// The webhook's CA as a `caBundle`.
    pub(super) fn ca_bundle(&self) -> String {
        b64(self.ca_pem.as_bytes())
    }

    /// The AdmissionReview requests `server` sent about objects of namespace `ns` since the last call, in the
    /// order they arrived, each with the `hook` it reached.
    pub(super) fn take(&self, server: &str, ns: &str) -> Vec<Value> {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(all) = seen.get_mut(server) else {
            return Vec::new();
        };
        let (mine, rest): (Vec<Value>, Vec<Value>) = all
            .drain(..)
            .partition(|r| r["namespace"].as_str() == Some(ns));
        *all = rest;
        mine
    }
}
