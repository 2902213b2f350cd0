//! The controllers, one module each (controllers spec §3, §5–§10). Each exposes `NAME` and a `run` function
//! taking the shared [`crate::Context`] and a shutdown token; the manager starts them.

pub mod binding;
pub mod binding_status;
pub mod cluster;
pub mod cluster_status;
pub mod dependencies;
pub mod detector;
pub mod execution;
pub mod namespace_sync;
pub mod policy_normaliser;
pub mod work_status;
