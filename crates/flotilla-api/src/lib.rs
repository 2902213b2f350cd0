//! Karmada's API types as Flotilla serves them, and the CRDs generated from them.
//!
//! Invariants: groups, versions, kinds, scopes and JSON field names are exactly Karmada's, so a user's
//! existing YAML parses here and serializes back unchanged. Fields with a CRD default take that default when
//! absent, so a parsed object equals one read back from an API server. This crate does no I/O; it depends on
//! kube only for the `CustomResource` derive and the shared wire types.

pub mod apps;
pub mod cluster;
pub mod config;
pub mod crds;
pub mod decode;
pub mod names;
mod open_enum;
pub mod policy;
mod resource;
pub(crate) mod schema;
mod serde_util;
pub mod work;
