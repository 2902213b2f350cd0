//! Karmada's controllers (controllers spec): resource detector, scheduler, binding, execution, work status,
//! binding status, dependencies distributor and cluster controllers.
//!
//! Invariants: controllers reach the API only through kube clients and the interpreter facade; they never
//! depend on the embedded API server crate, so they run unchanged against a real kube-apiserver.

pub mod admin;
pub mod admission;
pub mod api;
pub mod bindings;
pub mod conditions;
pub mod context;
pub mod controllers;
pub mod discovery;
pub mod error;
pub mod events;
pub mod features;
pub mod interpreter;
pub mod join;
pub mod leader;
pub mod manager;
pub mod member;
pub mod metrics;
pub mod names;
pub mod objects;
pub mod overrides;
pub mod prune;
pub mod resources;
pub mod runtime;
pub mod scheduler;
pub mod selector;
pub mod templates;
pub mod update;
pub mod works;

pub use context::{Context, Options};
pub use error::{Error, Result};
pub use interpreter::Interpreter;
