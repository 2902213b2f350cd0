//! `config.karmada.io`: resource interpreter customizations, webhook configurations and the webhook wire type.

pub mod v1alpha1;
