//! Webhook selection, as Karmada's: the webhooks of every configuration flattened under the id
//! `<configuration name>/<webhook name>`, sorted by id; the first webhook with a rule matching the operation and
//! kind is the one called.

use std::sync::Arc;

use flotilla_api::config::v1alpha1::{
    InterpreterOperation, ResourceInterpreterWebhook, ResourceInterpreterWebhookConfiguration,
    RuleWithOperations,
};
use kube::core::GroupVersionKind;

/// One webhook of one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Hook {
    /// `<configuration name>/<webhook name>`.
    pub id: String,
    /// The webhook as configured.
    pub webhook: ResourceInterpreterWebhook,
}

/// Every configured webhook, sorted by id (byte-wise), immutable once built.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    hooks: Vec<Arc<Hook>>,
}

impl Hooks {
    /// Flattens the webhooks of `configurations` and sorts them by id.
    pub fn new(configurations: Vec<ResourceInterpreterWebhookConfiguration>) -> Self {
        let mut hooks: Vec<Arc<Hook>> = configurations
            .into_iter()
            .flat_map(|configuration| {
                let config_name = configuration.metadata.name.unwrap_or_default();
                configuration.webhooks.into_iter().map(move |webhook| {
                    Arc::new(Hook {
                        id: format!("{config_name}/{}", webhook.name),
                        webhook,
                    })
                })
            })
            .collect();
        // `String`'s order is byte-wise, as Karmada's sort of ids.
        hooks.sort_by(|a, b| a.id.cmp(&b.id));
        Hooks { hooks }
    }

    /// The webhook called for `operation` on `gvk`: the first, by id, with a matching rule.
    pub fn select(
        &self,
        gvk: &GroupVersionKind,
        operation: &InterpreterOperation,
    ) -> Option<&Arc<Hook>> {
        self.hooks.iter().find(|hook| {
            hook.webhook
                .rules
                .iter()
                .any(|rule| rule_matches(rule, gvk, operation))
        })
    }

    /// All webhooks, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Hook>> {
        self.hooks.iter()
    }

    /// How many webhooks are configured.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// Whether no webhook is configured.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

/// Whether `rule` covers `operation` on `gvk`: each of operations, groups, versions and kinds lists `*` or the
/// exact value (the core group is `""`; kinds are Kind names, case-sensitive).
pub fn rule_matches(
    rule: &RuleWithOperations,
    gvk: &GroupVersionKind,
    operation: &InterpreterOperation,
) -> bool {
    let operation_matches = rule
        .operations
        .iter()
        .any(|op| *op == InterpreterOperation::All || op == operation);
    operation_matches
        && listed(&rule.api_groups, &gvk.group)
        && listed(&rule.api_versions, &gvk.version)
        && listed(&rule.kinds, &gvk.kind)
}

fn listed(values: &[String], wanted: &str) -> bool {
    values.iter().any(|value| value == "*" || value == wanted)
}
