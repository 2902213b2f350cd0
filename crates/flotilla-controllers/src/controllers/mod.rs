//! The controllers, one module each. Each exposes `NAME`, its `Context` (what it
//! needs, taken by `Context::new` from the process's [`crate::shared::Shared`] handles and, for its settings,
//! the [`crate::Options`]) and a `run` function taking that context and a shutdown token; the manager and the
//! agent start them.

pub(crate) mod agent_csr_approving;
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
pub(crate) mod hpa_marker;
pub(crate) mod namespace_sync;
pub(crate) mod policy_normaliser;
pub(crate) mod replicas_syncer;
pub(crate) mod taint_manager;
pub(crate) mod unified_auth;
pub(crate) mod work_status;
pub(crate) mod workload_rebalancer;
