//! Karmada's controllers (controllers spec): resource detector, scheduler, binding, execution, work status,
//! binding status, dependencies distributor and cluster controllers.
//!
//! Invariants: controllers reach the API only through kube clients and the interpreter facade; they never
//! depend on the embedded API server crate, so they run unchanged against a real kube-apiserver.

pub mod names;
pub mod selector;
pub mod overrides;
