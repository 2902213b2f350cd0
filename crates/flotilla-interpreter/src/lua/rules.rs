//! Merged Lua rules of several ResourceInterpreterCustomizations, shared by the
//! customization layer, the third-party layer, `flotilla interpret -f` and the testdata runner.
//!
//! Guarantees: customizations merge in `metadata.name` order; per operation the first non-empty script wins,
//! except dependency scripts, which accumulate; matching is exact on group, version and kind; a script that does
//! not compile still enables its operation and fails when called, as in Karmada.

use std::collections::HashMap;

use flotilla_api::config::v1alpha1::{InterpreterOperation, ResourceInterpreterCustomization};
use kube::core::GroupVersionKind;

use super::error::ScriptError;
use super::sandbox::Sandbox;
use super::vm::{Limits, LuaVm, Script};
use crate::layer::Input;
use crate::layer::{LayerKind, Request, Response};
use crate::{Error, Handles};

/// The scripts for one kind.
#[derive(Clone, Debug, Default)]
struct KindRules {
    /// The winning script per operation (all but InterpretDependency).
    single: HashMap<InterpreterOperation, Script>,
    /// Every dependency script, in name order.
    dependencies: Vec<Script>,
}

/// Rules by kind, merged from a set of customizations.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    kinds: HashMap<GroupVersionKind, KindRules>,
}

/// The key of a customization's target, or `None` when its apiVersion is not `group/version` or `version` (such a
/// customization matches nothing, as in Karmada).
pub fn target_gvk(api_version: &str, kind: &str) -> Option<GroupVersionKind> {
    let (group, version) = match api_version.split_once('/') {
        Some((_, version)) if version.contains('/') => return None,
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    Some(GroupVersionKind::gvk(group, version, kind))
}

impl RuleSet {
    /// Merges `customizations`, compiling each script with `vm` (cached by content).
    pub fn build(vm: &LuaVm, customizations: &[ResourceInterpreterCustomization]) -> RuleSet {
        let mut sorted: Vec<&ResourceInterpreterCustomization> = customizations.iter().collect();
        sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut kinds: HashMap<GroupVersionKind, KindRules> = HashMap::new();
        for ric in sorted {
            let target = &ric.spec.target;
            let Some(gvk) = target_gvk(&target.api_version, &target.kind) else {
                continue;
            };
            let name = ric.metadata.name.as_deref().unwrap_or_default();
            let rules = kinds.entry(gvk).or_default();
            for op in InterpreterOperation::DISPATCHED {
                let Some(source) = ric.spec.customizations.script(&op) else {
                    continue;
                };
                if op == InterpreterOperation::InterpretDependency {
                    rules.dependencies.push(vm.script(name, source));
                } else {
                    rules
                        .single
                        .entry(op)
                        .or_insert_with(|| vm.script(name, source));
                }
            }
        }
        RuleSet { kinds }
    }

    /// Whether no customization targets anything.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Whether the layer handles the call: a non-empty script for this exact kind and operation.
    pub fn handles(
        &self,
        gvk: &GroupVersionKind,
        operation: &InterpreterOperation,
        layer: LayerKind,
    ) -> Handles {
        let what = if layer == LayerKind::ThirdParty {
            "bundled customization"
        } else {
            "customization"
        };
        let kind = format!("{} {}", gvk.api_version(), gvk.kind);
        let Some(rules) = self.kinds.get(gvk) else {
            return Handles::No(format!("no {what} for {kind}"));
        };
        let names: Vec<&str> = match operation {
            InterpreterOperation::InterpretDependency => {
                rules.dependencies.iter().map(Script::name).collect()
            }
            op => rules.single.get(op).map(Script::name).into_iter().collect(),
        };
        if names.is_empty() {
            Handles::No(format!("the {what} for {kind} has no {operation} script"))
        } else {
            Handles::Yes(names.join(","))
        }
    }

    /// Runs `input` on the current thread (for callers already off the async threads).
    ///
    /// # Errors
    /// [`Error::NotEnabled`] without a script for the operation; [`Error::Layer`] wrapping a [`ScriptError`]
    /// when a script fails; [`Error::InvalidDependency`] for an invalid dependency reference.
    pub fn interpret_blocking(
        &self,
        vm: &LuaVm,
        layer: LayerKind,
        input: impl Into<Input>,
    ) -> Result<Response, Error> {
        let input = input.into();
        let described = Described::of(&input);
        vm.with_sandbox(|sandbox, limits| self.execute(sandbox, limits, layer, input))
            .unwrap_or_else(|e| Err(described.error(layer, Box::new(e))))
    }

    /// [`RuleSet::interpret_blocking`] on a blocking thread, within the VM's concurrency limit.
    ///
    /// # Errors
    /// As [`RuleSet::interpret_blocking`].
    pub async fn interpret(
        self: std::sync::Arc<Self>,
        vm: &LuaVm,
        layer: LayerKind,
        input: Input,
    ) -> Result<Response, Error> {
        let described = Described::of(&input);
        vm.run(move |sandbox, limits| self.execute(sandbox, limits, layer, input))
            .await
            .unwrap_or_else(|e| Err(described.error(layer, Box::new(e))))
    }

    fn execute(
        &self,
        sandbox: &mut Sandbox,
        limits: &Limits,
        layer: LayerKind,
        input: Input,
    ) -> Result<Response, Error> {
        let operation = input.operation();
        let gvk = crate::layer::gvk_of(input.object())?;
        let not_enabled = || Error::NotEnabled {
            operation: operation.clone(),
            gvk: format!("{}, Kind={}", gvk.api_version(), gvk.kind),
        };
        let rules = self.kinds.get(&gvk).ok_or_else(not_enabled)?;
        let described = Described::of(&input);
        let fail = |e: ScriptError| described.error(layer, Box::new(e));
        if operation != InterpreterOperation::InterpretDependency {
            let script = rules.single.get(&operation).ok_or_else(not_enabled)?;
            return super::call::run(sandbox, script, input, limits).map_err(fail);
        }
        let (last, others) = rules.dependencies.split_last().ok_or_else(not_enabled)?;
        let mut refs = Vec::new();
        // Every script but the last gets a copy of the object; the last one takes it.
        for script in others {
            let copy = Request::InterpretDependency {
                object: input.object().clone(),
            }
            .into();
            if let Response::Dependencies(found) =
                super::call::run(sandbox, script, copy, limits).map_err(fail)?
            {
                refs.extend(found);
            }
        }
        if let Response::Dependencies(found) =
            super::call::run(sandbox, last, input, limits).map_err(fail)?
        {
            refs.extend(found);
        }
        crate::facade::validate::dependencies(layer, refs).map(Response::Dependencies)
    }
}

/// What an error needs to name: the operation and the object.
struct Described {
    operation: InterpreterOperation,
    object: String,
}

impl Described {
    fn of(input: &Input) -> Described {
        Described {
            operation: input.operation(),
            object: crate::native::object::describe(input.object()),
        }
    }

    fn error(&self, layer: LayerKind, source: Box<dyn std::error::Error + Send + Sync>) -> Error {
        Error::Layer {
            layer: layer.as_str(),
            operation: self.operation.clone(),
            object: self.object.clone(),
            source,
        }
    }
}
