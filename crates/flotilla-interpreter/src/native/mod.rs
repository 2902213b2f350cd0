//! The native interpreter: Karmada's built-in handlers for Kubernetes kinds (interpreter spec §3).

mod error;
pub mod pod;

pub use error::{NativeError, not_found_message};
