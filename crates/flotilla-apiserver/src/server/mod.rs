//! The HTTPS listener, request dispatch and the embeddable server handle.

pub mod health;
pub mod negotiate;
pub mod route;
pub mod tls;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::auth::{self, Tokens};
use crate::catalog::Catalog;
use crate::context::Ctx;
use crate::discovery;
use crate::handlers::{self, Req};
use crate::kubeconfig;
use crate::status::{ApiError, json_response};
use crate::store::Store;
use negotiate::{Allowed, Output, negotiate};
use route::{Query, Route};

/// Largest accepted request body.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The data dir could not be prepared.
    #[error("failed to prepare the data dir {path}")]
    DataDir {
        /// Directory.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// Certificates could not be prepared.
    #[error("failed to prepare TLS certificates")]
    Tls(#[from] tls::TlsError),
    /// The store could not be opened.
    #[error("failed to open the store")]
    Store(#[from] crate::store::disk::DiskError),
    /// The request metrics could not be registered.
    #[error("failed to register the request metrics")]
    Metrics(#[from] prometheus::Error),
    /// The listen address could not be bound.
    #[error("failed to listen on {addr}")]
    Bind {
        /// Address.
        addr: SocketAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// Bootstrapping built-in objects failed.
    #[error("failed to bootstrap {what}: {message}")]
    Bootstrap {
        /// What was being created.
        what: String,
        /// The API error.
        message: String,
    },
}

/// How to run one embedded API server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Directory for the store, certificates and admin token.
    pub data_dir: PathBuf,
    /// Number of Node objects to seed (`node-1` .. `node-N`).
    pub nodes: usize,
    /// Allocatable CPU of each seeded node.
    pub node_cpu: String,
    /// Allocatable memory of each seeded node.
    pub node_memory: String,
    /// Extra SANs for the serving certificate.
    pub extra_hosts: Vec<String>,
    /// Interval between periodic watch bookmarks.
    pub bookmark_interval: Duration,
    /// How long an Event lives after its last write (upstream's default: one hour).
    pub event_ttl: Duration,
}

impl ServerConfig {
    /// A configuration with defaults for everything but the address and data dir.
    pub fn new(listen: SocketAddr, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            listen,
            data_dir: data_dir.into(),
            nodes: 0,
            node_cpu: "8".into(),
            node_memory: "32Gi".into(),
            extra_hosts: Vec::new(),
            bookmark_interval: Duration::from_secs(30),
            event_ttl: Duration::from_secs(3600),
        }
    }
}

/// The embedded API server.
pub struct Server;

/// A running server: its address, kubeconfig and shutdown.
pub struct RunningServer {
    ctx: Arc<Ctx>,
    addr: SocketAddr,
    accept: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Starts a server: prepares the data dir, certificates and store, bootstraps built-in objects, starts
    /// the internal controllers and begins serving. Returns once the listener accepts connections.
    ///
    /// # Errors
    /// When the data dir, certificates, store or listen address cannot be prepared.
    pub async fn start(config: ServerConfig) -> Result<RunningServer, Error> {
        let dir = config.data_dir.clone();
        std::fs::create_dir_all(&dir).map_err(|source| Error::DataDir {
            path: dir.clone(),
            source,
        })?;
        let certs = tls::ensure(&dir, &config.extra_hosts)?;
        let front_proxy = tls::ensure_front_proxy(&dir)?;
        let tls_config = tls::server_config(&certs)?;
        let tokens = Tokens::load_or_create(&dir).map_err(|source| Error::DataDir {
            path: dir.clone(),
            source,
        })?;
        let store = Store::open(&dir)?;
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| Error::Bind {
                addr: config.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
        let ctx = Arc::new(Ctx {
            store,
            catalog: Arc::new(Catalog::with_builtins()),
            tokens,
            ca_pem: certs.ca_pem,
            address: addr.to_string(),
            shutdown: CancellationToken::new(),
            bookmark_interval: config.bookmark_interval,
            service_allocation: Arc::new(tokio::sync::Mutex::new(())),
            webhooks: Default::default(),
            metrics: crate::metrics::RequestMetrics::new()?,
            impersonation: Default::default(),
            aggregator: crate::aggregator::Aggregator::new(front_proxy),
        });
        crate::controllers::start(&ctx, &config).await?;
        let acceptor = TlsAcceptor::from(tls_config);
        let accept = tokio::spawn(accept_loop(listener, acceptor, ctx.clone()));
        Ok(RunningServer { ctx, addr, accept })
    }
}

impl RunningServer {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `https://` URL of the server.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The admin bearer token.
    pub fn admin_token(&self) -> &str {
        self.ctx.tokens.admin()
    }

    /// The CA certificate (PEM) clients must trust.
    pub fn ca_pem(&self) -> &str {
        &self.ctx.ca_pem
    }

    /// The object store (in-process observers such as benchmarks read its events and commit counters).
    pub fn store(&self) -> &Arc<Store> {
        &self.ctx.store
    }

    /// A kubeconfig reaching this server, with the given context (and cluster/user) name.
    pub fn kubeconfig(&self, context: &str) -> String {
        kubeconfig::render(
            &self.url(),
            &self.ctx.ca_pem,
            self.ctx.tokens.admin(),
            context,
        )
    }

    /// Stops serving, ends watches and flushes the store.
    pub async fn shutdown(self) {
        self.ctx.shutdown.cancel();
        self.accept.abort();
        let _ = self.accept.await;
        let store = self.ctx.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.shutdown()).await;
    }
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, ctx: Arc<Ctx>) {
    loop {
        let (tcp, peer) = tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let shutdown = ctx.shutdown.clone();
            let service =
                hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
                    let ctx = ctx.clone();
                    req.extensions_mut().insert(ClientAddr(peer));
                    async move { Ok::<_, Infallible>(dispatch(ctx, req).await) }
                });
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let io = TokioIo::new(tls);
            if h2 {
                let conn =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(io, service);
                tokio::select! {
                    _ = conn => {}
                    _ = shutdown.cancelled() => {}
                }
            } else {
                // Upgrades pass through to aggregated APIs (exec, attach and port-forward behind an APIService).
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .with_upgrades();
                tokio::select! {
                    _ = conn => {}
                    _ = shutdown.cancelled() => {}
                }
            }
        });
    }
}

/// The address a request came from (Go's `RemoteAddr`), which proxied requests carry in `X-Forwarded-For`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddr(pub SocketAddr);

/// The `/version` document.
pub fn version_info() -> serde_json::Value {
    json!({
        "major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
        "minCompatibilityMajor": "1", "minCompatibilityMinor": "35",
        "gitVersion": "v1.36.0+flotilla", "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean", "buildDate": "2026-11-22T00:00:00Z", "goVersion": "n/a",
        "compiler": "rustc", "platform": "linux/amd64",
    })
}

/// The user an `Authorization` header value authenticates: the admin, a ServiceAccount token Secret's
/// account, or a bound token's account while that ServiceAccount still exists with the uid it was issued for.
/// A ServiceAccount's user carries the account's uid, as kube-apiserver's token authenticators give it.
pub fn authenticate(ctx: &Ctx, header: Option<&str>) -> Option<auth::UserInfo> {
    let token = auth::bearer(header)?;
    let accounts = crate::catalog::ResKey::new("", "serviceaccounts");
    let uid_of = |namespace: &str, name: &str| {
        let account = ctx.store.get(&accounts, namespace, name)?;
        crate::meta::meta_str(&account, "uid").map(str::to_string)
    };
    if let Some(claims) = ctx
        .tokens
        .verify_bound(token, jiff::Timestamp::now().as_second())
    {
        let uid = uid_of(&claims.namespace, &claims.name)?;
        return (uid == claims.uid)
            .then(|| auth::UserInfo::service_account(&claims.namespace, &claims.name, &uid));
    }
    let mut user = ctx.tokens.authenticate(header)?;
    if let Some((namespace, name)) = auth::user::split_service_account(&user.username) {
        user.uid = uid_of(namespace, name).unwrap_or_default();
    }
    Some(user)
}

/// Handles one request.
pub async fn dispatch<B>(ctx: Arc<Ctx>, req: Request<B>) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match dispatch_inner(ctx, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn dispatch_inner<B>(ctx: Arc<Ctx>, req: Request<B>) -> Result<Response, ApiError>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let mut user = None;
    if !auth::is_public(&path) {
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok());
        let requester = authenticate(&ctx, header).ok_or_else(ApiError::unauthorized)?;
        // As kube-apiserver's filters run: authentication, then impersonation, then everything else.
        let impersonated = ctx.impersonation.impersonate(&requester, &parts.headers)?;
        user = Some(impersonated.unwrap_or(requester));
    }
    if let Some(user) = &user
        && let Some(target) = ctx
            .aggregator
            .claims(&ctx, &path)
            .or_else(|| ctx.aggregator.claims_openapi(&ctx, &path))
    {
        return Ok(crate::aggregator::proxy::forward(&ctx, target, parts, body, user).await);
    }
    let accept = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    let route = route::parse(&path);
    let get_only = |m: &http::Method| -> Result<(), ApiError> {
        if m == http::Method::GET || m == http::Method::HEAD {
            Ok(())
        } else {
            Err(ApiError::new(
                405,
                "MethodNotAllowed",
                format!("{m} is not supported on {path}"),
            ))
        }
    };
    match route {
        Route::Health | Route::Ready => {
            get_only(&parts.method)?;
            Ok(health::respond(&ctx, &path, parts.uri.query()))
        }
        Route::Version => {
            get_only(&parts.method)?;
            Ok(json_response(StatusCode::OK, &version_info()))
        }
        Route::Api | Route::Apis => {
            get_only(&parts.method)?;
            let core = route == Route::Api;
            let out = negotiate(
                accept.as_deref(),
                Allowed {
                    discovery: true,
                    ..Allowed::default()
                },
            )?;
            match out {
                Output::Discovery(v) => {
                    let body = discovery::aggregated(&ctx, core, &v);
                    let mut r = json_response(StatusCode::OK, &body);
                    let ct = format!(
                        "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"
                    );
                    if let Ok(h) = HeaderValue::from_str(&ct) {
                        r.headers_mut().insert(header::CONTENT_TYPE, h);
                    }
                    r.headers_mut()
                        .insert(header::VARY, HeaderValue::from_static("Accept"));
                    Ok(r)
                }
                _ if core => Ok(json_response(
                    StatusCode::OK,
                    &discovery::api_versions(&ctx.address),
                )),
                _ => Ok(json_response(StatusCode::OK, &discovery::api_groups(&ctx))),
            }
        }
        Route::Group(g) => {
            get_only(&parts.method)?;
            discovery::api_group(&ctx, &g)
                .map(|d| json_response(StatusCode::OK, &d))
                .ok_or_else(ApiError::no_route)
        }
        Route::GroupVersion(g, v) => {
            get_only(&parts.method)?;
            if g.is_empty() && v != "v1" {
                return Err(ApiError::no_route());
            }
            discovery::resource_list(&ctx.catalog, &g, &v)
                .map(|d| json_response(StatusCode::OK, &d))
                .ok_or_else(ApiError::no_route)
        }
        Route::OpenApi(rest) => {
            get_only(&parts.method)?;
            crate::handlers::openapi::serve(&ctx, &rest, accept.as_deref())
        }
        Route::Metrics => {
            get_only(&parts.method)?;
            let mut r = (StatusCode::OK, ctx.metrics.render()).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            Ok(r)
        }
        Route::Unknown => Err(ApiError::no_route()),
        Route::Resource(rp) => {
            let query = Query::parse(parts.uri.query());
            let content_type = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|h| h.to_str().ok());
            let labels = crate::metrics::RequestLabels {
                method: &parts.method,
                rp: &rp,
                query: &query,
                content_type,
            };
            let response =
                match resource_request(&ctx, &parts, rp.clone(), body, accept, user).await {
                    Ok(r) => r,
                    Err(e) => e.into_response(),
                };
            ctx.metrics.observe(&labels, response.status().as_u16());
            Ok(response)
        }
    }
}

/// Reads the body of a resource request and hands it to its handler.
async fn resource_request<B>(
    ctx: &Arc<Ctx>,
    parts: &http::request::Parts,
    rp: route::ResourcePath,
    body: B,
    accept: Option<String>,
    user: Option<auth::UserInfo>,
) -> Result<Response, ApiError>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let body = read_body(body).await?;
    let header_str = |name: header::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
    };
    let req = Req {
        method: parts.method.clone(),
        rp,
        query: Query::parse(parts.uri.query()),
        accept,
        content_type: header_str(header::CONTENT_TYPE),
        user_agent: header_str(header::USER_AGENT),
        body,
        user,
    };
    handlers::handle(ctx, req).await
}

async fn read_body<B>(body: B) -> Result<Bytes, ApiError>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                Err(ApiError::too_large("the request body is larger than 3 MiB"))
            } else {
                Err(ApiError::bad_request(format!(
                    "failed to read the request body: {e}"
                )))
            }
        }
    }
}

/// Body of a streaming response.
pub fn stream_body<S>(stream: S) -> Body
where
    S: futures::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    Body::from_stream(stream)
}
