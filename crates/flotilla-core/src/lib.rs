//! Karmada's logic that needs no API server: the scheduling algorithm, the override engine, selector and
//! affinity matching, the names Karmada derives from objects, condition lists, manifest pruning and the
//! validation of policy specs.
//!
//! Invariants: no Kubernetes client and no I/O (kube's core types only, never its client); every function is
//! deterministic over the API types it is given, so the controllers, benchmarks and tests call it directly.
//! Messages, reasons and tie-breaks are Karmada's, so results match Karmada's controllers for the same input.

pub mod bindings;
pub mod conditions;
pub mod names;
pub mod overrides;
pub mod prune;
pub mod scheduler;
pub mod selector;
pub mod state_preservation;
pub mod validation;
