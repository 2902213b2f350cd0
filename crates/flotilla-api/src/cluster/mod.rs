//! `cluster.karmada.io/v1alpha1`: Cluster.
