//! The scheduler's pure pipeline, Karmada's scheduler without its I/O: which bindings it handles and when, scheduling itself
//! (filter, score, estimate, order, select with spread constraints, assign replicas), what it writes back, and
//! the in-memory defaults Karmada's admission webhook would have applied.
//!
//! Invariants: pure and deterministic: the same binding and Cluster snapshot always give the same result,
//! whatever order the snapshot lists clusters in. Messages, reasons and tie-breaks are Karmada's, so results
//! match Karmada's scheduler replica for replica. The controller that runs it is `flotilla-controllers`'.

pub mod assign;
pub mod components;
pub mod core;
pub mod decision;
pub mod defaults;
pub mod estimate;
pub mod filter;
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
