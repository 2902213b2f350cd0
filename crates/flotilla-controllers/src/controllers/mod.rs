//! The controllers, one module each (controllers spec §3, §5–§10). Each exposes `NAME` and a `run` function
//! taking the shared [`crate::Context`] and a shutdown token; the manager starts them.

pub(crate) mod application_failover;
pub(crate) mod binding;
pub(crate) mod binding_status;
pub(crate) mod cluster;
pub(crate) mod cluster_health;
pub(crate) mod cluster_status;
pub(crate) mod cluster_taint_policy;
pub(crate) mod dependencies;
pub(crate) mod detector;
pub(crate) mod execution;
pub(crate) mod graceful_eviction;
pub(crate) mod namespace_sync;
pub(crate) mod policy_normaliser;
pub(crate) mod replicas_syncer;
pub(crate) mod taint_manager;
pub(crate) mod unified_auth;
pub(crate) mod work_status;
