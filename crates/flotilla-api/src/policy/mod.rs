//! `policy.karmada.io`: PropagationPolicy, ClusterPropagationPolicy, OverridePolicy, ClusterOverridePolicy.

pub mod v1alpha1;
