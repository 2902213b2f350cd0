//! A fake aggregated API server, as an extension API server behind kube-aggregator is built: HTTPS with a serving
//! certificate for `<service>.<namespace>.svc`, trusting only client certificates of the front-proxy CA and
//! names published in the API server's `kube-system/extension-apiserver-authentication` ConfigMap, and taking
//! the caller's identity from the `X-Remote-*` headers that ConfigMap names. It serves `things.example.com/v1`
//! `widgets` (get, list, watch, create, update, patch, delete), aggregated and legacy discovery and an OpenAPI
//! v3 index, and records every request it got.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, pem::PemObject};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// The group-version the backend serves.
pub(crate) const GROUP: &str = "things.example.com";
pub(crate) const VERSION: &str = "v1";

/// One request the backend got.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Header name (lower case) → values.
    pub headers: BTreeMap<String, Vec<String>>,
    pub body_len: usize,
    /// The common name of the client certificate.
    pub client_cn: String,
}

impl Seen {
    /// Every value of header `name`.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .get(name)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// What the front-proxy ConfigMap tells the backend to trust.
#[derive(Debug, Clone)]
pub(crate) struct Trust {
    pub client_ca: String,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_prefixes: Vec<String>,
}

impl Trust {
    /// Reads the trust from the ConfigMap's `data`.
    pub(crate) fn from_configmap_data(data: &Value) -> Self {
        let list = |k: &str| -> Vec<String> {
            serde_json::from_str(data[k].as_str().unwrap_or("[]")).expect("JSON array of strings")
        };
        Self {
            client_ca: data["requestheader-client-ca-file"]
                .as_str()
                .unwrap_or("")
                .into(),
            allowed_names: list("requestheader-allowed-names"),
            username_headers: list("requestheader-username-headers"),
            group_headers: list("requestheader-group-headers"),
            extra_prefixes: list("requestheader-extra-headers-prefix"),
        }
    }
}

struct State {
    seen: Mutex<Vec<Seen>>,
    widgets: Mutex<BTreeMap<String, Value>>,
    rv: Mutex<u64>,
    events: broadcast::Sender<Value>,
    trust: Trust,
}

/// The running backend.
pub(crate) struct Backend {
    pub addr: SocketAddr,
    /// The CA that signed the serving certificate (the APIService's `caBundle`, base64).
    pub ca_bundle: String,
    state: Arc<State>,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

type Body = BoxBody<Bytes, Infallible>;

fn json_response(code: u16, v: &Value) -> hyper::Response<Body> {
    let mut r = hyper::Response::new(Full::new(Bytes::from(v.to_string())).boxed());
    *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn discovery_v2() -> Value {
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
        "items": [{"metadata": {"name": GROUP}, "versions": [{"version": VERSION, "freshness": "Current", "resources": [
            {"resource": "widgets", "responseKind": {"group": GROUP, "version": VERSION, "kind": "Widget"},
             "scope": "Namespaced", "singularResource": "widget", "shortNames": ["wd"],
             "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}]}]}]})
}

fn resource_list() -> Value {
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{GROUP}/{VERSION}"),
        "resources": [{"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
            "shortNames": ["wd"], "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}]})
}

impl State {
    fn next_rv(&self) -> String {
        let mut rv = self.rv.lock().unwrap_or_else(PoisonError::into_inner);
        *rv += 1;
        rv.to_string()
    }

    fn store(&self, name: &str, mut obj: Value, kind: &str) -> Value {
        obj["apiVersion"] = json!(format!("{GROUP}/{VERSION}"));
        obj["kind"] = json!("Widget");
        obj["metadata"]["name"] = json!(name);
        obj["metadata"]["resourceVersion"] = json!(self.next_rv());
        self.widgets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_string(), obj.clone());
        let _ = self.events.send(json!({"type": kind, "object": obj}));
        obj
    }

    async fn answer(
        &self,
        method: &str,
        path: &str,
        query: &str,
        accept: &str,
        body: Bytes,
    ) -> hyper::Response<Body> {
        let prefix = format!("/apis/{GROUP}/{VERSION}");
        match (method, path) {
            ("GET", "/apis") if accept.contains("as=APIGroupDiscoveryList") => {
                let mut r = json_response(200, &discovery_v2());
                r.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static(
                        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
                    ),
                );
                return r;
            }
            ("GET", "/openapi/v3") => {
                return json_response(
                    200,
                    &json!({"paths": {
                    format!("apis/{GROUP}/{VERSION}"): {"serverRelativeURL": format!("/openapi/v3/apis/{GROUP}/{VERSION}?hash=F00D")}}}),
                );
            }
            ("GET", p) if p == format!("/openapi/v3/apis/{GROUP}/{VERSION}") => {
                let gvk = json!({"group": GROUP, "version": VERSION, "kind": "Widget"});
                let list = format!("/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/widgets");
                return json_response(
                    200,
                    &json!({"openapi": "3.0.0", "info": {"title": "fake backend", "version": VERSION},
                    "paths": {list: {"get": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "list"}}},
                    "components": {"schemas": {"com.example.things.v1.Widget": {
                        "type": "object", "description": "A widget of the fake aggregated API.",
                        "x-kubernetes-group-version-kind": [{"group": GROUP, "version": VERSION, "kind": "Widget"}],
                        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                            "metadata": {"type": "object"}, "spec": {"type": "object", "description": "What the widget should be."}}}}}}),
                );
            }
            _ => {}
        }
        let Some(rest) = path.strip_prefix(&prefix) else {
            return json_response(
                404,
                &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}),
            );
        };
        let segs: Vec<&str> = rest
            .trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let name = match segs.as_slice() {
            [] => return json_response(200, &resource_list()),
            ["namespaces", _, "widgets"] | ["widgets"] => None,
            ["namespaces", _, "widgets", name] => Some(name.to_string()),
            // Echoes the size of whatever it is sent, to prove large bodies stream through.
            ["namespaces", _, "sizes"] => {
                return json_response(200, &json!({"received": body.len()}));
            }
            _ => return json_response(404, &json!({"kind": "Status", "code": 404})),
        };
        let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        match (method, name) {
            ("GET", None)
                if query
                    .split('&')
                    .any(|p| p == "watch=1" || p == "watch=true") =>
            {
                let existing: Vec<Value> = self
                    .widgets
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .values()
                    .map(|w| json!({"type": "ADDED", "object": w}))
                    .collect();
                let live = tokio_stream::wrappers::BroadcastStream::new(self.events.subscribe())
                    .filter_map(|e| async move { e.ok() });
                let lines = futures::stream::iter(existing)
                    .chain(live)
                    .map(|e| Ok::<_, Infallible>(Frame::data(Bytes::from(format!("{e}\n")))));
                let mut r = hyper::Response::new(BodyExt::boxed(StreamBody::new(lines)));
                r.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                r
            }
            ("GET", None) => {
                let items: Vec<Value> = self
                    .widgets
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .values()
                    .cloned()
                    .collect();
                json_response(
                    200,
                    &json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "WidgetList",
                    "metadata": {"resourceVersion": self.rv.lock().unwrap_or_else(PoisonError::into_inner).to_string()}, "items": items}),
                )
            }
            ("GET", Some(n)) => match self
                .widgets
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&n)
            {
                Some(w) => json_response(200, w),
                None => json_response(
                    404,
                    &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "NotFound", "code": 404, "message": format!("widgets.{GROUP} \"{n}\" not found")}),
                ),
            },
            ("POST", None) => {
                let n = parsed
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("unnamed")
                    .to_string();
                json_response(201, &self.store(&n, parsed, "ADDED"))
            }
            ("PUT", Some(n)) => json_response(200, &self.store(&n, parsed, "MODIFIED")),
            ("PATCH", Some(n)) => {
                let mut w = self
                    .widgets
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&n)
                    .cloned()
                    .unwrap_or(json!({"metadata": {}}));
                json_patch::merge(&mut w, &parsed);
                json_response(200, &self.store(&n, w, "MODIFIED"))
            }
            ("DELETE", Some(n)) => {
                let gone = self
                    .widgets
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&n);
                if let Some(w) = &gone {
                    let _ = self.events.send(json!({"type": "DELETED", "object": w}));
                }
                json_response(200, &gone.unwrap_or(Value::Null))
            }
            _ => json_response(405, &json!({"kind": "Status", "code": 405})),
        }
    }
}

impl Backend {
    /// Starts the backend on a free port of 127.0.0.1, serving a certificate for `server_name` and trusting what
    /// `trust` says.
    pub(crate) async fn start(server_name: &str, trust: Trust) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let certs = flotilla_apiserver::tls::ensure(dir.path(), &[server_name.to_string()])
            .expect("backend certificates");
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(trust.client_ca.as_bytes()) {
            roots.add(cert.expect("PEM")).expect("front-proxy CA");
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .expect("client verifier");
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(certs.cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .expect("chain");
        let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(certs.key_pem.as_bytes())
            .expect("key");
        let mut tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .expect("server config");
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(tls));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listens");
        let addr = listener.local_addr().expect("address");
        let (events, _) = broadcast::channel(64);
        let state = Arc::new(State {
            seen: Mutex::default(),
            widgets: Mutex::default(),
            rv: Mutex::new(0),
            events,
            trust,
        });
        let stop = CancellationToken::new();
        let (serving, halt) = (state.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let (tcp, _) = tokio::select! {
                    _ = halt.cancelled() => return,
                    r = listener.accept() => match r { Ok(c) => c, Err(_) => return },
                };
                let (acceptor, state, halt) = (acceptor.clone(), serving.clone(), halt.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let cn = tls
                        .get_ref()
                        .1
                        .peer_certificates()
                        .and_then(|c| c.first())
                        .and_then(|c| {
                            let (_, cert) = x509_parser::parse_x509_certificate(c).ok()?;
                            let cn = cert
                                .subject()
                                .iter_common_name()
                                .next()?
                                .as_str()
                                .ok()?
                                .to_string();
                            Some(cn)
                        })
                        .unwrap_or_default();
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (state, cn) = (state.clone(), cn.clone());
                        async move { Ok::<_, Infallible>(serve(&state, &cn, req).await) }
                    });
                    let conn = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    tokio::select! {
                        _ = conn.serve_connection_with_upgrades(TokioIo::new(tls), service) => {}
                        _ = halt.cancelled() => {}
                    }
                });
            }
        });
        Self {
            addr,
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(certs.ca_pem.as_bytes()),
            state,
            stop,
            _dir: dir,
        }
    }

    /// Every request so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.state
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The requests so far whose path starts with `prefix`.
    pub(crate) fn seen_under(&self, prefix: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.path.starts_with(prefix))
            .collect()
    }

    /// Stops serving: the port refuses connections from now on.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }
}

/// Switches an `echo` request to the protocol it asks for and echoes every byte back (exec and port-forward
/// upgrade the same way).
fn upgrade_echo(req: &mut hyper::Request<hyper::body::Incoming>) -> Option<hyper::Response<Body>> {
    let protocol = req.headers().get(http::header::UPGRADE)?.clone();
    if !req.uri().path().ends_with("/echo") {
        return None;
    }
    let on = hyper::upgrade::on(req);
    tokio::spawn(async move {
        if let Ok(upgraded) = on.await {
            let (mut read, mut write) = tokio::io::split(TokioIo::new(upgraded));
            let _ = tokio::io::copy(&mut read, &mut write).await;
        }
    });
    let mut r = hyper::Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = hyper::StatusCode::SWITCHING_PROTOCOLS;
    r.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("Upgrade"),
    );
    r.headers_mut().insert(http::header::UPGRADE, protocol);
    Some(r)
}

async fn serve(
    state: &State,
    cn: &str,
    mut req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in req.headers() {
        headers
            .entry(k.as_str().to_string())
            .or_default()
            .push(String::from_utf8_lossy(v.as_bytes()).into_owned());
    }
    let mut seen = Seen {
        method: req.method().to_string(),
        path: req.uri().path().to_string(),
        query: req.uri().query().unwrap_or("").to_string(),
        headers,
        body_len: 0,
        client_cn: cn.to_string(),
    };
    if let Some(switched) = upgrade_echo(&mut req) {
        state
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(seen);
        return switched;
    }
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    seen.body_len = body.len();
    state
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(seen);
    // As an extension API server's request-header authenticator: an allowed name, and a user in its headers.
    let named =
        state.trust.allowed_names.is_empty() || state.trust.allowed_names.iter().any(|n| n == cn);
    let user = state
        .trust
        .username_headers
        .iter()
        .find_map(|h| parts.headers.get(h.as_str()))
        .is_some();
    if !named || !user {
        return json_response(
            401,
            &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "Unauthorized", "reason": "Unauthorized", "code": 401}),
        );
    }
    let accept = parts
        .headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    state
        .answer(
            parts.method.as_str(),
            parts.uri.path(),
            parts.uri.query().unwrap_or(""),
            accept,
            body,
        )
        .await
}
