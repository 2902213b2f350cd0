//! `policy.karmada.io/v1alpha1`: PropagationPolicy, ClusterPropagationPolicy, OverridePolicy,
//! ClusterOverridePolicy.

mod overrides;
mod propagation;

pub use overrides::*;
pub use propagation::*;
