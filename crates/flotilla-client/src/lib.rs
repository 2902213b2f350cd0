//! How Flotilla's processes reach Kubernetes API servers: clients that speak HTTP/2 whenever the server offers it
//! by ALPN, so one connection multiplexes every watch and write as client-go's does, with a client-side rate
//! limit set by Karmada's flags (`--kube-api-qps`/`--kube-api-burst` for the control plane,
//! `--cluster-api-qps`/`--cluster-api-burst` for members); leader election on a Lease ([`leader`]); watched objects read one at a time, so
//! one that does not decode is reported and left out instead of failing the watch ([`lenient`]); and the text
//! of an API server's refusals ([`api_error`]).
//!
//! kube's own builder speaks HTTP/1.1 only, so each request in flight beyond the pool's idle connections
//! opens another TLS connection; against a real kube-apiserver that is a handshake per concurrent write. The
//! stack here is kube's (base URI, credentials, extra headers, its retry of 429/503/504) over a connector that
//! offers `h2` and `http/1.1`. HTTP/2 connections send keep-alive pings, as client-go's health check does, so
//! a dead peer fails every stream on it instead of leaving watches hanging.
//!
//! Invariant: it knows nothing of Karmada and depends on no other Flotilla crate; what it does, it does for any
//! API server.

pub mod api_error;
pub mod leader;
pub mod lenient;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http_body_util::BodyExt;
use hyper_rustls::FixedServerNameResolver;
use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt, DynBody};
use kube::{Client, Config};
use tower::retry::RetryLayer;
use tower::util::BoxService;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt};

/// How often an idle HTTP/2 connection is pinged, and how long the answer may take (client-go's
/// `ReadIdleTimeout` and `PingTimeout`).
const PING_INTERVAL: Duration = Duration::from_secs(30);
const PING_TIMEOUT: Duration = Duration::from_secs(15);

/// The service under a [`kube::Client`] that [`builder`] assembles (kube's own builder's type).
pub type ClientService = BoxService<http::Request<Body>, http::Response<Box<DynBody>>, BoxError>;

/// A client-side request rate limit: a token bucket refilled at `qps` per second holding at most `burst`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second; zero or less sets no limit.
    pub qps: f32,
    /// Requests allowed at once above the sustained rate (at least one when `qps` is positive).
    pub burst: u32,
}

impl RateLimit {
    /// Flotilla's default for both the control plane and members. Karmada's (40 and 60) throttles one
    /// control plane to a third of what its API servers absorb (issue 17 measured 132 s against 64-81 s for
    /// 300 Deployments); this is far above what one control plane asks and still stops a runaway loop.
    pub const DEFAULT: RateLimit = RateLimit {
        qps: 5000.0,
        burst: 10000,
    };

    /// The governor quota, `None` when there is no limit.
    fn quota(self) -> Option<Quota> {
        if self.qps.is_nan() || self.qps <= 0.0 {
            return None;
        }
        let burst = NonZeroU32::new(self.burst).unwrap_or(NonZeroU32::MIN);
        // One token every 1/qps seconds; rates above a nanosecond's worth are as good as none.
        let period = Duration::from_secs_f64(1.0 / f64::from(self.qps));
        Quota::with_period(period).map(|quota| quota.allow_burst(burst))
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit::DEFAULT
    }
}

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// kube refused the configuration (credentials, TLS material, headers).
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The TLS server name override is not a valid name.
    #[error("invalid tls-server-name {name:?}: {reason}")]
    ServerName {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
}

/// A client for `config`, rate limited by `limit`.
///
/// # Errors
/// As [`builder`].
pub fn client(config: Config, limit: RateLimit) -> Result<Client, ClientError> {
    Ok(builder(config, limit)?.build())
}

/// A client builder for `config`, rate limited by `limit`, for callers that add layers of their own. A
/// configuration with a proxy keeps kube's HTTP/1.1 stack, which knows how to tunnel through it.
///
/// # Errors
/// When kube cannot derive credentials, TLS material or headers from `config`.
pub fn builder(
    config: Config,
    limit: RateLimit,
) -> Result<ClientBuilder<ClientService>, ClientError> {
    let limiter = limit
        .quota()
        .map(|quota| Arc::new(RateLimiter::direct(quota)));
    if config.proxy_url.is_some() {
        let builder = ClientBuilder::try_from(config)?;
        return Ok(builder
            .with_layer(&RateLimitLayer { limiter })
            .with_layer(&BoxService::layer()));
    }
    let default_ns = config.default_namespace.clone();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(config.connect_timeout);
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config.rustls_client_config()?)
        .https_or_http();
    let tls =
        match &config.tls_server_name {
            Some(name) => {
                let server_name = name.clone().try_into().map_err(
                    |err: rustls_pki_types::InvalidDnsNameError| ClientError::ServerName {
                        name: name.clone(),
                        reason: err.to_string(),
                    },
                )?;
                tls.with_server_name_resolver(FixedServerNameResolver::new(server_name))
            }
            None => tls,
        };
    let mut connector = TimeoutConnector::new(tls.enable_all_versions().wrap_connector(http));
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let http_client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .http2_keep_alive_interval(PING_INTERVAL)
        .http2_keep_alive_timeout(PING_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        .build(connector);
    let service = ServiceBuilder::new()
        .layer(RateLimitLayer { limiter })
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(http_client)
        .map_response(|response| {
            response.map(|body| Box::new(body.map_err(BoxError::from)) as Box<DynBody>)
        })
        .boxed();
    Ok(ClientBuilder::new(service, default_ns))
}

/// Makes every request wait for a token of a shared bucket first (none when there is no limit). The wait is
/// part of readiness: kube's client drives its service from one buffer worker, so requests leave in order at
/// the bucket's rate.
#[derive(Clone)]
struct RateLimitLayer {
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;

    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            limiter: self.limiter.clone(),
            wait: None,
            permitted: false,
        }
    }
}

struct RateLimited<S> {
    inner: S,
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
    /// The wait for the next token, while one is under way.
    wait: Option<BoxFuture<'static, ()>>,
    /// A token was taken for the next call.
    permitted: bool,
}

impl<S, R> Service<R> for RateLimited<S>
where
    S: Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        if let Some(limiter) = &self.limiter
            && !self.permitted
        {
            let wait = self.wait.get_or_insert_with(|| {
                let limiter = limiter.clone();
                Box::pin(async move { limiter.until_ready().await })
            });
            std::task::ready!(wait.as_mut().poll(cx));
            self.wait = None;
            self.permitted = true;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.permitted = false;
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_limit_for_zero_negative_or_nan_qps() {
        for qps in [0.0, -1.0, f32::NAN] {
            assert!(RateLimit { qps, burst: 10 }.quota().is_none(), "qps {qps}");
        }
    }

    #[test]
    fn quota_refills_at_qps_and_holds_burst() {
        let quota = RateLimit {
            qps: 40.0,
            burst: 60,
        }
        .quota()
        .expect("a quota");
        assert_eq!(quota.burst_size().get(), 60);
        assert_eq!(quota.replenish_interval(), Duration::from_millis(25));
        // A zero burst still lets one request through at a time.
        let quota = RateLimit { qps: 1.0, burst: 0 }.quota().expect("a quota");
        assert_eq!(quota.burst_size().get(), 1);
    }
}
