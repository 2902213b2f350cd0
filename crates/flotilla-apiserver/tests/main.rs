//! The tests that start whole processes, one module per file, in one test binary named `process` (see
//! `autotests` in Cargo.toml); `support` is what they share.

mod process_access;
mod process_aggregation;
mod process_describe;
mod process_kubectl;
mod process_protocols;
mod process_tables;
mod support;

/// A new file in tests/ is built only once it is declared here or listed in Cargo.toml.
#[test]
fn every_test_file_is_built() {
    flotilla_testing::suites::assert_every_test_file_is_built(env!("CARGO_MANIFEST_DIR"));
}
