//! Every end-to-end scenario, one module per file, in one test binary (see `autotests` in Cargo.toml).

mod admission;
mod affinity_tiers;
mod agent_csr;
mod agent_identity;
mod application_failover;
mod cluster_proxy;
mod dependency_conflicts;
mod events;
mod failover;
mod harness;
mod member_status;
mod multiple_pod_templates;
mod pod_io;
mod policy_admission;
mod precedence;
mod preemption;
mod propagation;
mod pull;
mod replicas_syncer;
mod simulator;
mod suspension;
mod workload;
mod workload_affinity;
mod workload_rebalancer;

/// A new file in tests/ is built only once it is declared here or listed in Cargo.toml.
#[test]
fn every_test_file_is_built() {
    flotilla_testing::suites::assert_every_test_file_is_built(env!("CARGO_MANIFEST_DIR"));
}
