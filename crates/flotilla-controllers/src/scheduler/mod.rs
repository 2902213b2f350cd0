//! The scheduler (controllers spec §4): which bindings it handles and when, the pure scheduling pipeline
//! (filter, score, estimate, order, select with spread constraints, assign replicas), and the in-memory
//! defaults Karmada's admission webhook would have applied.
//!
//! Invariants: everything here except the controller runtime is pure and deterministic: the same binding and
//! Cluster snapshot always give the same result, whatever order the snapshot lists clusters in. Messages,
//! reasons and tie-breaks are Karmada's, so results match Karmada's scheduler replica for replica.

pub mod assign;
pub mod components;
pub mod controller;
pub mod core;
pub mod decision;
pub mod defaults;
pub mod estimate;
pub mod filter;
mod own_writes;
pub mod queue;
mod region;
pub mod select;
pub mod webster;
pub mod workload_affinity;
pub mod writeback;

pub use self::core::{
    BindingRef, ErrorKind, Outcome, ScheduleError, ScheduleOptions, schedule_binding, schedule_once,
};
pub use self::decision::{Decision, ScheduleReason, accepts, decide};
pub use self::filter::FitError;

#[cfg(test)]
mod tests;
