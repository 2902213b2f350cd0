//! One RBAC rule and how it matches a request, as kube's RBAC authorizer compares them: `*` matches any verb,
//! group or resource, `*/<sub>` any resource's subresource `<sub>`, resource names narrow a rule to those
//! objects, and a non-resource URL ending in `*` matches every path it prefixes.

use serde::Deserialize;

use super::Attributes;

/// `rbac.authorization.k8s.io/v1` PolicyRule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    /// Verbs.
    pub verbs: Vec<String>,
    /// API groups (`""` is the core group).
    pub api_groups: Vec<String>,
    /// Resources, `<resource>/<subresource>` for a subresource.
    pub resources: Vec<String>,
    /// Object names the rule is limited to (every object when empty).
    pub resource_names: Vec<String>,
    /// Non-resource URL paths.
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

/// The wildcard of every rule field.
pub(crate) const ALL: &str = "*";

fn has(set: &[String], wanted: &str) -> bool {
    set.iter().any(|s| s == wanted)
}

fn matches(set: &[String], wanted: &str) -> bool {
    set.iter().any(|s| s == ALL || s == wanted)
}

/// Whether non-resource URL pattern `pattern` covers `path`.
pub(crate) fn url_matches(pattern: &str, path: &str) -> bool {
    pattern == ALL
        || pattern == path
        || pattern
            .strip_suffix('*')
            .is_some_and(|_| path.starts_with(pattern.trim_end_matches('*')))
}

impl PolicyRule {
    /// The rules of a Role or ClusterRole object; rules that do not decode are skipped (the server validated
    /// them on write).
    pub fn of(role: &serde_json::Value) -> Vec<PolicyRule> {
        role.get("rules")
            .and_then(serde_json::Value::as_array)
            .map(|rules| {
                rules
                    .iter()
                    .filter_map(|r| PolicyRule::deserialize(r).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the rule allows the request `attrs` describes.
    pub fn allows(&self, attrs: &Attributes) -> bool {
        if !matches(&self.verbs, &attrs.verb) {
            return false;
        }
        if !attrs.resource_request {
            return self
                .non_resource_urls
                .iter()
                .any(|u| url_matches(u, &attrs.path));
        }
        let combined = if attrs.subresource.is_empty() {
            attrs.resource.clone()
        } else {
            format!("{}/{}", attrs.resource, attrs.subresource)
        };
        let resource = self.resources.iter().any(|r| {
            r == ALL
                || *r == combined
                || (!attrs.subresource.is_empty()
                    && r.strip_prefix("*/") == Some(attrs.subresource.as_str()))
        });
        matches(&self.api_groups, &attrs.api_group)
            && resource
            && (self.resource_names.is_empty() || has(&self.resource_names, &attrs.name))
    }

    /// kube's compact rendering of a rule in messages: the non-empty fields as Go's `%q` prints string lists,
    /// e.g. `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`.
    pub fn compact_string(&self) -> String {
        let fields = [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ];
        let parts: Vec<String> = fields
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}:{}", go_quoted_list(v)))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }
}

/// A string list as Go's `%q` prints it (`["a" "b"]`), as kube's messages print user groups and rule fields.
pub fn go_quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| flotilla_apimachinery::validation::go_quote(s))
        .collect();
    format!("[{}]", quoted.join(" "))
}
