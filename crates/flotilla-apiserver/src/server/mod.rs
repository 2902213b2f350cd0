//! The HTTPS listener, request dispatch and the embeddable server handle.

pub mod health;
mod inflight;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use flotilla_registry::auth::{Tokens, UserInfo};
use flotilla_registry::context::Ctx as RegistryCtx;
use flotilla_registry::status::ApiError;
use flotilla_store::Store;

use crate::aggregator::Aggregator;
use crate::authn::{self, ClientAddr};
use crate::context::Ctx;
use crate::handlers::{self, Req};
use crate::negotiate::{Allowed, Output, negotiate};
use crate::route::{self, Query, Route};
use crate::wire::{MAX_BODY, error_response, json_response};
use crate::{discovery, kubeconfig, tls};

pub use crate::wire::version_info;

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
    Store(#[from] flotilla_store::disk::DiskError),
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
    /// The kubelet client could not be built.
    #[error("failed to build the kubelet client")]
    Kubelet(#[source] rustls::Error),
    /// Bootstrapping built-in objects failed.
    #[error(transparent)]
    Bootstrap(#[from] flotilla_registry::controllers::BootstrapError),
}

/// kube-apiserver's default `--max-requests-inflight`.
pub const DEFAULT_MAX_REQUESTS_INFLIGHT: usize = 400;
/// kube-apiserver's default `--max-mutating-requests-inflight`.
pub const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT: usize = 200;

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
    /// kube-apiserver's `--max-requests-inflight`: read-only requests in flight at once beyond which requests are
    /// refused with 429 (0: no limit).
    pub max_requests_inflight: usize,
    /// kube-apiserver's `--max-mutating-requests-inflight`: the same for mutating requests (0: no limit).
    pub max_mutating_requests_inflight: usize,
    /// How long clients may take at each step of a connection, and how many connections may be open.
    pub serving: flotilla_serving::Options,
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
            max_requests_inflight: DEFAULT_MAX_REQUESTS_INFLIGHT,
            max_mutating_requests_inflight: DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
            serving: flotilla_serving::Options::default(),
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
        let registry = Arc::new(RegistryCtx::new(
            store,
            tokens,
            certs.ca_pem,
            addr.to_string(),
            CancellationToken::new(),
        ));
        let ctx = Arc::new(Ctx {
            aggregator: Arc::new(Aggregator::new(registry.clone(), front_proxy)),
            registry,
            bookmark_interval: config.bookmark_interval,
            metrics: crate::metrics::RequestMetrics::new()?,
            impersonation: Default::default(),
            kubelets: crate::kubelet::Kubelets::new().map_err(Error::Kubelet)?,
            inflight: flotilla_serving::inflight::Limits::new(
                config.max_requests_inflight,
                config.max_mutating_requests_inflight,
            ),
        });
        let controllers = flotilla_registry::controllers::Config {
            nodes: config.nodes,
            node_cpu: config.node_cpu.clone(),
            node_memory: config.node_memory.clone(),
            event_ttl: config.event_ttl,
        };
        flotilla_registry::controllers::start(&ctx.registry, &controllers).await?;
        // kube-controller-manager's signer of client certificates, with the cluster CA.
        let signing = crate::csr_signing::Signing {
            signer: Arc::new(crate::csr_signing::Signer::new(tls::ca_issuer(&dir)?)),
        };
        tokio::spawn(flotilla_registry::controllers::runtime::run(
            ctx.registry.clone(),
            signing,
        ));
        // kube-apiserver's own controllers: the front-proxy trust that aggregated API servers read, and the
        // aggregator's availability and discovery.
        crate::authentication_trust::start(&ctx.registry, ctx.aggregator.front_proxy()).await;
        crate::aggregator::start(&ctx.aggregator);
        let shutdown = ctx.registry.shutdown.clone();
        let serving = ctx.clone();
        let server = flotilla_serving::Server::new(
            listener,
            flotilla_serving::Transport::Tls(tls_config),
            move |peer: &flotilla_serving::Peer| Dispatch {
                ctx: serving.clone(),
                peer: ClientAddr(peer.addr),
                certificate: authn::CertificateUser(authn::certificate_user(&peer.certificates)),
            },
        )
        .options(config.serving);
        let accept = tokio::spawn(server.run(shutdown));
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
        self.ctx.registry.tokens.admin()
    }

    /// The CA certificate (PEM) clients must trust.
    pub fn ca_pem(&self) -> &str {
        &self.ctx.registry.ca_pem
    }

    /// The object store (in-process observers such as benchmarks read its events and commit counters).
    pub fn store(&self) -> &Arc<Store> {
        &self.ctx.registry.store
    }

    /// A kubeconfig reaching this server, with the given context (and cluster/user) name.
    pub fn kubeconfig(&self, context: &str) -> String {
        kubeconfig::render(
            &self.url(),
            &self.ctx.registry.ca_pem,
            self.ctx.registry.tokens.admin(),
            context,
        )
    }

    /// Stops serving, ends watches and flushes the store.
    pub async fn shutdown(self) {
        self.ctx.registry.shutdown.cancel();
        // Connections finish their requests in flight within the serving options' grace, then close.
        let _ = self.accept.await;
        let store = self.ctx.registry.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.shutdown()).await;
    }
}

/// One connection's service: every request dispatched with the client's address.
struct Dispatch {
    ctx: Arc<Ctx>,
    peer: ClientAddr,
    certificate: authn::CertificateUser,
}

impl hyper::service::Service<Request<flotilla_serving::RequestBody>> for Dispatch {
    type Response = Response;
    type Error = Infallible;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, mut req: Request<flotilla_serving::RequestBody>) -> Self::Future {
        req.extensions_mut().insert(self.peer);
        req.extensions_mut().insert(self.certificate.clone());
        let ctx = self.ctx.clone();
        Box::pin(async move { Ok(dispatch(ctx, req).await) })
    }
}

/// Handles one request.
pub async fn dispatch<B>(ctx: Arc<Ctx>, req: Request<B>) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match dispatch_inner(ctx, req).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    }
}

async fn dispatch_inner<B>(ctx: Arc<Ctx>, req: Request<B>) -> Result<Response, ApiError>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let header = parts
        .headers
        .get(header::AUTHORIZATION)
        .map(|h| String::from_utf8_lossy(h.as_bytes()));
    // As kube-apiserver's authenticators are ordered: a client certificate first, then a bearer token, and
    // anyone with neither is the anonymous user (`--anonymous-auth=true`), whom authorization then judges like
    // any other; a bearer token no authenticator accepts is 401 on every path. The health paths are not
    // exempt: RBAC's bootstrap policy, created before the server serves, lets everyone read them.
    let certificate = parts
        .extensions
        .get::<authn::CertificateUser>()
        .and_then(|c| c.0.clone());
    let requester = match certificate {
        Some(user) => user,
        None => authn::authenticate(&ctx.registry, header.as_deref())?
            .unwrap_or_else(UserInfo::anonymous),
    };
    // As kube-apiserver's filters run: authentication, then impersonation, then everything else. What the
    // request asks to do is read once: impersonation authorizes it for the requester, then authorization for
    // whom the request speaks.
    let mut attrs = crate::authz::attributes(&requester, &parts.method, &path, parts.uri.query());
    let impersonated =
        ctx.impersonation
            .impersonate(&ctx.registry.store, &requester, &parts.headers, &attrs)?;
    if let Some(impersonated) = impersonated {
        attrs.user = impersonated;
    }
    // After impersonation, as kube-apiserver's filters run; held until the answer is returned.
    let class = inflight::class(&parts.method, &path, parts.uri.query(), Some(&attrs.user));
    let Ok(_inflight) = ctx.inflight.admit(class) else {
        return Ok(inflight::too_many_requests());
    };
    crate::authz::authorize(&ctx.registry.store, &attrs)?;
    let user = attrs.user;
    // Only what authorization allowed reaches an aggregated API server, the anonymous user's requests too (sent
    // on as `system:anonymous` in `system:unauthenticated`, as kube-aggregator forwards them).
    if let Some(target) = ctx
        .aggregator
        .claims(&path)
        .or_else(|| ctx.aggregator.claims_openapi(&path))
    {
        return Ok(
            crate::aggregator::proxy::forward(&ctx.aggregator, target, parts, body, &user).await,
        );
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
                    &discovery::api_versions(&ctx.registry.address),
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
            discovery::resource_list(&ctx.registry.catalog, &g, &v)
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
            let method = parts.method.clone();
            let content_type = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string);
            // Connect subresources stream both ways (an exec switches protocols): their bodies are not read here.
            let response = if rp.is_connect() {
                handlers::connect::serve(&ctx, parts, body, &rp).await
            } else {
                match resource_request(&ctx, &parts, rp.clone(), body, accept, user).await {
                    Ok(r) => r,
                    Err(e) => error_response(&e),
                }
            };
            let labels = crate::metrics::RequestLabels {
                method: &method,
                rp: &rp,
                query: &query,
                content_type: content_type.as_deref(),
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
    user: UserInfo,
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
