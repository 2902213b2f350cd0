//! An SDK for writing Karmada interpreter webhooks in Rust, after Karmada's Go SDK, the example Workload
//! webhook, and the serving side of Kubernetes admission webhooks ([`admission`]).
//!
//! A webhook is a [`Handler`] turned into an axum [`router`] and served over TLS with [`serve_tls`]. Handlers
//! answer with the helpers [`errored`], [`succeeded`], [`validation_response`] and [`patch_response_from_raw`];
//! the server decodes requests, completes the uid and status code, and writes the reply as Karmada's Go SDK does.

pub mod admission;
mod error;
pub mod example;
mod request;
mod response;
mod server;
pub(crate) mod tls;

pub use error::Error;
pub use request::{DecodeError, Request, decode_raw};
pub use response::{
    JSON_PATCH, Response, errored, patch_response_from_raw, succeeded, validation_response,
};
pub use server::{Handler, MAX_REQUEST_BYTES, RunningServer, router, serve_tls};
pub use tls::{SelfSigned, TlsIdentity, generate_self_signed};
