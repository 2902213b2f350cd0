//! Privilege escalation checks on RBAC writes, as kube-apiserver's RBAC storage makes them: a user may create
//! or change a Role or ClusterRole only with rights covering every rule in it (or the `escalate` verb on it),
//! and a binding only to a role whose rules their rights cover (or with the `bind` verb on that role). Members
//! of `system:masters` are never checked; a write that changes only owner references or finalizers is not
//! checked either (the garbage collector makes those).

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::resolver::{GROUP, RoleRefError, role_rules};
use super::rule::{ALL, PolicyRule, url_matches};
use super::{Attributes, authorize, forbidden_error, go_quoted_list, rules_for};
use crate::auth::UserInfo;
use crate::auth::user::MASTERS;
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use flotilla_store::Store;

/// The rights a ClusterRole with an aggregation rule needs: everything.
fn full_authority() -> Vec<PolicyRule> {
    let all = vec![ALL.to_string()];
    vec![
        PolicyRule {
            verbs: all.clone(),
            api_groups: all.clone(),
            resources: all.clone(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: all.clone(),
            non_resource_urls: all,
            ..PolicyRule::default()
        },
    ]
}

/// `rule` split into rules of one group, resource, verb and name (or one URL and verb).
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| vec![s.clone()];
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: one(verb),
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            resource_names: one(name),
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: one(verb),
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| set.contains(w))
}

fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if owner.iter().any(|r| r == ALL) || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        owner.contains(path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| owner.contains(&format!("*/{sub}")))
    })
}

fn covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = owner.verbs.iter().any(|v| v == ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups =
        owner.api_groups.iter().any(|g| g == ALL) || has_all(&owner.api_groups, &sub.api_groups);
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| o == path || (o.ends_with('*') && url_matches(o, path)))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources_cover(&owner.resources, &sub.resources) && names && urls
}

/// The parts of `servant` that no rule of `owner` covers (empty when covered).
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| covers(o, sub)))
        .collect()
}

/// Merges rules on one group, resource and (at most one) name into one rule with all their verbs.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let mut simple: HashMap<(String, String, Vec<String>), PolicyRule> = HashMap::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            out.push(rule);
            continue;
        }
        let key = (
            rule.api_groups[0].clone(),
            rule.resources[0].clone(),
            rule.resource_names.clone(),
        );
        match simple.get_mut(&key) {
            Some(existing) => existing.verbs.extend(rule.verbs),
            None => {
                simple.insert(key, rule);
            }
        }
    }
    out.extend(simple.into_values());
    out
}

/// Refuses granting `rules` when `user`'s own rights in `namespace` do not cover them, with kube's message
/// listing what is missing.
fn confirm_no_escalation(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owned, errors) = rules_for(store, user, namespace);
    let missing = uncovered(&owned, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let lines: BTreeSet<String> = compact(missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    let mut message = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        flotilla_apimachinery::validation::go_quote(&user.username),
        go_quoted_list(&user.groups),
        lines.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !errors.is_empty() {
        message = format!("{message}; resolution errors: [{errors}]");
    }
    Err(message)
}

/// Whether `user` holds `verb` on the role `resource`/`name` (`bind` or `escalate`).
fn holds(
    store: &Store,
    user: &UserInfo,
    verb: &str,
    group: &str,
    resource: &str,
    name: &str,
    namespace: &str,
) -> bool {
    let attrs = Attributes {
        user: user.clone(),
        verb: verb.into(),
        resource_request: true,
        namespace: namespace.into(),
        api_group: group.into(),
        api_version: ALL.into(),
        resource: resource.into(),
        name: name.into(),
        ..Attributes::default()
    };
    authorize(store, &attrs).allowed
}

/// Whether an update changes nothing but what the garbage collector changes.
fn only_gc_fields(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in [
                "ownerReferences",
                "finalizers",
                "managedFields",
                "resourceVersion",
                "generation",
            ] {
                m.remove(field);
            }
        }
        v
    };
    strip(old) == strip(new)
}

fn has_aggregation(role: &Value) -> bool {
    role.pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
}

/// A binding's missing role as kube-apiserver reports it: its create handler words the lister's NotFound as
/// one of the resource written (`rolebindings.rbac.authorization.k8s.io "<role>" not found`).
fn role_ref_error(binding_plural: &str, error: RoleRefError) -> ApiError {
    match error {
        RoleRefError::NotFound { name, .. } => ApiError::not_found(binding_plural, GROUP, &name)
            .with_details(crate::status::details(&name, GROUP, binding_plural)),
        other => ApiError::internal(other.to_string()),
    }
}

/// Checks a write of `new` (replacing `old` on an update) by `user` in `namespace` when it is an RBAC role or
/// binding, as kube-apiserver's RBAC storage does before validation.
///
/// # Errors
/// 403 naming the rights missing; 404 when a binding refers to a role that does not exist.
pub fn check_write(
    store: &Store,
    info: &ResourceInfo,
    user: &UserInfo,
    namespace: &str,
    old: Option<&Value>,
    new: &Value,
) -> ApiResult<()> {
    if info.custom || info.group != GROUP || user.groups.iter().any(|g| g == MASTERS) {
        return Ok(());
    }
    let name = crate::meta::meta_str(new, "name").unwrap_or("");
    let plural = info.plural.as_str();
    if !matches!(
        plural,
        "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings"
    ) {
        return Ok(());
    }
    let role = matches!(plural, "roles" | "clusterroles");
    // Upstream asks about `escalate` before it looks at the object; a binding's `bind` after.
    if role && holds(store, user, "escalate", GROUP, plural, name, namespace) {
        return Ok(());
    }
    if old.is_some_and(|old| only_gc_fields(old, new)) {
        return Ok(());
    }
    let refuse = |cause: String| forbidden_error(GROUP, plural, name, &cause);
    if role {
        confirm_no_escalation(store, user, namespace, &PolicyRule::of(new)).map_err(refuse)?;
        let aggregates = has_aggregation(new) || old.is_some_and(has_aggregation);
        if plural == "clusterroles" && aggregates {
            confirm_no_escalation(store, user, namespace, &full_authority()).map_err(|_| {
                refuse("must have cluster-admin privileges to use the aggregationRule".into())
            })?;
        }
        return Ok(());
    }
    let role_ref = new.get("roleRef").unwrap_or(&Value::Null);
    let ref_kind = role_ref.get("kind").and_then(Value::as_str).unwrap_or("");
    let ref_group = role_ref
        .get("apiGroup")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ref_name = role_ref.get("name").and_then(Value::as_str).unwrap_or("");
    let ref_plural = match ref_kind {
        "ClusterRole" => Some("clusterroles"),
        "Role" => Some("roles"),
        _ => None,
    };
    if ref_plural.is_some_and(|p| holds(store, user, "bind", ref_group, p, ref_name, namespace)) {
        return Ok(());
    }
    let rules = role_rules(store, role_ref, namespace).map_err(|e| role_ref_error(plural, e))?;
    confirm_no_escalation(store, user, namespace, &rules).map_err(refuse)
}
