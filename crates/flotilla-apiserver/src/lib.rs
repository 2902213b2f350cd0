//! The embedded Kubernetes-compatible API server: HTTPS, authentication and impersonation, routing, the request
//! handlers, discovery and OpenAPI, watches, and kube-aggregator, over the registry (`flotilla_registry`: the
//! kinds, the write path, the internal controllers) and the store (`flotilla_store`).
//!
//! Invariants: every acknowledged write is on disk before the response; resourceVersion is one decimal counter
//! that never goes backwards, across restarts too. This crate knows nothing of Karmada: it serves any CRD.
//!
//! Layers, each module using only those before it: what requests and answers look like ([`tls`], [`route`],
//! [`negotiate`], [`wire`], [`protobuf`], [`metrics`]); who sends them ([`authn`]); forwarding requests to
//! backends, upgrades included ([`upstream`]), and the kubelet client ([`kubelet`]); the aggregator, which
//! takes over aggregated group-versions ([`aggregator`]); what one server shares ([`context`]); what the
//! server serves ([`openapi`], [`discovery`], [`handlers`]); kube-apiserver's own controller
//! ([`authentication_trust`]); and [`server`], which listens, authenticates and dispatches.
//!
//! # Embedding
//!
//! Several servers can run in one process (one per cluster of `flotilla up`):
//!
//! ```no_run
//! # async fn demo() -> Result<(), flotilla_apiserver::Error> {
//! use flotilla_apiserver::{Server, ServerConfig};
//! let mut config = ServerConfig::new("127.0.0.1:0".parse().expect("address"), "/tmp/flotilla-member1");
//! config.nodes = 3;
//! let server = Server::start(config).await?;
//! let kubeconfig = server.kubeconfig("member1"); // YAML with CA data and the admin token
//! println!("serving on {}", server.local_addr());
//! server.shutdown().await; // ends watches and flushes the store
//! # Ok(()) }
//! ```

pub mod metrics;
pub mod negotiate;
pub mod protobuf;
pub mod route;
pub mod tls;
pub mod wire;

pub(crate) mod authn;
pub(crate) mod authz;
pub mod csr_signing;

pub mod kubelet;
pub(crate) mod upstream;

pub(crate) mod aggregator;

pub mod context;

pub(crate) mod discovery;
pub(crate) mod handlers;
pub(crate) mod openapi;

pub(crate) mod authentication_trust;

pub mod server;

pub mod kubeconfig;

pub use server::{
    DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT, DEFAULT_MAX_REQUESTS_INFLIGHT, Error, RunningServer,
    Server, ServerConfig,
};
