//! The override manager (Karmada's `ApplyOverridePolicies`): applies ClusterOverridePolicies, then the object's
//! namespace's OverridePolicies, to one copy of a template for one cluster.
//!
//! Invariants: pure (the caller lists the policies and the Cluster); every overrider becomes RFC 6902
//! operations applied with `json-patch`; on error the object is left exactly as it was given.

mod field;
mod image;
mod patches;

use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::annotations;
use flotilla_api::policy::v1alpha1::{
    ClusterOverridePolicy, OverridePolicy, OverrideSpec, Overriders, RuleWithCluster,
};
use serde::Serialize;
use serde_json::Value;

pub use image::ImageParseError;
pub(crate) use image::ImageRef;

use crate::selector::{ImplicitPriority, TemplateRef, cluster_matches, selectors_priority};

/// Which kind of override policy a rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A ClusterOverridePolicy (applied first).
    Cluster,
    /// An OverridePolicy of the object's namespace (applied last, so it wins).
    Namespaced,
}

impl Scope {
    /// The policy kind, e.g. `ClusterOverridePolicy`.
    pub fn kind(self) -> &'static str {
        match self {
            Scope::Cluster => "ClusterOverridePolicy",
            Scope::Namespaced => "OverridePolicy",
        }
    }

    /// The Work annotation recording the rules applied from this scope.
    pub fn annotation(self) -> &'static str {
        match self {
            Scope::Cluster => annotations::APPLIED_CLUSTER_OVERRIDES,
            Scope::Namespaced => annotations::APPLIED_OVERRIDES,
        }
    }
}

/// One override rule that was applied.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedRule {
    /// The kind of policy.
    pub scope: Scope,
    /// The policy's namespace; empty for ClusterOverridePolicies.
    pub namespace: String,
    /// The policy's name.
    pub policy_name: String,
    /// The rule's overriders, as applied.
    pub overriders: Overriders,
}

impl AppliedRule {
    /// The `ApplyOverridePolicySucceed` event message Karmada records on the template for this rule.
    pub fn event_message(&self, cluster: &str) -> String {
        match self.scope {
            Scope::Cluster => format!(
                "Apply cluster override policy({}) for cluster({cluster}) succeed.",
                self.policy_name
            ),
            Scope::Namespaced => format!(
                "Apply override policy({}/{}) for cluster({cluster}) succeed.",
                self.namespace, self.policy_name
            ),
        }
    }
}

/// The rules applied to one object for one cluster, in application order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppliedOverrides {
    /// Every applied rule: ClusterOverridePolicy rules first, then OverridePolicy rules.
    pub rules: Vec<AppliedRule>,
}

/// One entry of the applied-overrides annotations: `{"policyName": …, "overriders": …}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppliedRecord<'a> {
    policy_name: &'a str,
    overriders: &'a Overriders,
}

impl AppliedOverrides {
    /// The value of the scope's Work annotation: a JSON array of the scope's applied rules, stably sorted by
    /// policy name; `None` when no rule of that scope applied.
    ///
    /// # Errors
    /// Only if serialising the overriders fails, which plain API types never do.
    pub(crate) fn annotation_value(
        &self,
        scope: Scope,
    ) -> Result<Option<String>, serde_json::Error> {
        let mut records: Vec<AppliedRecord<'_>> = self
            .rules
            .iter()
            .filter(|r| r.scope == scope)
            .map(|r| AppliedRecord {
                policy_name: &r.policy_name,
                overriders: &r.overriders,
            })
            .collect();
        if records.is_empty() {
            return Ok(None);
        }
        records.sort_by(|a, b| a.policy_name.cmp(b.policy_name));
        serde_json::to_string(&records).map(Some)
    }

    /// The Work annotations recording the applied rules (`policy.karmada.io/applied-cluster-overrides` and
    /// `policy.karmada.io/applied-overrides`), each present only when its scope applied a rule.
    ///
    /// # Errors
    /// As [`AppliedOverrides::annotation_value`].
    pub fn annotations(&self) -> Result<BTreeMap<String, String>, serde_json::Error> {
        let mut out = BTreeMap::new();
        for scope in [Scope::Cluster, Scope::Namespaced] {
            if let Some(value) = self.annotation_value(scope)? {
                out.insert(scope.annotation().to_owned(), value);
            }
        }
        Ok(out)
    }
}

/// Why one overrider could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum OverriderError {
    /// An image is not a valid image reference.
    #[error("failed to parse image {image:?} at {path}")]
    ParseImage {
        /// JSON pointer of the image field.
        path: String,
        /// The image found there.
        image: String,
        /// What is wrong with it.
        #[source]
        source: ImageParseError,
    },
    /// The field is missing or not a string.
    #[error("field {path} is missing or not a string")]
    NotString {
        /// JSON pointer of the field.
        path: String,
    },
    /// A container's command or args is not a list.
    #[error("field {path} is not a list")]
    NotList {
        /// JSON pointer of the field.
        path: String,
    },
    /// A path is not a valid JSON pointer.
    #[error("invalid JSON pointer {path:?}")]
    Pointer {
        /// The path given.
        path: String,
        /// What is wrong with it.
        #[source]
        source: json_patch::jsonptr::ParseError,
    },
    /// An image overrider names a component this version does not know.
    #[error("unsupported image component({component})")]
    UnknownImageComponent {
        /// The component as written.
        component: String,
    },
    /// An overrider's operator is no JSON-patch operation Karmada's patch can carry.
    #[error("unsupported JSON patch operation {operation:?}")]
    UnknownOperation {
        /// The operator as written.
        operation: String,
    },
    /// A JSON-patch operation does not apply (e.g. `replace` or `remove` of a missing field).
    #[error("failed to apply JSON patch")]
    Patch {
        /// The failing operation and why.
        #[source]
        source: Box<json_patch::PatchError>,
    },
    /// A field overrider has both or neither of `json` and `yaml`.
    #[error("field overrider for {path} must have exactly one of json and yaml operations")]
    FieldOperations {
        /// The overrider's `fieldPath`.
        path: String,
    },
    /// The field's text is not a document of the expected format.
    #[error("failed to parse field {path} as {format}")]
    ParseDocument {
        /// The overrider's `fieldPath`.
        path: String,
        /// `JSON` or `YAML`.
        format: &'static str,
        /// The parser's complaint.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The patched document could not be written back.
    #[error("failed to serialize field {path} as {format}")]
    SerializeDocument {
        /// The overrider's `fieldPath`.
        path: String,
        /// `JSON` or `YAML`.
        format: &'static str,
        /// The serializer's complaint.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// An override policy could not be applied; names the policy, the rule and the overrider entry.
#[derive(Debug, thiserror::Error)]
#[error(
    "failed to apply {} {} for cluster {cluster}: overrideRules[{rule}].overriders.{overrider}[{index}]",
    .scope.kind(), qualified(.namespace, .policy)
)]
pub struct Error {
    /// The kind of policy.
    pub scope: Scope,
    /// The policy's namespace; empty for ClusterOverridePolicies.
    pub namespace: String,
    /// The policy's name.
    pub policy: String,
    /// The cluster overrides were applied for.
    pub cluster: String,
    /// Index of the rule in `overrideRules` (0 for the deprecated single-rule form).
    pub rule: usize,
    /// The overrider field, e.g. `imageOverrider` or `plaintext`.
    pub overrider: &'static str,
    /// Index of the entry in that overrider list (0 for `plaintext`, applied as one patch).
    pub index: usize,
    /// What went wrong (boxed to keep the error small).
    #[source]
    pub source: Box<OverriderError>,
}

/// `namespace/name`, or `name` alone for cluster-scoped policies.
fn qualified(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        format!("{namespace}/{name}")
    }
}

impl Error {
    /// The `ApplyOverridePolicyFailed` event message Karmada records on the template.
    pub fn event_message(&self) -> String {
        match self.scope {
            Scope::Cluster => format!(
                "Apply cluster override policy({}) for cluster({}) failed.",
                self.policy, self.cluster
            ),
            Scope::Namespaced => format!(
                "Apply override policy({}) for cluster({}) failed.",
                qualified(&self.namespace, &self.policy),
                self.cluster
            ),
        }
    }
}

/// A policy reduced to what ordering and rule selection need.
struct Candidate<'a> {
    namespace: &'a str,
    name: &'a str,
    priority: ImplicitPriority,
    spec: &'a OverrideSpec,
}

/// Applies the override policies for `cluster` to `object` (a deep copy of a template, after replica
/// revision), as Karmada's `ApplyOverridePolicies` does.
///
/// `cluster_policies` are all ClusterOverridePolicies; `policies` are OverridePolicies (those of other
/// namespaces than the object's are ignored, and all of them for cluster-scoped objects).
///
/// Guarantees: ClusterOverridePolicies first, then OverridePolicies; within a scope, policies with no
/// selectors (counted as match-all) or a matching selector, ordered by implicit priority ascending then name
/// ascending; each policy's `overrideRules` (or its deprecated `targetCluster` + `overriders` as one rule)
/// whose target is nil or matches the cluster, in list order; each rule's overriders in the order image,
/// command, args, labels, annotations, field, plaintext. On success `object` holds the result and the applied
/// rules are returned in application order.
///
/// # Errors
/// [`Error`] naming the policy, rule and overrider entry that failed; `object` is then unchanged.
pub fn apply_overrides(
    object: &mut Value,
    cluster: &Cluster,
    cluster_policies: &[ClusterOverridePolicy],
    policies: &[OverridePolicy],
) -> Result<AppliedOverrides, Error> {
    let template = TemplateRef::from_value(object);
    let cluster_name = cluster.metadata.name.as_deref().unwrap_or_default();
    let mut working = object.clone();
    let mut applied = AppliedOverrides::default();

    let cluster_scope = cluster_policies.iter().map(|p| {
        (
            p.metadata.namespace.as_deref().unwrap_or_default(),
            p.metadata.name.as_deref(),
            &p.spec,
        )
    });
    let namespaced_scope = policies
        .iter()
        .filter(|p| {
            !template.namespace.is_empty()
                && p.metadata
                    .namespace
                    .as_deref()
                    .is_none_or(|ns| ns == template.namespace)
        })
        .map(|p| {
            (
                template.namespace.as_str(),
                p.metadata.name.as_deref(),
                &p.spec,
            )
        });

    for (scope, candidates) in [
        (Scope::Cluster, ordered(cluster_scope, &template)),
        (Scope::Namespaced, ordered(namespaced_scope, &template)),
    ] {
        for policy in candidates {
            for (rule_index, rule) in rules_of(policy.spec).iter().enumerate() {
                if rule
                    .target_cluster
                    .as_ref()
                    .is_some_and(|t| !cluster_matches(cluster, t))
                {
                    continue;
                }
                apply_rule(&mut working, &rule.overriders).map_err(
                    |(overrider, index, source)| Error {
                        scope,
                        namespace: policy.namespace.to_owned(),
                        policy: policy.name.to_owned(),
                        cluster: cluster_name.to_owned(),
                        rule: rule_index,
                        overrider,
                        index,
                        source: Box::new(source),
                    },
                )?;
                applied.rules.push(AppliedRule {
                    scope,
                    namespace: policy.namespace.to_owned(),
                    policy_name: policy.name.to_owned(),
                    overriders: rule.overriders.clone(),
                });
            }
        }
    }
    *object = working;
    Ok(applied)
}

/// The policies of one scope that select the object, in application order.
fn ordered<'a>(
    policies: impl Iterator<Item = (&'a str, Option<&'a str>, &'a OverrideSpec)>,
    template: &TemplateRef,
) -> Vec<Candidate<'a>> {
    let mut candidates: Vec<Candidate<'a>> = policies
        .filter_map(|(namespace, name, spec)| {
            let priority = if spec.resource_selectors.is_empty() {
                ImplicitPriority::MatchAll
            } else {
                selectors_priority(&spec.resource_selectors, template)
            };
            (priority > ImplicitPriority::MisMatch).then_some(Candidate {
                namespace,
                name: name.unwrap_or_default(),
                priority,
                spec,
            })
        })
        .collect();
    candidates.sort_by(|a, b| a.priority.cmp(&b.priority).then_with(|| a.name.cmp(b.name)));
    candidates
}

/// A policy's rules: `overrideRules`, or the deprecated `targetCluster` + `overriders` as one rule.
fn rules_of(spec: &OverrideSpec) -> Vec<RuleWithCluster> {
    if spec.override_rules.is_empty() {
        vec![RuleWithCluster {
            target_cluster: spec.target_cluster.clone(),
            overriders: spec.overriders.clone(),
        }]
    } else {
        spec.override_rules.clone()
    }
}

type RuleError = (&'static str, usize, OverriderError);

/// Runs one rule's overriders in Karmada's fixed order, each entry's patch applied before the next is built.
fn apply_rule(object: &mut Value, overriders: &Overriders) -> Result<(), RuleError> {
    for (index, o) in overriders.image_overrider.iter().enumerate() {
        image_ops(object, o)
            .and_then(|ops| patch(object, &ops))
            .map_err(|e| ("imageOverrider", index, e))?;
    }
    for (field, name, list) in [
        ("command", "commandOverrider", &overriders.command_overrider),
        ("args", "argsOverrider", &overriders.args_overrider),
    ] {
        for (index, o) in list.iter().enumerate() {
            patches::command_args(object, field, o)
                .and_then(|ops| patch(object, &ops))
                .map_err(|e| (name, index, e))?;
        }
    }
    for (field, name, list) in [
        ("labels", "labelsOverrider", &overriders.labels_overrider),
        (
            "annotations",
            "annotationsOverrider",
            &overriders.annotations_overrider,
        ),
    ] {
        for (index, o) in list.iter().enumerate() {
            patches::labels_or_annotations(object, field, o)
                .and_then(|ops| patch(object, &ops))
                .map_err(|e| (name, index, e))?;
        }
    }
    for (index, o) in overriders.field_overrider.iter().enumerate() {
        field::apply(object, o).map_err(|e| ("fieldOverrider", index, e))?;
    }
    patches::plaintext(&overriders.plaintext)
        .and_then(|ops| patch(object, &ops))
        .map_err(|e| ("plaintext", 0, e))
}

fn patch(object: &mut Value, ops: &[json_patch::PatchOperation]) -> Result<(), OverriderError> {
    if ops.is_empty() {
        return Ok(());
    }
    json_patch::patch(object, ops).map_err(|source| OverriderError::Patch {
        source: Box::new(source),
    })
}

/// The `replace` operations of one image overrider: the predicate's path, or every container image of the
/// known workload kinds.
fn image_ops(
    object: &Value,
    overrider: &flotilla_api::policy::v1alpha1::ImageOverrider,
) -> Result<Vec<json_patch::PatchOperation>, OverriderError> {
    let targets: Vec<(String, String)> = match &overrider.predicate {
        Some(predicate) => {
            let image = object
                .pointer(&predicate.path)
                .and_then(Value::as_str)
                .ok_or_else(|| OverriderError::NotString {
                    path: predicate.path.clone(),
                })?;
            vec![(predicate.path.clone(), image.to_owned())]
        }
        None => image::default_image_paths(object)
            .into_iter()
            .map(|path| {
                // A container without an image reads as "", which then fails to parse, as in Karmada.
                let image = object
                    .pointer(&path)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                (path, image)
            })
            .collect(),
    };
    targets
        .into_iter()
        .map(|(path, image)| {
            let mut parsed =
                ImageRef::parse(&image).map_err(|source| OverriderError::ParseImage {
                    path: path.clone(),
                    image: image.clone(),
                    source,
                })?;
            parsed.apply(overrider)?;
            patches::operation(
                &flotilla_api::policy::v1alpha1::OverriderOperator::Replace,
                &path,
                Some(Value::String(parsed.to_string())),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
