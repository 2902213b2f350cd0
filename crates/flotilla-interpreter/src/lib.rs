//! The layered Karmada resource interpreter (docs/INTERPRETER.md): per operation, a
//! ResourceInterpreterCustomization's Lua script, then an interpreter webhook, then the bundled third-party Lua,
//! then the native interpreter.

pub mod config;
pub mod customization;
pub mod decode;
mod error;
pub mod facade;
pub mod layer;
pub mod lua;
pub mod native;
pub mod testdata;
pub(crate) mod thirdparty;
pub mod webhook;

pub use error::Error;
pub use facade::{Explanation, Interpreted, Metrics, Readiness, ReadyGate, ResourceInterpreter};
pub use layer::{Handles, Input, Layer, LayerKind, Request, Response};
