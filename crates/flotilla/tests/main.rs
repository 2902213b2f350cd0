//! The tests that start whole processes, one module per file, in one test binary named `process` (see
//! `autotests` in Cargo.toml); `common` is what they share.

mod common;
mod process_agent_bootstrap;
mod process_apiserver;
mod process_bench;
mod process_controller_manager;
mod process_interpret;
mod process_join;
mod process_karmada_webhook;
mod process_leader_election;
mod process_local_up;
mod process_member;
mod process_simulate;
mod process_status;
mod process_up;
mod process_up_pull;
mod process_up_restart;
mod process_up_webhook;
mod process_webhook_example;

/// A new file in tests/ is built only once it is declared here or listed in Cargo.toml.
#[test]
fn every_test_file_is_built() {
    flotilla_testing::suites::assert_every_test_file_is_built(env!("CARGO_MANIFEST_DIR"));
}
