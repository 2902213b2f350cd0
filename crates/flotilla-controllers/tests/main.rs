//! The controllers' integration tests, one module per file, in one test binary (see `autotests` in
//! Cargo.toml); `support` is the in-process harness they share.

mod dependents;
mod interpreter_metrics;
mod kube_client;
mod propagation;
mod pull;
mod reconcile_logs;
mod scheduling;
mod support;
mod unified_auth;
