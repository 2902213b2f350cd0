//! The customization layer: users' ResourceInterpreterCustomizations, run as Lua.
//!
//! The control plane's reflector hands the whole current list to [`CustomizationLayer::replace_all`] after every
//! change (Karmada rebuilds its cache from the full list too); calls in flight keep the rules they started
//! with. Until the first list arrives the layer handles nothing; the facade's readiness gate keeps callers away
//! until then.

mod validate;

use std::sync::{Arc, RwLock};

use flotilla_api::config::v1alpha1::{InterpreterOperation, ResourceInterpreterCustomization};
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;

use crate::lua::{Input, LuaVm, RuleSet};
use crate::{Error, Handles, Layer, LayerKind, Request, Response};

pub use validate::{RuleCheck, check_rules, validate, validate_conflicts, validate_scripts};

#[cfg(test)]
mod tests;

/// The Lua layer over user ResourceInterpreterCustomizations.
#[derive(Debug)]
pub struct CustomizationLayer {
    vm: LuaVm,
    rules: RwLock<Arc<RuleSet>>,
}

impl CustomizationLayer {
    /// A layer with no customizations yet, running scripts on `vm`.
    pub fn new(vm: LuaVm) -> Self {
        CustomizationLayer {
            vm,
            rules: RwLock::new(Arc::new(RuleSet::default())),
        }
    }

    /// A layer holding `customizations` (e.g. the documents of `flotilla interpret -f`).
    pub fn with_customizations(
        vm: LuaVm,
        customizations: &[ResourceInterpreterCustomization],
    ) -> Self {
        let layer = CustomizationLayer::new(vm);
        layer.replace_all(customizations.to_vec());
        layer
    }

    /// Replaces every customization the layer knows with `customizations`, merged by name
    /// (per operation the first non-empty script wins; dependency scripts accumulate).
    pub fn replace_all(&self, customizations: Vec<ResourceInterpreterCustomization>) {
        let rules = Arc::new(RuleSet::build(&self.vm, &customizations));
        tracing::debug!(
            customizations = customizations.len(),
            "customization rules rebuilt"
        );
        *self
            .rules
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = rules;
    }

    /// The merged rules in force.
    pub fn rules(&self) -> Arc<RuleSet> {
        self.rules
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Runs one call on the current thread (CLI, tests), with Karmada's nil-versus-empty status items.
    ///
    /// # Errors
    /// As [`RuleSet::interpret_blocking`].
    pub fn interpret_blocking(&self, input: impl Into<Input>) -> Result<Response, Error> {
        self.rules()
            .interpret_blocking(&self.vm, LayerKind::Customization, input)
    }
}

impl Layer for CustomizationLayer {
    fn kind(&self) -> LayerKind {
        LayerKind::Customization
    }

    fn handles(&self, gvk: &GroupVersionKind, operation: &InterpreterOperation) -> Handles {
        self.rules()
            .handles(gvk, operation, LayerKind::Customization)
    }

    fn interpret(&self, request: Request) -> BoxFuture<'_, Result<Response, Error>> {
        self.interpret_input(Input::from(request))
    }

    fn interpret_input(&self, input: Input) -> BoxFuture<'_, Result<Response, Error>> {
        let rules = self.rules();
        Box::pin(async move {
            rules
                .interpret(&self.vm, LayerKind::Customization, input)
                .await
        })
    }
}
