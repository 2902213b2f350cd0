//! `cluster.karmada.io`: Cluster.

pub mod v1alpha1;

/// The Cluster CRD's second served version, an alias of `v1alpha1` with the same schema (conversion `None`).
///
/// Once the APIService `v1alpha1.cluster.karmada.io` routes `v1alpha1` to the aggregated API server, the CRD's
/// own `v1alpha1` is shadowed; the aggregated server reaches the stored objects through this version.
pub const STORAGE_VERSION: &str = "storage";

/// The warning a client gets with every answer from [`STORAGE_VERSION`], which is deprecated so that one is
/// sent: people are to use `v1alpha1`, and reach `storage` only when their client falls back to it, because the
/// aggregated API server is unavailable or their discovery cache is stale. The aggregated API server takes this
/// warning out of what it passes on. At most 256 characters, as kube-apiserver requires.
pub const STORAGE_DEPRECATION_WARNING: &str = "cluster.karmada.io/storage is how Flotilla stores Clusters, not \
an API: use cluster.karmada.io/v1alpha1 (clients fall back to storage while APIService v1alpha1.cluster.karmada.io is \
unavailable or their discovery cache is stale)";
