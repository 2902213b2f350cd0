//! `cluster.karmada.io`: Cluster.

pub mod v1alpha1;

/// The Cluster CRD's second served version, an alias of `v1alpha1` with the same schema (conversion `None`).
///
/// Once the APIService `v1alpha1.cluster.karmada.io` routes `v1alpha1` to the aggregated API server, the CRD's
/// own `v1alpha1` is shadowed; the aggregated server reaches the stored objects through this version.
pub const STORAGE_VERSION: &str = "storage";
