//! The controllers' integration tests, one module per file, in one test binary (see `autotests` in
//! Cargo.toml); `support` is the in-process harness they share.

mod agent_csr;
mod dependents;
mod interpreter_metrics;
mod karmada_webhook;
mod kube_client;
mod leader_election;
mod propagation;
mod pull;
mod reconcile_logs;
mod scheduling;
mod support;
mod undecodable;
mod unified_auth;

/// A new file in tests/ is built only once it is declared here or listed in Cargo.toml.
#[test]
fn every_test_file_is_built() {
    flotilla_testing::suites::assert_every_test_file_is_built(env!("CARGO_MANIFEST_DIR"));
}
