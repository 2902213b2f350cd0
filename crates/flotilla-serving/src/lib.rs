//! One serving loop for every HTTP server of the binary (the embedded API server, the webhooks, the aggregated
//! API server, the simulated kubelet, the controller manager's admin listener), so that each holds under abuse
//! in the same way and none writes its own accept loop.
//!
//! What a server built on [`Server`] gets:
//! - accepting with a growing back-off when `accept` fails (out of file descriptors), logged once per streak;
//! - at most [`Options::max_connections`] open connections: at the bound it stops accepting, and further
//!   clients wait in the kernel's backlog until a connection closes;
//! - a bound on every phase a client could stall: the TLS handshake (or, in plain HTTP, the first request),
//!   HTTP/1 request headers, request bodies ([`RequestBody`]), and idle keep-alive connections of either HTTP
//!   version;
//! - graceful shutdown: it stops accepting, lets requests in flight finish within a grace period, then closes
//!   what is left.
//!
//! Beside the loop: a limit of requests in flight by class ([`inflight`]), which a server wires in where it knows
//! what a request is, and serving certificates reloaded when their files change ([`certificate`]).
//!
//! Invariants: this crate depends on no other Flotilla crate and knows nothing of Kubernetes; what a request
//! means (mutating, long-running) and what a refusal looks like are the caller's.

mod accept;
mod body;
pub mod certificate;
mod connection;
pub mod inflight;
mod options;

pub use accept::{Backoff as AcceptBackoff, Server, Stats, Transport};
pub use body::{BodyError, RequestBody};
pub use connection::Peer;
pub use options::Options;

/// The error type a service or body may fail with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
