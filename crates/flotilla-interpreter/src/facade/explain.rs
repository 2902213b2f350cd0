//! The record of one dispatch: which layer answered and why the layers above it did not (beyond Karmada). It feeds
//! `flotilla interpret --explain`, the tracing span and the metrics labels.

use std::fmt;

use flotilla_api::config::v1alpha1::InterpreterOperation;
use kube::core::GroupVersionKind;

use crate::layer::LayerKind;
use crate::native::gvk_string;

/// Why a layer was passed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The layer.
    pub layer: LayerKind,
    /// Its reason, e.g. `no customization for apps/v1 Deployment`.
    pub reason: String,
}

/// The layer that had a rule, and the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The layer.
    pub layer: LayerKind,
    /// The rule it used (customization name, webhook id, bundled document, native handler).
    pub rule: String,
}

/// Which layer answered one call and why the layers above it did not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The operation.
    pub operation: InterpreterOperation,
    /// The object's group, version and kind, when it has a kind.
    pub gvk: Option<GroupVersionKind>,
    /// Layers consulted and passed over, in dispatch order.
    pub skipped: Vec<Skipped>,
    /// The layer that had a rule (its result or error is the call's), if any.
    pub answered: Option<Answer>,
    /// The error text when the answering layer failed.
    pub error: Option<String>,
}

impl Explanation {
    pub(crate) fn new(
        operation: InterpreterOperation,
        gvk: Option<GroupVersionKind>,
    ) -> Explanation {
        Explanation {
            operation,
            gvk,
            skipped: Vec::new(),
            answered: None,
            error: None,
        }
    }

    /// The answering layer's metrics label, `none` when no layer had a rule.
    pub fn layer_label(&self) -> &'static str {
        self.answered.as_ref().map_or("none", |a| a.layer.as_str())
    }
}

/// `group/Kind` (`core/Pod` for the core group): the kind label of metrics and spans.
pub fn kind_label(gvk: &GroupVersionKind) -> String {
    let group = if gvk.group.is_empty() {
        "core"
    } else {
        gvk.group.as_str()
    };
    format!("{group}/{}", gvk.kind)
}

impl fmt::Display for Explanation {
    /// One line per consulted layer, e.g. `webhook: skipped: no webhook is configured`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self
            .gvk
            .as_ref()
            .map_or_else(|| "an object without kind".to_owned(), gvk_string);
        writeln!(f, "{} on {target}:", self.operation)?;
        for skipped in &self.skipped {
            writeln!(f, "  {}: skipped: {}", skipped.layer, skipped.reason)?;
        }
        match (&self.answered, &self.error) {
            (Some(answer), None) => writeln!(f, "  {}: answered ({})", answer.layer, answer.rule),
            (Some(answer), Some(error)) => {
                writeln!(f, "  {}: failed ({}): {error}", answer.layer, answer.rule)
            }
            (None, _) => writeln!(f, "  no layer has a rule for this operation"),
        }
    }
}
