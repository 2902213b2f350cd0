//! Which rules apply to a user in a namespace: every ClusterRoleBinding naming the user, then (in a
//! namespace) every RoleBinding there, each with the rules of the role it refers to, in store order. A
//! binding whose role is missing contributes an error instead, which denials report.

use serde_json::Value;

use super::rule::PolicyRule;
use crate::auth::UserInfo;
use crate::auth::user::SERVICE_ACCOUNT_PREFIX;
use flotilla_apimachinery::validation::go_quote as q;
use flotilla_store::{ResKey, Store};

/// The RBAC API group.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

fn key(plural: &str) -> ResKey {
    ResKey::new(GROUP, plural)
}

/// The binding a rule came from, described as kube's RBAC authorizer words it in an allowing reason.
#[derive(Debug, Clone)]
pub struct Source {
    /// `ClusterRoleBinding` or `RoleBinding`.
    pub binding_kind: &'static str,
    /// The binding's name (`name/namespace` for a RoleBinding, as upstream prints it).
    pub binding: String,
    /// The role reference's kind and name.
    pub role_kind: String,
    /// The role's name.
    pub role: String,
    /// The matching subject, described.
    pub subject: String,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} of {} {} to {}",
            self.binding_kind,
            q(&self.binding),
            self.role_kind,
            q(&self.role),
            self.subject
        )
    }
}

/// What the visitor sees: a rule with its source, or an error resolving a binding's role.
pub enum Visit<'a> {
    /// A rule that applies.
    Rule(&'a Source, &'a PolicyRule),
    /// A binding applies but its role could not be read.
    Error(String),
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

/// Whether binding subject `subject` names `user`; a ServiceAccount subject without a namespace means the
/// binding's own.
fn applies_to(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = text(subject, "name");
    match text(subject, "kind") {
        "User" => user.username == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = match text(subject, "namespace") {
                "" => namespace,
                ns => ns,
            };
            !ns.is_empty() && user.username == format!("{SERVICE_ACCOUNT_PREFIX}{ns}:{name}")
        }
        _ => false,
    }
}

fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = text(subject, "kind");
    let name = text(subject, "name");
    if kind == "ServiceAccount" {
        let ns = match text(subject, "namespace") {
            "" => binding_namespace,
            ns => ns,
        };
        return format!("{kind} {}", q(&format!("{name}/{ns}")));
    }
    format!("{kind} {}", q(name))
}

/// Why a binding's role reference gives no rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoleRefError {
    /// The role does not exist (worded as upstream's listers word it).
    #[error("{singular}.{GROUP} {} not found", q(name))]
    NotFound {
        /// `role` or `clusterrole`.
        singular: &'static str,
        /// The role's name.
        name: String,
    },
    /// The reference names neither a Role nor a ClusterRole.
    #[error("unsupported role reference kind: {}", q(.0))]
    UnsupportedKind(String),
}

/// The rules of the role `role_ref` names, as seen from a binding in `namespace` (`""` for a
/// ClusterRoleBinding).
///
/// # Errors
/// The role is missing or the reference's kind is unknown.
pub fn role_rules(
    store: &Store,
    role_ref: &Value,
    namespace: &str,
) -> Result<Vec<PolicyRule>, RoleRefError> {
    let name = text(role_ref, "name");
    let (plural, singular, ns) = match text(role_ref, "kind") {
        "Role" => ("roles", "role", namespace),
        "ClusterRole" => ("clusterroles", "clusterrole", ""),
        other => return Err(RoleRefError::UnsupportedKind(other.to_string())),
    };
    store
        .get(&key(plural), ns, name)
        .map(|role| PolicyRule::of(&role))
        .ok_or_else(|| RoleRefError::NotFound {
            singular,
            name: name.to_string(),
        })
}

/// Calls `visit` with every rule that applies to `user` in `namespace` (cluster-wide only when empty) and
/// every resolution error, until it answers `false`.
pub fn visit_rules(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(Visit<'_>) -> bool,
) {
    let scopes: [(&str, &'static str, Option<&str>); 2] = [
        ("clusterrolebindings", "ClusterRoleBinding", None),
        ("rolebindings", "RoleBinding", Some(namespace)),
    ];
    for (plural, binding_kind, ns) in scopes {
        if ns == Some("") {
            continue;
        }
        let (_, bindings) = store.list(&key(plural), ns);
        let binding_ns = ns.unwrap_or("");
        for binding in bindings {
            let subjects = binding
                .get("subjects")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let Some(subject) = subjects.iter().find(|s| applies_to(user, s, binding_ns)) else {
                continue;
            };
            let role_ref = binding.get("roleRef").unwrap_or(&Value::Null);
            let rules = match role_rules(store, role_ref, binding_ns) {
                Ok(rules) => rules,
                Err(e) => {
                    if !visit(Visit::Error(e.to_string())) {
                        return;
                    }
                    continue;
                }
            };
            let name = crate::meta::meta_str(&binding, "name").unwrap_or("");
            let source = Source {
                binding_kind,
                binding: match ns {
                    Some(ns) => format!("{name}/{ns}"),
                    None => name.to_string(),
                },
                role_kind: text(role_ref, "kind").to_string(),
                role: text(role_ref, "name").to_string(),
                subject: describe_subject(subject, binding_ns),
            };
            for rule in &rules {
                if !visit(Visit::Rule(&source, rule)) {
                    return;
                }
            }
        }
    }
}
