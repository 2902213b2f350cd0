//! A fake member API server over HTTPS that switches protocols as kube-apiserver does for exec, attach and
//! port-forward, and records what it receives. Like kube-apiserver it offers HTTP/2 and HTTP/1.1 by ALPN, so
//! a client that lets ALPN choose HTTP/2 cannot switch.
//!
//! - `GET /api/v1/namespaces/default/pods/{name}` is 200 for the pods it holds, 404 for the others.
//! - A request to switch protocols on `.../pods/web/{subresource}` is answered `101` with the protocol the
//!   caller offered first (`Sec-WebSocket-Protocol` or `X-Stream-Protocol-Version` too) and `X-Member`;
//!   the member then writes `hello from {name}\n` and echoes every byte until the caller closes, which it
//!   reports on [`UpgradingMember::closed`].
//! - On `.../pods/bye/{subresource}` it switches, writes `bye\n` and closes.
//! - On `.../pods/refused/...` it answers 400 as kube-apiserver answers an exec it will not upgrade, on
//!   `.../pods/ghost/...` 404, and on `.../pods/plain/...` 200 without switching.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use flotilla_webhook::generate_self_signed;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::member::Recorded;

/// The running fake.
pub(crate) struct UpgradingMember {
    pub(crate) url: String,
    pub(crate) ca_pem: Vec<u8>,
    seen: Arc<Mutex<Vec<Recorded>>>,
    /// One message per switched connection whose caller closed it.
    pub(crate) closed: mpsc::UnboundedReceiver<String>,
    stop: CancellationToken,
}

impl Drop for UpgradingMember {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The fake's shared state.
struct Fake {
    name: &'static str,
    pods: Vec<&'static str>,
    seen: Arc<Mutex<Vec<Recorded>>>,
    closed: mpsc::UnboundedSender<String>,
}

impl UpgradingMember {
    /// Starts a member called `name` holding `pods` in `default`.
    pub(crate) async fn start(name: &'static str, pods: Vec<&'static str>) -> UpgradingMember {
        let generated = generate_self_signed(&["127.0.0.1"]).expect("a certificate");
        let mut tls = (*generated
            .identity
            .server_config()
            .expect("a TLS configuration"))
        .clone();
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(tls));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let url = format!("https://{}", listener.local_addr().expect("an address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let fake = Arc::new(Fake {
            name,
            pods,
            seen: seen.clone(),
            closed: closed_tx,
        });
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = stopped.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((stream, _)) = accepted else { continue };
                let (acceptor, fake, stopped) = (acceptor.clone(), fake.clone(), stopped.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |request| {
                        let fake = fake.clone();
                        async move { Ok::<_, std::convert::Infallible>(fake.answer(request)) }
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let connection =
                        builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
                    tokio::select! {
                        () = stopped.cancelled() => {}
                        _ = connection => {}
                    }
                });
            }
        });
        UpgradingMember {
            url,
            ca_pem: generated.ca_pem,
            seen,
            closed,
            stop,
        }
    }

    /// Registers this member on the control plane as `cluster` with the impersonator token `token`.
    pub(crate) async fn register_as(&self, control: &kube::Client, cluster: &str, token: &str) {
        crate::member::register(
            control,
            cluster,
            &self.url,
            &self.ca_pem,
            Some(token),
            |_| {},
        )
        .await;
    }

    /// Every request received, in order.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.seen.lock().expect("lock").clone()
    }
}

type Answer = hyper::Response<Full<Bytes>>;

fn answer_with(status: StatusCode, content_type: &str, body: String) -> Answer {
    let mut answer = hyper::Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    let headers = answer.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(content_type).expect("a content type"),
    );
    headers.insert("x-member", HeaderValue::from_static("refusing"));
    answer
}

fn status(code: StatusCode, reason: &str, message: &str) -> Answer {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16()});
    answer_with(code, "application/json", body.to_string())
}

/// The first of the comma-separated values of `name`.
fn first_offered(headers: &HeaderMap, name: &str) -> Option<HeaderValue> {
    let value = headers.get(name)?.to_str().ok()?;
    let first = value.split(',').next()?.trim();
    HeaderValue::from_str(first).ok()
}

impl Fake {
    fn answer(&self, mut request: hyper::Request<Incoming>) -> Answer {
        let path = request.uri().path().to_owned();
        self.seen.lock().expect("lock").push(Recorded {
            method: request.method().to_string(),
            path: path.clone(),
            query: request.uri().query().map(str::to_owned),
            headers: request.headers().clone(),
            body: Bytes::new(),
        });
        let Some(rest) = path.strip_prefix("/api/v1/namespaces/default/pods/") else {
            return status(StatusCode::NOT_FOUND, "NotFound", "not a pod");
        };
        let (pod, subresource) = rest.split_once('/').unwrap_or((rest, ""));
        let upgrading = request.headers().contains_key(header::UPGRADE);
        match (pod, subresource, upgrading) {
            (pod, "", false) if self.pods.contains(&pod) => answer_with(
                StatusCode::OK,
                "application/json",
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod}}).to_string(),
            ),
            ("refused", _, _) => status(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                "Upgrade request required",
            ),
            ("plain", _, _) => answer_with(StatusCode::OK, "text/plain", "not switching".into()),
            ("web" | "bye", _, true) => self.switch(&mut request, pod == "bye"),
            _ => status(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("pods \"{pod}\" not found"),
            ),
        }
    }

    /// Answers 101 and serves the switched connection: a greeting and an echo, or `bye` and the end.
    fn switch(&self, request: &mut hyper::Request<Incoming>, bye: bool) -> Answer {
        let mut answer = hyper::Response::new(Full::new(Bytes::new()));
        *answer.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let offered = request.headers().clone();
        let headers = answer.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        if let Some(protocol) = first_offered(&offered, "upgrade") {
            headers.insert(header::UPGRADE, protocol);
        }
        if let Some(key) = offered.get(header::SEC_WEBSOCKET_KEY) {
            let accept = format!("accepted-{}", key.to_str().unwrap_or_default());
            headers.insert(
                header::SEC_WEBSOCKET_ACCEPT,
                HeaderValue::from_str(&accept).expect("a header value"),
            );
        }
        if let Some(protocol) = first_offered(&offered, "sec-websocket-protocol") {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
        }
        if let Some(protocol) = first_offered(&offered, "x-stream-protocol-version") {
            headers.insert("x-stream-protocol-version", protocol);
        }
        headers.insert("x-member", HeaderValue::from_static(self.name));
        let switched = hyper::upgrade::on(request);
        let (name, closed) = (self.name, self.closed.clone());
        tokio::spawn(async move {
            let Ok(upgraded) = switched.await else { return };
            let mut io = TokioIo::new(upgraded);
            if bye {
                let _ = io.write_all(b"bye\n").await;
                let _ = io.shutdown().await;
                return;
            }
            if io
                .write_all(format!("hello from {name}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
            let mut buffer = vec![0; 16 * 1024];
            loop {
                match io.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if io.write_all(&buffer[..n]).await.is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = closed.send(name.to_owned());
        });
        answer
    }
}
