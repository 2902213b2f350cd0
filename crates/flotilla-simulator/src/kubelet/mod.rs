//! The simulated kubelet: the HTTPS server a member's API server reaches for `pods/log` and `pods/exec` of the
//! simulated containers, as a Node's kubelet serves them.
//!
//! It listens on 127.0.0.1 on a free port with a self-signed certificate (kube-apiserver verifies a kubelet's
//! certificate only when given a kubelet CA, which members here have none of), and asks for no client
//! certificate: it holds no secrets, and its commands touch nothing of the machine. Every Node of the member is
//! pointed at it ([`nodes`]). It serves, for every pod the simulator sees that is bound to a Node:
//!
//! - `GET /containerLogs/<namespace>/<pod>/<container>`: the simulated container's log ([`logs`]);
//! - `GET /exec/<namespace>/<pod>/<container>`: a command run in the simulated container over WebSocket,
//!   `v5.channel.k8s.io` or `v4.channel.k8s.io` ([`exec`], [`channels`], [`commands`]). SPDY, which only clients
//!   older than kubectl 1.30 speak first, is not served: such an upgrade is refused, and recent clients that fall
//!   back to SPDY do so only when their WebSocket upgrade failed.
//!
//! Errors are a kubelet's: plain text with its status codes (a pod the kubelet does not run is `404 pod "<name>"
//! does not exist` for logs and `404 pod does not exist` for exec).

pub(crate) mod channels;
pub(crate) mod commands;
pub(crate) mod exec;
pub(crate) mod logs;
pub(crate) mod nodes;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use flotilla_serving::{Peer, Transport};
use http::{HeaderValue, StatusCode, header};
use hyper_util::service::TowerToHyperService;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{ObjectRef, Store};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Why the simulated kubelet cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Its self-signed certificate could not be made.
    #[error("failed to generate the kubelet's serving certificate")]
    Certificate(#[source] rcgen::Error),
    /// rustls refused the certificate or its settings.
    #[error("failed to configure TLS")]
    Tls(#[source] rustls::Error),
    /// No port on 127.0.0.1 could be had.
    #[error("failed to listen on 127.0.0.1")]
    Listen(#[source] std::io::Error),
}

/// What the kubelet knows of pods: the simulator's Pod cache, and a tick at each change of it.
#[derive(Clone)]
pub(crate) struct Pods {
    /// Every pod of the member.
    pub store: Store<Pod>,
    /// Ticks whenever a pod changes.
    pub changed: tokio::sync::watch::Receiver<()>,
}

impl Pods {
    /// The pod `ns/name`, when the kubelet runs it: it exists and is bound to a Node.
    pub(crate) fn running(&self, ns: &str, name: &str) -> Option<Arc<Pod>> {
        self.store
            .get(&ObjectRef::new(name).within(ns))
            .filter(|pod| {
                pod.spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .is_some_and(|n| !n.is_empty())
            })
    }
}

/// Shared by every request.
#[derive(Clone)]
pub(crate) struct State {
    pub pods: Pods,
    /// Cancelled when the simulator stops: followed logs and exec sessions end.
    pub cancel: CancellationToken,
}

/// A kubelet's plain-text error answer (go-restful's `WriteError`, Go's `http.Error`).
pub(crate) fn text(code: StatusCode, message: impl Into<String>) -> Response {
    let mut response = Response::new(Body::from(message.into()));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn router(state: State, beside: Router) -> Router {
    Router::new()
        .route(
            "/containerLogs/{namespace}/{pod}/{container}",
            get(logs::serve),
        )
        .route("/exec/{namespace}/{pod}/{container}", any(exec::serve))
        .fallback(|| async { text(StatusCode::NOT_FOUND, "404 page not found\n").into_response() })
        .with_state(state)
        .merge(beside)
}

/// A TLS configuration with a fresh self-signed certificate for 127.0.0.1 and `localhost`, HTTP/1.1 only (exec
/// switches protocols).
fn tls() -> Result<rustls::ServerConfig, ServeError> {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .map_err(ServeError::Certificate)?;
    let chain = vec![CertificateDer::from(certified.cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(ServeError::Tls)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(ServeError::Tls)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Starts serving on a free port of 127.0.0.1 until `cancel`, with the routes of `beside` (the member's
/// metrics-server) next to the kubelet's; the port and the accepting task.
///
/// # Errors
/// When no certificate can be made or no port had.
pub(crate) fn serve(
    pods: Pods,
    beside: Router,
    cancel: CancellationToken,
) -> Result<(u16, JoinHandle<()>), ServeError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(ServeError::Listen)?;
    listener.set_nonblocking(true).map_err(ServeError::Listen)?;
    let port = listener.local_addr().map_err(ServeError::Listen)?.port();
    let listener = TcpListener::from_std(listener).map_err(ServeError::Listen)?;
    let app = router(
        State {
            pods,
            cancel: cancel.clone(),
        },
        beside,
    );
    // On the binary's one serving loop: handshake, header and idle timeouts, a connection bound, back-off.
    let server = flotilla_serving::Server::new(
        listener,
        Transport::Tls(Arc::new(tls()?)),
        move |_: &Peer| TowerToHyperService::new(app.clone()),
    );
    let task = tokio::spawn(server.run(cancel));
    Ok((port, task))
}
