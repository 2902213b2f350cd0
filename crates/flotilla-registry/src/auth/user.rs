//! Who a request speaks for: the one identity every later step sees (handlers, the registry, admission webhooks'
//! `userInfo`, SelfSubjectReview, the `X-Remote-*` headers of aggregated APIs).
//!
//! The server's authentication builds it from a token and its impersonation may replace it; nothing else derives
//! a user's groups.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The user name of the admin token: Karmada's admin (its admin certificate names `system:admin` in
/// `system:masters`), so RBAC that names the admin, such as `cluster-proxy-admin`, holds in both worlds.
pub(crate) const ADMIN: &str = "system:admin";
/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of unauthenticated requests.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user of unauthenticated requests.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group authorization never restricts (kube-apiserver's privileged group).
pub const MASTERS: &str = "system:masters";
/// The group of every Node's user (`system:node:<name>`).
pub const NODES: &str = "system:nodes";
pub(crate) const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
const NODE_PREFIX: &str = "system:node:";

/// A user as kube-apiserver's `user.Info` holds it: name, uid, groups and extra values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// User name.
    pub username: String,
    /// Uid (empty when the authenticator knows none).
    pub uid: String,
    /// Groups, in the order the authenticator or impersonation gave them.
    pub groups: Vec<String>,
    /// Extra values by key (keys sorted, as Go's JSON encoder writes a map).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The admin token's user: a cluster admin.
    pub fn admin() -> Self {
        Self::named(ADMIN, vec![MASTERS.into(), AUTHENTICATED.into()])
    }

    /// A ServiceAccount's user, in its namespace's and all ServiceAccounts' groups.
    pub fn service_account(namespace: &str, name: &str, uid: &str) -> Self {
        let mut groups = service_account_groups(namespace);
        groups.push(AUTHENTICATED.into());
        Self {
            uid: uid.into(),
            ..Self::named(
                &format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"),
                groups,
            )
        }
    }

    /// The user of a request no authenticator recognised.
    pub fn anonymous() -> Self {
        Self::named(ANONYMOUS, vec![UNAUTHENTICATED.into()])
    }

    fn named(name: &str, groups: Vec<String>) -> Self {
        Self {
            username: name.into(),
            groups,
            ..Self::default()
        }
    }

    /// The `authentication.k8s.io/v1` UserInfo (SelfSubjectReview, TokenReview, AdmissionReview): `uid`, `groups`
    /// and `extra` only when set, as Go's `omitempty` writes them.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("username".into(), json!(self.username));
        if !self.uid.is_empty() {
            out.insert("uid".into(), json!(self.uid));
        }
        if !self.groups.is_empty() {
            out.insert("groups".into(), json!(self.groups));
        }
        if !self.extra.is_empty() {
            out.insert("extra".into(), json!(self.extra));
        }
        Value::Object(out)
    }

    /// Adds `group` unless the user already has it (kube's `ensureGroup`).
    pub fn ensure_group(&mut self, group: &str) {
        if !self.groups.iter().any(|g| g == group) {
            self.groups.push(group.into());
        }
    }
}

/// The groups kube-apiserver gives every ServiceAccount of `namespace` (`serviceaccount.MakeGroupNames`).
pub fn service_account_groups(namespace: &str) -> Vec<String> {
    vec![
        "system:serviceaccounts".into(),
        format!("system:serviceaccounts:{namespace}"),
    ]
}

/// The namespace and name of a ServiceAccount user name (`system:serviceaccount:<ns>:<name>` with a DNS-1123
/// label namespace and a DNS-1123 subdomain name, as `serviceaccount.SplitUsername` accepts them).
pub fn split_service_account(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let mut parts = rest.split(':');
    let (namespace, name) = (parts.next()?, parts.next()?);
    let valid = parts.next().is_none()
        && crate::validation::format::is_dns1123_label(namespace).is_empty()
        && crate::validation::format::is_dns1123_subdomain(name).is_empty();
    valid.then_some((namespace, name))
}

/// The Node name of a Node's user name (`system:node:<DNS-1123 subdomain>`).
pub fn node_name(username: &str) -> Option<&str> {
    let name = username.strip_prefix(NODE_PREFIX)?;
    crate::validation::format::is_dns1123_subdomain(name)
        .is_empty()
        .then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_accounts_and_the_admin_belong_to_upstreams_groups() {
        assert_eq!(
            UserInfo::service_account("ns1", "builder", "u-1").groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                "system:authenticated"
            ]
        );
        assert_eq!(UserInfo::admin().groups, [MASTERS, AUTHENTICATED]);
        assert_eq!(UserInfo::anonymous().groups, [UNAUTHENTICATED]);
    }

    #[test]
    fn json_leaves_out_what_is_unset() {
        assert_eq!(
            UserInfo::admin().to_json(),
            json!({"username": ADMIN, "groups": [MASTERS, AUTHENTICATED]})
        );
        let mut u = UserInfo::service_account("ns", "sa", "1234");
        u.extra
            .insert("scopes".into(), vec!["a".into(), "b".into()]);
        assert_eq!(
            u.to_json(),
            json!({"username": "system:serviceaccount:ns:sa", "uid": "1234",
                   "groups": ["system:serviceaccounts", "system:serviceaccounts:ns", AUTHENTICATED],
                   "extra": {"scopes": ["a", "b"]}})
        );
    }

    #[test]
    fn service_account_and_node_names_are_recognised_as_kube_does() {
        assert_eq!(
            split_service_account("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        for not in [
            "system:serviceaccount:ns",
            "system:serviceaccount:ns:sa:x",
            "system:serviceaccount:Ns:sa",
            "system:serviceaccount::sa",
            "system:serviceaccounts:ns:sa",
        ] {
            assert_eq!(split_service_account(not), None, "{not}");
        }
        assert_eq!(node_name("system:node:node-1"), Some("node-1"));
        assert_eq!(node_name("system:node:Bad_Name"), None);
        assert_eq!(node_name("node-1"), None);
    }
}
