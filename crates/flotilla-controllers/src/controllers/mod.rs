//! The controllers, one module each (controllers spec §3, §5–§10). Each exposes `NAME` and a `run` function
//! taking the shared [`crate::Context`] and a shutdown token; the manager starts them.

pub mod binding;
pub mod detector;
pub mod execution;
