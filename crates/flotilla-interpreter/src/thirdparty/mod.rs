//! The third-party layer: ResourceInterpreterCustomizations bundled in the binary for popular custom resources
//! (the kinds Karmada bundles), below webhooks and above native in precedence.
//!
//! The documents are Flotilla's own scripts under `crates/flotilla-interpreter/thirdparty/<group>/<version>/<Kind>/
//! customizations.yaml`, embedded at build time, decoded and merged once, never reloaded. Each directory also holds
//! `testdata/` in Karmada's testdata format, run by [`crate::testdata`] in this crate's tests.

mod embedded;

use std::sync::{Arc, OnceLock};

use flotilla_api::config::v1alpha1::{InterpreterOperation, ResourceInterpreterCustomization};
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;

use crate::lua::{Input, LuaVm, RuleSet};
use crate::{Error, Handles, Layer, LayerKind, Request, Response};

pub(crate) use embedded::DOCUMENTS;

/// A bundled document that does not decode, or whose target does not match its directory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("failed to load bundled customization {path}: {reason}")]
pub(crate) struct LoadError {
    /// The document's path under `thirdparty/`.
    pub path: &'static str,
    /// What is wrong.
    pub reason: String,
}

/// Every bundled customization, decoded once.
///
/// # Errors
/// The first document that does not decode as a ResourceInterpreterCustomization or whose target differs from
/// its `<group>/<version>/<Kind>` directory (Karmada then loads none).
pub(crate) fn customizations() -> Result<&'static [ResourceInterpreterCustomization], LoadError> {
    static DECODED: OnceLock<Result<Vec<ResourceInterpreterCustomization>, LoadError>> =
        OnceLock::new();
    DECODED
        .get_or_init(decode_all)
        .as_deref()
        .map_err(Clone::clone)
}

fn decode_all() -> Result<Vec<ResourceInterpreterCustomization>, LoadError> {
    let mut all = Vec::new();
    for &(path, text) in DOCUMENTS {
        let fail = |reason: String| LoadError { path, reason };
        let documents: Vec<ResourceInterpreterCustomization> =
            flotilla_yaml::from_str_multiple(text)
                .map_err(|e| fail(crate::facade::error_text(&e)))?;
        for ric in documents {
            let expected = path
                .rsplit_once('/')
                .map(|(dir, _)| dir)
                .unwrap_or_default();
            let target = format!("{}/{}", ric.spec.target.api_version, ric.spec.target.kind);
            if target != expected {
                return Err(fail(format!(
                    "target {target} does not match its directory {expected}"
                )));
            }
            all.push(ric);
        }
    }
    Ok(all)
}

/// The Lua layer over the bundled customizations.
#[derive(Debug)]
pub(crate) struct ThirdPartyLayer {
    vm: LuaVm,
    rules: Arc<RuleSet>,
}

impl ThirdPartyLayer {
    /// Loads the bundled customizations, running them on `vm`. A document that fails to load leaves the layer
    /// empty with a warning, as in Karmada; the crate's tests keep that from happening.
    pub(crate) fn new(vm: LuaVm) -> Self {
        let rules = match customizations() {
            Ok(all) => RuleSet::build(&vm, all),
            Err(error) => {
                tracing::warn!(%error, "bundled third-party customizations are disabled");
                RuleSet::default()
            }
        };
        ThirdPartyLayer {
            vm,
            rules: Arc::new(rules),
        }
    }
}

impl Layer for ThirdPartyLayer {
    fn kind(&self) -> LayerKind {
        LayerKind::ThirdParty
    }

    fn handles(&self, gvk: &GroupVersionKind, operation: &InterpreterOperation) -> Handles {
        self.rules.handles(gvk, operation, LayerKind::ThirdParty)
    }

    fn interpret(&self, request: Request) -> BoxFuture<'_, Result<Response, Error>> {
        self.interpret_input(Input::from(request))
    }

    fn interpret_input(&self, input: Input) -> BoxFuture<'_, Result<Response, Error>> {
        let rules = self.rules.clone();
        Box::pin(async move {
            rules
                .interpret(&self.vm, LayerKind::ThirdParty, input)
                .await
        })
    }
}

#[cfg(test)]
mod tests;
