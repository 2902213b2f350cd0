//! `work.karmada.io`: ResourceBinding and ClusterResourceBinding (v1alpha2) and Work (v1alpha1).

pub mod v1alpha1;
pub mod v1alpha2;
