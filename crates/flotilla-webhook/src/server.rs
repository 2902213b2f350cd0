//! The HTTP side of a webhook, as Karmada's Go SDK (`pkg/webhook/interpreter`) has it: decoding the request,
//! calling the handler, completing and writing the response; and a TLS server for any axum router, on the
//! binary's one serving loop (`flotilla_serving`).
//!
//! Guarantees: every request gets HTTP 200 with a JSON `{"response": ...}` body, as Karmada's SDK answers; request
//! problems (empty body, wrong content type, undecodable body, body over 1 MiB) become `Errored(400)` responses
//! without a uid, which Karmada's client rejects as a uid mismatch.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use flotilla_api::config::v1alpha1::ResourceInterpreterContext;
use flotilla_serving::{Peer, RequestBody, Transport};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::{Request, Response, errored};

/// The largest request body read; longer bodies are refused (Go SDK: `MaxRespBodyLength`).
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Answers interpreter requests.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request; the server completes the uid and status code.
    fn handle(&self, request: Request) -> impl Future<Output = Response> + Send;
}

impl<F, Fut> Handler for F
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send,
{
    fn handle(&self, request: Request) -> impl Future<Output = Response> + Send {
        self(request)
    }
}

/// An axum router serving `handler` on `path` (POST).
pub fn router<H: Handler>(path: &str, handler: H) -> Router {
    Router::new()
        .route(path, axum::routing::post(serve_request::<H>))
        .with_state(Arc::new(handler))
}

async fn serve_request<H: Handler>(
    State(handler): State<Arc<H>>,
    headers: HeaderMap,
    body: Body,
) -> axum::response::Response {
    let response = match decode(&headers, body).await {
        Ok(request) => {
            let uid = request.uid.clone();
            let mut response = handler.handle(request).await;
            response.complete(&uid);
            response
        }
        Err(response) => response,
    };
    let context = ResourceInterpreterContext {
        response: Some(response.response),
        ..Default::default()
    };
    axum::Json(context).into_response()
}

/// Reads and decodes a request as Karmada's SDK does, or the `Errored(400)` response explaining why not.
async fn decode(headers: &HeaderMap, body: Body) -> Result<Request, Response> {
    let body = axum::body::to_bytes(body, MAX_REQUEST_BYTES)
        .await
        .map_err(|error| {
            errored(
                400,
                format!(
                    "failed to read the request body (at most {MAX_REQUEST_BYTES} bytes): {error}"
                ),
            )
        })?;
    if body.is_empty() {
        return Err(errored(400, "request body is empty"));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()));
    if content_type.as_deref() != Some("application/json") {
        let shown = content_type.unwrap_or_default();
        return Err(errored(
            400,
            format!("contentType={shown}, expected application/json"),
        ));
    }
    let context: ResourceInterpreterContext =
        serde_json::from_slice(&body).map_err(|error| errored(400, error))?;
    let request = context.request.ok_or_else(|| {
        errored(
            400,
            "request is missing from the ResourceInterpreterContext",
        )
    })?;
    Ok(Request { request })
}

/// A TLS server running in the background; stopped by [`RunningServer::shutdown`] or when dropped.
#[derive(Debug)]
pub struct RunningServer {
    local_addr: SocketAddr,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl RunningServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, lets requests in flight finish (within the serving loop's grace), closes every
    /// connection, and waits for the server task to end.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            // The task never panics; a join error can only be a cancellation.
            let _ = task.await;
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Serves `router` over TLS on `listener` until shut down.
pub fn serve_tls(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
) -> Result<RunningServer, crate::Error> {
    let server = flotilla_serving::Server::new(listener, Transport::Tls(tls), move |_: &Peer| {
        let router = router.clone();
        hyper::service::service_fn(move |request: hyper::Request<RequestBody>| {
            router.clone().oneshot(request.map(Body::new))
        })
    });
    let local_addr = server.local_addr().map_err(crate::Error::LocalAddr)?;
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(server.run(shutdown.clone()));
    Ok(RunningServer {
        local_addr,
        shutdown,
        task: Some(task),
    })
}
