//! The Lua VM shared by the customization and third-party layers: a sandbox with exactly Karmada's libraries, a
//! lazy JSON <-> Lua bridge, the `kube` library, per-call CPU and memory budgets, and a pool of states behind a
//! concurrency limit.
//!
//! Deliberate differences from Karmada (docs/INTERPRETER.md): scripts are compiled once and cached; each call runs
//! in its own environment, so no global leaks between scripts, operations or kinds; library tables are read-only;
//! values keep their JSON shape (objects, arrays, empty or not, integers, `null` array elements, which scripts see
//! as a `null` light userdata); `kube.getPodDependencies` returns an empty list rather than nil;
//! `kube.accuratePodRequirements` decodes only the fields requirements depend on, so a wrongly typed field
//! elsewhere in the template is not an error. Residual engine differences: Luau prints non-integral numbers of
//! magnitude 1e6 and above or below 1e-4 differently from Go when they are concatenated with `..` (`tostring`,
//! `print` and `string.format("%s")` follow Go); Luau has no `goto`, and accepts its own syntax extensions (`+=`,
//! `continue`) that Karmada would reject; a table a script builds itself is walked by `pairs` in Luau's order,
//! where gopher-lua keeps insertion order (tables made from objects follow the object's order, then the keys a
//! script added: see the prelude).

mod bridge;
mod call;
mod error;
pub mod gofmt;
mod kube;
mod rules;
mod sandbox;
mod typed;
mod vm;

pub use crate::layer::Input;
pub use call::function_name;
pub use error::{ScriptError, ScriptErrorKind};
pub use rules::{RuleSet, target_gvk};
pub use vm::{Limits, LuaVm, Script, StateError, VmConfig};

/// The compiler's message when `source` does not compile, `None` when it does (nothing is run).
pub fn compile_error(source: &str) -> Option<String> {
    vm::compile(source).err()
}

#[cfg(test)]
mod bridge_tests;
#[cfg(test)]
mod budget_tests;
#[cfg(test)]
mod kube_tests;
#[cfg(test)]
mod order_tests;
#[cfg(test)]
mod tests;
