//! Authorization as kube-apiserver decides it with `--authorization-mode Node,RBAC`: members of
//! `system:masters` may do everything; everyone else may do what the Roles and ClusterRoles bound to them
//! allow ([`resolver`], [`rule`]). Denials name the request as kube-apiserver's 403 does; RBAC writes are
//! checked for privilege escalation ([`escalation`]).
//!
//! Not here: the Node authorizer (this server's tokens never authenticate a kubelet), so Node users get only
//! what RBAC gives them.

pub mod escalation;
pub mod resolver;
pub mod rule;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::auth::UserInfo;
use crate::auth::user::MASTERS;
use crate::status::ApiError;
use flotilla_apimachinery::validation::go_quote as q;
use flotilla_store::Store;
pub use resolver::{Source, Visit, visit_rules};
pub use rule::{PolicyRule, go_quoted_list};

/// What a request asks to do, as kube's `authorizer.Attributes` carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, or any
    /// other (`impersonate`, `bind`, `escalate`); the lower-cased method for a non-resource request.
    pub verb: String,
    /// Whether the request addresses a resource (otherwise it addresses `path`).
    pub resource_request: bool,
    /// The URL path of a non-resource request.
    pub path: String,
    /// The namespace (`""` cluster-wide).
    pub namespace: String,
    /// The API group.
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The resource.
    pub resource: String,
    /// The subresource.
    pub subresource: String,
    /// The object's name (`""` for a collection).
    pub name: String,
}

/// An authorizer's answer: allowed or not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// kube's reason: the binding that allowed, or the errors met resolving roles on a denial (often empty).
    pub reason: String,
}

/// Go's aggregate of error messages: one as it is, several de-duplicated in brackets.
fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errors {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [] => String::new(),
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Decides `attrs`: `system:masters` first, then RBAC.
pub fn authorize(store: &Store, attrs: &Attributes) -> Decision {
    if attrs.user.groups.iter().any(|g| g == MASTERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let mut allowed_by = None;
    let mut errors = Vec::new();
    visit_rules(store, &attrs.user, &attrs.namespace, |visit| match visit {
        Visit::Rule(source, rule) if rule.allows(attrs) => {
            allowed_by = Some(source.to_string());
            false
        }
        Visit::Rule(..) => true,
        Visit::Error(e) => {
            errors.push(e);
            true
        }
    });
    match allowed_by {
        Some(source) => Decision {
            allowed: true,
            reason: format!("RBAC: allowed by {source}"),
        },
        None if errors.is_empty() => Decision {
            allowed: false,
            reason: String::new(),
        },
        // kube-apiserver's authorizer chain names the authorizer whose reason a denial carries.
        None => Decision {
            allowed: false,
            reason: format!("rbac: RBAC: {}", aggregate(&errors)),
        },
    }
}

/// Every rule that applies to `user` in `namespace`, and the errors met resolving them (aggregated as kube
/// reports them, empty when none).
pub fn rules_for(store: &Store, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, String) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    visit_rules(store, user, namespace, |visit| {
        match visit {
            Visit::Rule(_, rule) => rules.push(rule.clone()),
            Visit::Error(e) => errors.push(e),
        }
        true
    });
    (rules, aggregate(&errors))
}

/// The 403 kube-apiserver answers a denied request with: its message names the user, verb, resource (with
/// subresource) or path, group and namespace, then `reason` when there is one.
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let user = q(&attrs.user.username);
    let what = if !attrs.resource_request {
        format!("User {user} cannot {} path {}", attrs.verb, q(&attrs.path))
    } else {
        let mut resource = attrs.resource.clone();
        if !attrs.subresource.is_empty() {
            resource = format!("{resource}/{}", attrs.subresource);
        }
        let scope = if attrs.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace {}", q(&attrs.namespace))
        };
        format!(
            "User {user} cannot {} resource {} in API group {} {scope}",
            attrs.verb,
            q(&resource),
            q(&attrs.api_group)
        )
    };
    let mut message = what
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    if !reason.is_empty() {
        message = format!("{message}: {reason}");
    }
    forbidden_error(&attrs.api_group, &attrs.resource, &attrs.name, &message)
}

/// kube's `NewForbidden(group resource, name, err)`: the message prefixed with what was forbidden, and the
/// details naming it.
pub fn forbidden_error(group: &str, resource: &str, name: &str, cause: &str) -> ApiError {
    let qualified = crate::status::qualified(resource, group);
    let message = match (resource.is_empty() && group.is_empty(), name.is_empty()) {
        (true, _) => format!("forbidden: {cause}"),
        (false, true) => format!("{qualified} is forbidden: {cause}"),
        (false, false) => format!("{qualified} {} is forbidden: {cause}", q(name)),
    };
    // Always present, as upstream's Status always carries its (possibly empty) details.
    ApiError::forbidden(message).with_details(crate::status::details(name, group, resource))
}

/// The SubjectAccessReview status kube-apiserver answers for `decision` (`denied` is only ever set by an
/// authorizer that denies outright, which RBAC never does).
pub fn review_status(decision: &Decision) -> Value {
    let mut status = Map::new();
    status.insert("allowed".into(), json!(decision.allowed));
    if !decision.reason.is_empty() {
        status.insert("reason".into(), json!(decision.reason));
    }
    Value::Object(status)
}
