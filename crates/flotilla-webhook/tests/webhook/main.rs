//! Over-the-wire tests of the interpreter's webhook layer and the webhook SDK, on loopback with real TLS.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "a failed unwrap in a test is a failed test"
)]

mod example;
mod failures;
mod sdk;
mod selection;
mod service;
mod support;
