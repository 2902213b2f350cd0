//! Karmada's controllers: resource detector, scheduler, binding, execution, work status, binding status,
//! dependencies distributor and cluster controllers (`controllers`, `scheduler`), the controller manager that
//! runs them (`manager`) and the Pull-mode agent (`agent`), on a controller runtime of their own (`runtime`).
//! What they decide without I/O is `flotilla_core`'s; each controller's `Context` holds what it uses, taken from
//! the process's shared handles and the manager's [`Options`].
//!
//! Invariants: controllers reach the API only through kube clients and the interpreter facade; they never
//! depend on the embedded API server crate, so they run unchanged against a real kube-apiserver.

pub(crate) mod admin;
pub mod admission;
pub mod agent;
pub(crate) mod api;
pub(crate) mod bindings;
pub(crate) mod controllers;
pub(crate) mod discovery;
pub mod enabled_controllers;
pub mod error;
pub(crate) mod events;
pub mod features;
pub(crate) mod interpreter;
pub mod manager;
pub(crate) mod member;
pub mod metrics;
pub(crate) mod objects;
pub mod options;
pub mod resources;
pub mod runtime;
pub(crate) mod scheduler;
pub(crate) mod shared;
pub(crate) mod templates;
pub(crate) mod update;
pub(crate) mod works;

pub use error::{Error, Result};
pub use interpreter::Interpreter;
pub use member::client::member_config;
pub use options::Options;
