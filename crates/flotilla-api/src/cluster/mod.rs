//! `cluster.karmada.io`: Cluster.

pub mod v1alpha1;
