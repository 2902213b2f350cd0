//! End-to-end tests of Flotilla as its users drive it, with kube-rs and kubectl.
//!
//! Every scenario runs in two worlds ([`scenario!`] makes a test of each, `<scenario>::embedded` and
//! `<scenario>::kube`). The embedded world takes `KARMADA_KUBECONFIG` (context `karmada-apiserver`, else the
//! current one) and `MEMBERS_KUBECONFIG` (one context per member); without them each test starts its own embedded
//! environment (`flotilla up` in-process, on free ports, in a temporary data dir). The kube world is real
//! kube-apiservers named by `FLOTILLA_E2E_KUBE_DIR` (see [`env`]). Every scenario works in a fresh namespace,
//! waits on conditions with deadlines ([`wait::wait_for`], patience `E2E_TIMEOUT` seconds, default 30), dumps
//! the relevant state when it fails, and deletes what it created unless `NO_CLEANUP` is set. A scenario may take a
//! member away and bring it back ([`Env::take_member_away`], [`outage`]); what it changes outside its namespace
//! is undone also when it fails ([`Undo`]), since the kube world is shared by the scenarios run after it.

pub(crate) mod env;
pub(crate) mod kubectl;
pub mod outage;
pub mod processes;
pub mod resources;
pub mod steps;
pub mod undo;
pub mod wait;

pub use env::{Env, Options, TestNamespace, World};
pub use kubectl::Kubectl;
pub use outage::Outage;
pub use undo::Undo;
pub use wait::wait_for;

use std::path::PathBuf;

/// A file of the walkthrough (`manifests/examples/`, or the directory `FLOTILLA_EXAMPLES` names).
pub fn example(name: &str) -> PathBuf {
    let dir = std::env::var_os("FLOTILLA_EXAMPLES").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../manifests/examples"
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

/// Defines scenario `$name` as one test per world, `$name::embedded` and `$name::kube`: each starts the world's
/// environment with `$options`, makes a fresh namespace `e2e-$prefix-<random>`, runs `$body(&env, &namespace)`
/// and ends with [`Env::finish`] (a state dump on failure, clean-up).
#[macro_export]
macro_rules! scenario {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $options:expr, $body:path) => {
        $(#[$doc])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            async fn embedded() -> anyhow::Result<()> {
                $crate::run_scenario!($crate::World::Embedded, $prefix, $options, $body)
            }

            #[tokio::test]
            async fn kube() -> anyhow::Result<()> {
                $crate::run_scenario!($crate::World::Kube, $prefix, $options, $body)
            }
        }
    };
}

/// The body of one world's test of [`scenario!`].
#[doc(hidden)]
#[macro_export]
macro_rules! run_scenario {
    ($world:expr, $prefix:literal, $options:expr, $body:path) => {{
        let env = $crate::Env::start_in($world, $options).await?;
        let ns = env.namespace($prefix).await?;
        let result = $body(&env, &ns.name).await;
        env.finish(&ns, result).await
    }};
}
