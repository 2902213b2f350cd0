//! The embedded Kubernetes-compatible API server (apiserver spec) and its durable store.
//!
//! Invariants: every acknowledged write is on disk before the response; resourceVersion is one decimal counter
//! that never goes backwards, across restarts too. This crate knows nothing of Karmada: it serves any CRD.
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

pub mod admission;
pub(crate) mod aggregator;
pub(crate) mod auth;
mod builtins;
pub mod catalog;
pub(crate) mod certificates;
pub mod context;
pub(crate) mod controllers;
pub(crate) mod crd;
pub(crate) mod defaults;
pub(crate) mod discovery;
pub(crate) mod event_views;
pub mod fields;
pub(crate) mod handlers;
pub(crate) mod hpa;
pub mod kind_info;
pub(crate) mod kinds;
pub mod kubeconfig;
pub(crate) mod meta;
pub mod metrics;
pub(crate) mod openapi;
pub mod patch;
pub mod protobuf;
pub(crate) mod registry;
pub(crate) mod schema;
pub mod selector;
pub mod server;
pub(crate) mod status;
pub mod store;
pub mod table;
pub(crate) mod typed;
pub(crate) mod validate;
pub(crate) mod validation;
pub(crate) mod watch;
pub(crate) mod workloads;

pub use server::{Error, RunningServer, Server, ServerConfig};
