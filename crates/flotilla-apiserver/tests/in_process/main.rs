//! In-process component tests: a real server on a free port, driven by kube-rs and kube-runtime over HTTPS.
#![allow(clippy::unwrap_used, clippy::panic)]

mod aggregation;
mod anonymous;
mod client_certificates;
mod common;
mod crd;
mod crud;
mod gc;
mod http2;
mod inflight;
mod kube_runtime;
mod leases_events;
mod metrics;
mod published;
mod semantics;
mod tokens;
mod webhooks;
