//! Karmada's API types as Flotilla serves them, and the CRDs generated from them.
//!
//! Invariants: groups, versions, kinds, scopes and JSON field names are exactly Karmada's, so a user's
//! existing YAML parses here and serializes back unchanged. This crate does no I/O; it depends on kube only
//! for the `CustomResource` derive and the shared wire types.

pub mod cluster;
pub mod config;
pub mod names;
pub mod policy;
pub mod schema;
pub mod work;
