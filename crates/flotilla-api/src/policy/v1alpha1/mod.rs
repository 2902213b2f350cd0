//! `policy.karmada.io/v1alpha1`: PropagationPolicy, ClusterPropagationPolicy, OverridePolicy,
//! ClusterOverridePolicy, ClusterTaintPolicy.

mod overrides;
mod propagation;
mod taint;

pub use overrides::*;
pub use propagation::*;
pub use taint::*;
