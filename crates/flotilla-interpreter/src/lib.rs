//! The layered Karmada resource interpreter (interpreter spec): per operation, a ResourceInterpreterCustomization's
//! Lua script, then an interpreter webhook, then the bundled third-party Lua, then the native interpreter.

pub mod config;
mod error;
pub mod facade;
pub mod layer;
pub mod webhook;
pub mod native;
pub mod quantity;

pub use error::Error;
pub use facade::{Explanation, Interpreted, Metrics, ReadyGate, Readiness, ResourceInterpreter};
pub use layer::{Handles, Layer, LayerKind, Request, Response};
