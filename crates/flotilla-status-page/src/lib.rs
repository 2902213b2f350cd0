//! The view for people: each bound template's journey through the control plane ([`journey`]: claiming
//! policy, scheduling result, Works and member health, aggregated status, and the interpreter's record of which
//! layer answered), and the live page that shows it ([`page`]), which the controller manager serves on its admin
//! listener and `flotilla status` reads.
//!
//! Invariants: it reads the caches the controllers' informers keep (a kube-runtime store per kind, handed to
//! [`page::router`]), never a request per view; it writes nothing, and depends on no controller: the controllers
//! serve it, not the other way round.

pub mod journey;
pub mod page;
