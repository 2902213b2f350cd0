//! Which webhooks a request reaches: a webhook's `rules` (operations, API groups and versions, resources with
//! their subresources, scope), its `namespaceSelector` and its `objectSelector`, as kube-apiserver matches them.

use serde_json::Value;

use crate::selector::Selector;

/// The operation a request performs, as AdmissionReview spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// POST of a new object (also `pods/binding`, `pods/eviction`).
    Create,
    /// PUT or PATCH, of an object or a subresource.
    Update,
    /// DELETE.
    Delete,
}

impl Operation {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }

    /// The options kind AdmissionReview's `options` carries for this operation.
    pub fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
        }
    }
}

/// The resource a request addresses, as rules see it.
#[derive(Clone, Debug)]
pub struct Target<'a> {
    /// The operation.
    pub operation: Operation,
    /// API group (`""` for core).
    pub group: &'a str,
    /// API version of the request.
    pub version: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
    /// Subresource (`status`, `scale`, ...), `""` for the main resource.
    pub subresource: &'a str,
    /// Whether the resource lives in namespaces.
    pub namespaced: bool,
}

fn strings<'v>(value: &'v Value, key: &str) -> impl Iterator<Item = &'v str> {
    value
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether one rule of `rules` matches `target`: `*` matches any operation, group or version; a resource entry is
/// `res` (the resource itself, no subresource), `res/sub`, `res/*` (res and every subresource of it), `*` (every
/// resource, no subresource), `*/*` (everything) or `*/sub`; `scope` is `Cluster`, `Namespaced` or `*` (the default).
pub fn rules_match(rules: Option<&Value>, target: &Target<'_>) -> bool {
    rules
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|rule| rule_matches(rule, target))
}

fn rule_matches(rule: &Value, target: &Target<'_>) -> bool {
    let any_of = |key: &str, wanted: &str| strings(rule, key).any(|s| s == "*" || s == wanted);
    let resource = strings(rule, "resources").any(|entry| {
        let (res, sub) = match entry.split_once('/') {
            Some((res, sub)) => (res, Some(sub)),
            None => (entry, None),
        };
        (res == "*" || res == target.resource)
            && match sub {
                None => target.subresource.is_empty(),
                Some("*") => true,
                Some(sub) => sub == target.subresource,
            }
    });
    let scope = match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Cluster" => !target.namespaced,
        "Namespaced" => target.namespaced,
        _ => true,
    };
    any_of("operations", target.operation.as_str())
        && any_of("apiGroups", target.group)
        && any_of("apiVersions", target.version)
        && resource
        && scope
}

/// Whether a label selector (`namespaceSelector` or `objectSelector`) matches `labels`; an absent or empty
/// selector matches everything, and a malformed one nothing (it is rejected when the configuration is written,
/// and a webhook must not be called on a selector nobody can read).
pub fn selector_matches(selector: Option<&Value>, labels: Option<&Value>) -> bool {
    match selector {
        None | Some(Value::Null) => true,
        Some(selector) => Selector::from_label_selector(selector)
            .map(|s| s.matches(labels))
            .unwrap_or(false),
    }
}

/// Whether a webhook's `objectSelector` matches the request: the new object or, for updates and deletes, the old
/// one (either is enough, as upstream).
pub fn object_selector_matches(
    webhook: &Value,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> bool {
    let labels = |o: Option<&Value>| o.and_then(|o| o.pointer("/metadata/labels")).cloned();
    let selector = webhook.get("objectSelector");
    [object, old_object]
        .into_iter()
        .flatten()
        .any(|o| selector_matches(selector, labels(Some(o)).as_ref()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn target(resource: &'static str, subresource: &'static str) -> Target<'static> {
        Target {
            operation: Operation::Update,
            group: "apps",
            version: "v1",
            resource,
            subresource,
            namespaced: true,
        }
    }

    #[test]
    fn resources_match_with_and_without_subresources() {
        let cases = [
            ("deployments", "", "deployments", true),
            ("deployments", "scale", "deployments", false),
            ("deployments", "scale", "deployments/scale", true),
            ("deployments", "status", "deployments/*", true),
            // `res/*` also matches res itself, as upstream splits it into (res, *).
            ("deployments", "", "deployments/*", true),
            ("deployments", "", "*", true),
            ("deployments", "status", "*", false),
            ("deployments", "status", "*/*", true),
            ("deployments", "status", "*/status", true),
            ("deployments", "scale", "*/status", false),
            ("statefulsets", "", "deployments", false),
        ];
        for (resource, sub, entry, want) in cases {
            let rule = json!([{"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": [entry]}]);
            assert_eq!(
                rules_match(Some(&rule), &target(resource, sub)),
                want,
                "{entry} vs {resource}/{sub}"
            );
        }
    }

    #[test]
    fn operations_groups_versions_and_scope_must_all_match() {
        let t = target("deployments", "");
        let rule = |ops: &str, groups: &str, versions: &str, scope: &str| json!([{"operations": [ops], "apiGroups": [groups], "apiVersions": [versions], "resources": ["*"], "scope": scope}]);
        assert!(rules_match(Some(&rule("*", "*", "*", "*")), &t));
        assert!(rules_match(
            Some(&rule("UPDATE", "apps", "v1", "Namespaced")),
            &t
        ));
        assert!(!rules_match(Some(&rule("CREATE", "*", "*", "*")), &t));
        assert!(!rules_match(Some(&rule("*", "", "*", "*")), &t));
        assert!(!rules_match(Some(&rule("*", "*", "v1beta1", "*")), &t));
        assert!(!rules_match(Some(&rule("*", "*", "*", "Cluster")), &t));
        assert!(!rules_match(None, &t));
    }

    #[test]
    fn object_selectors_match_the_new_or_the_old_object() {
        let webhook = json!({"objectSelector": {"matchLabels": {"team": "a"}}});
        let a = json!({"metadata": {"labels": {"team": "a"}}});
        let b = json!({"metadata": {"labels": {"team": "b"}}});
        assert!(object_selector_matches(&webhook, Some(&a), None));
        assert!(!object_selector_matches(&webhook, Some(&b), None));
        assert!(object_selector_matches(&webhook, Some(&b), Some(&a)));
        assert!(object_selector_matches(&json!({}), Some(&b), None));
        let bad =
            json!({"objectSelector": {"matchExpressions": [{"key": "x", "operator": "Nope"}]}});
        assert!(!object_selector_matches(&bad, Some(&a), None));
    }
}
