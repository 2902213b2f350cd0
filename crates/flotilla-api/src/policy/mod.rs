//! `policy.karmada.io/v1alpha1`: PropagationPolicy, ClusterPropagationPolicy, OverridePolicy,
//! ClusterOverridePolicy.
