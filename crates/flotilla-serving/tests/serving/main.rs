//! The serving loop under abuse, on loopback: clients that never finish a handshake, slow bodies, certificates
//! replaced under a running server.

#[path = "../support/mod.rs"]
mod support;

mod bodies;
mod handshakes;
mod reload;
