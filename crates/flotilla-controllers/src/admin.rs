//! The admin listener: Prometheus `/metrics`, liveness `/healthz` and readiness `/readyz` (the manager adds the
//! status page, `flotilla_status_page::page`).
//!
//! `/healthz` answers `ok` while the process serves; `/readyz` answers `ok` once the manager has started its
//! controllers (after leader election and interpreter readiness) and 503 before.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use flotilla_serving::{Peer, RequestBody, Transport};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::metrics::Metrics;

#[derive(Clone)]
struct AdminState {
    metrics: Metrics,
    ready: watch::Receiver<bool>,
}

/// The admin routes over `metrics`, ready when `ready` holds `true`.
pub(crate) fn router(metrics: Metrics, ready: watch::Receiver<bool>) -> Router {
    Router::new()
        .route("/metrics", get(serve_metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(AdminState { metrics, ready })
}

async fn serve_metrics(State(state): State<AdminState>) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.encode(),
    )
}

async fn readyz(State(state): State<AdminState>) -> impl IntoResponse {
    if *state.ready.borrow() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "controllers not started")
    }
}

/// Serves the admin routes in plain HTTP on `listener` until `shutdown` is cancelled, on the binary's one
/// serving loop (`flotilla_serving`): a scraper or prober that stalls is cut off as any client is.
pub(crate) async fn serve(listener: TcpListener, router: Router, shutdown: CancellationToken) {
    let server = flotilla_serving::Server::new(listener, Transport::Plain, move |_: &Peer| {
        let router = router.clone();
        hyper::service::service_fn(move |request: http::Request<RequestBody>| {
            router.clone().oneshot(request.map(axum::body::Body::new))
        })
    });
    server.run(shutdown).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    async fn get_status(router: &Router, path: &str) -> (StatusCode, String) {
        let resp = router
            .clone()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn readiness_follows_the_flag_and_metrics_are_served() {
        let metrics = Metrics::new().unwrap();
        metrics.observe("detector", std::time::Duration::from_millis(1), None);
        let (tx, rx) = watch::channel(false);
        let router = router(metrics, rx);
        assert_eq!(
            get_status(&router, "/healthz").await,
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(
            get_status(&router, "/readyz").await.0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        tx.send_replace(true);
        assert_eq!(
            get_status(&router, "/readyz").await,
            (StatusCode::OK, "ok".into())
        );
        let (status, body) = get_status(&router, "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("flotilla_controller_reconciles_total{controller=\"detector\"} 1"));
    }
}
