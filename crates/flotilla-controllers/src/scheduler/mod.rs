//! The scheduler controller: which bindings it handles and when, its priority queue, and
//! writing results back; the scheduling itself is `flotilla_core::scheduler`'s pure pipeline.

pub(crate) mod controller;
mod own_writes;
pub(crate) mod queue;
