//! End-to-end tests of Flotilla as its users drive it, with kube-rs and kubectl.
//!
//! The tests take `KARMADA_KUBECONFIG` (context `karmada-apiserver`, else the current one) and
//! `MEMBERS_KUBECONFIG` (one context per member); without them each test starts its own embedded environment
//! (`flotilla up` in-process, on free ports, in a temporary data dir). Every scenario works in a fresh namespace,
//! waits on conditions with deadlines ([`wait::wait_for`], patience `E2E_TIMEOUT` seconds, default 30), dumps
//! the relevant state when it fails, and deletes what it created unless `NO_CLEANUP` is set.

pub mod env;
pub mod kubectl;
pub mod resources;
pub mod steps;
pub mod wait;

pub use env::{Env, Options, TestNamespace};
pub use kubectl::Kubectl;
pub use wait::wait_for;

use std::path::PathBuf;

/// A file of the shared walkthrough (`../shared/examples/`, or `FLOTILLA_EXAMPLES`).
pub fn example(name: &str) -> PathBuf {
    let dir = std::env::var_os("FLOTILLA_EXAMPLES").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/examples"
            ))
        },
        PathBuf::from,
    );
    dir.join(name)
}

/// A file of the repository's `manifests/` (what users apply, e.g. `examples/workload-crd.yaml`).
pub fn manifest(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../manifests")).join(name)
}

/// A file of this crate's `testdata/`.
pub fn testdata(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata")).join(name)
}
