//! The embedded Kubernetes-compatible API server (apiserver spec), its durable store and the member workload
//! simulator.
//!
//! Invariants: every acknowledged write is on disk before the response; resourceVersion is one decimal counter
//! that never goes backwards, across restarts too. This crate knows nothing of Karmada: it serves any CRD.
