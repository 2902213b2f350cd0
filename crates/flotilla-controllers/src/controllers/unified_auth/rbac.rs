//! The pure half of the unified-auth controller: Karmada's RBAC rule matching (`pkg/util/rbac.go`
//! `PolicyRuleAPIGroupMatches`, `PolicyRuleResourceMatches`, `PolicyRuleResourceNameMatches`), which subjects of
//! the control plane may proxy to a cluster, the impersonation rules that lets them (`GenerateImpersonationRules`),
//! and the two member objects that carry those rules.
//!
//! Wildcards count exactly as Karmada counts them: `*` in `apiGroups` or `resources` matches anything, an empty
//! `resourceNames` matches every name; verbs are not looked at (a role that may only `get` `clusters/proxy` still
//! makes its subjects impersonable).

use std::collections::BTreeSet;

use flotilla_api::names::labels;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Subject};
use serde_json::{Value, json};

/// The API group whose `clusters/proxy` the aggregated API server serves.
pub(crate) const CLUSTER_API_GROUP: &str = "cluster.karmada.io";
/// The proxy subresource of Clusters.
pub(crate) const CLUSTER_PROXY_RESOURCE: &str = "clusters/proxy";
/// karmada-search's API group, whose proxy reaches every cluster.
pub(crate) const SEARCH_API_GROUP: &str = "search.karmada.io";
/// karmada-search's proxy resource.
pub(crate) const PROXYING_PROXY_RESOURCE: &str = "proxying/proxy";

/// Name of the ClusterRole and ClusterRoleBinding written to each member.
pub(crate) const IMPERSONATOR: &str = "karmada-impersonator";

const RBAC_API_VERSION: &str = "rbac.authorization.k8s.io/v1";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const ANY: &str = "*";

/// Whether `rule` applies to API group `group` (`*` applies to every group).
pub(crate) fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups
        .iter()
        .flatten()
        .any(|g| g == ANY || g == group)
}

/// Whether `rule` applies to `resource` (`*` applies to every resource).
pub(crate) fn resource_matches(rule: &PolicyRule, resource: &str) -> bool {
    rule.resources
        .iter()
        .flatten()
        .any(|r| r == ANY || r == resource)
}

/// Whether `rule` applies to the object named `name` (no `resourceNames` applies to every name).
pub(crate) fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    match rule.resource_names.as_deref() {
        None | Some([]) => true,
        Some(names) => names.iter().any(|n| n == name),
    }
}

fn rules(role: &ClusterRole) -> &[PolicyRule] {
    role.rules.as_deref().unwrap_or_default()
}

/// Whether `role` lets its subjects proxy to `cluster`: a rule for `cluster.karmada.io` `clusters/proxy` naming
/// the cluster (or no name), or any rule for `search.karmada.io` `proxying/proxy`.
pub(crate) fn grants_proxy_to(role: &ClusterRole, cluster: &str) -> bool {
    rules(role).iter().any(|rule| {
        (api_group_matches(rule, CLUSTER_API_GROUP)
            && resource_matches(rule, CLUSTER_PROXY_RESOURCE)
            && resource_name_matches(rule, cluster))
            || (api_group_matches(rule, SEARCH_API_GROUP)
                && resource_matches(rule, PROXYING_PROXY_RESOURCE))
    })
}

/// The subjects that may proxy to `cluster`: those of every ClusterRoleBinding whose role (a ClusterRole; a
/// binding to a Role counts for nothing) [grants the proxy](grants_proxy_to), in binding order, repeats kept.
pub(crate) fn subjects_for<'a>(
    cluster: &str,
    roles: impl IntoIterator<Item = &'a ClusterRole>,
    bindings: impl IntoIterator<Item = &'a ClusterRoleBinding>,
) -> Vec<Subject> {
    let granting: BTreeSet<String> = roles
        .into_iter()
        .filter(|role| grants_proxy_to(role, cluster))
        .filter_map(|role| role.metadata.name.clone())
        .collect();
    if granting.is_empty() {
        return Vec::new();
    }
    bindings
        .into_iter()
        .filter(|b| b.role_ref.kind == "ClusterRole" && granting.contains(&b.role_ref.name))
        .flat_map(|b| b.subjects.iter().flatten().cloned())
        .collect()
}

/// Which clusters must be synced again when `role` changes, `all` being every cluster's name: those a
/// `clusters/proxy` rule names (every cluster when it names none), every cluster for a `proxying/proxy` rule.
/// Karmada stops looking at further rules once one covers every cluster.
pub(crate) fn clusters_affected_by(role: &ClusterRole, all: &[String]) -> BTreeSet<String> {
    let mut clusters = BTreeSet::new();
    for rule in rules(role) {
        if api_group_matches(rule, CLUSTER_API_GROUP)
            && resource_matches(rule, CLUSTER_PROXY_RESOURCE)
        {
            match rule.resource_names.as_deref() {
                None | Some([]) => return all.iter().cloned().collect(),
                Some(names) => clusters.extend(names.iter().cloned()),
            }
        }
        if api_group_matches(rule, SEARCH_API_GROUP)
            && resource_matches(rule, PROXYING_PROXY_RESOURCE)
        {
            return all.iter().cloned().collect();
        }
    }
    clusters
}

/// The rules letting a member's impersonator impersonate `subjects`: `impersonate` on `users`, `serviceaccounts`
/// and `groups` (in that order, each only when it has names), with the sorted, deduplicated names of the subjects
/// of that kind as `resourceNames`. Subjects of other kinds are skipped; a ServiceAccount counts by name only.
pub(crate) fn impersonation_rules(subjects: &[Subject]) -> Vec<PolicyRule> {
    let names_of = |kind: &str| -> BTreeSet<String> {
        subjects
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| s.name.clone())
            .collect()
    };
    [
        ("User", "users"),
        ("ServiceAccount", "serviceaccounts"),
        ("Group", "groups"),
    ]
    .into_iter()
    .filter_map(|(kind, resource)| {
        let names = names_of(kind);
        (!names.is_empty()).then(|| PolicyRule {
            verbs: vec!["impersonate".to_owned()],
            api_groups: Some(vec![String::new()]),
            resources: Some(vec![resource.to_owned()]),
            resource_names: Some(names.into_iter().collect()),
            non_resource_urls: None,
        })
    })
    .collect()
}

fn system_metadata() -> Value {
    json!({"name": IMPERSONATOR, "labels": {(labels::SYSTEM): labels::SYSTEM_VALUE}})
}

/// The member ClusterRole `karmada-impersonator` with `rules`. Without rules its `rules` is `null`, as Karmada's
/// manifest has it (a nil list it does not omit).
pub(crate) fn impersonator_cluster_role(rules: &[PolicyRule]) -> Value {
    let rules = if rules.is_empty() {
        Value::Null
    } else {
        // PolicyRule serialises to plain JSON; it cannot fail.
        serde_json::to_value(rules).unwrap_or(Value::Null)
    };
    json!({
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": system_metadata(),
        "rules": rules,
    })
}

/// The member ClusterRoleBinding `karmada-impersonator` giving ClusterRole `karmada-impersonator` to ServiceAccount
/// `karmada-impersonator` in `namespace` (the namespace of the cluster's impersonator Secret, as Karmada takes it).
pub(crate) fn impersonator_cluster_role_binding(namespace: &str) -> Value {
    json!({
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": system_metadata(),
        "subjects": [{
            "kind": "ServiceAccount",
            "namespace": namespace,
            "name": flotilla_api::names::registration::IMPERSONATOR_SERVICE_ACCOUNT,
        }],
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": IMPERSONATOR},
    })
}

#[cfg(test)]
#[path = "rbac_tests.rs"]
mod tests;
