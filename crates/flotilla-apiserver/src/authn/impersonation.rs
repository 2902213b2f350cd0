//! Impersonation (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-<key>`), as
//! kube-apiserver 1.37's filter answers it: constrained impersonation (beta, on by default), which tries its modes
//! in order (associated-node, arbitrary-node, serviceaccount, user-info, legacy) and uses the first that allows,
//! starting with the mode that last allowed the same requester.
//!
//! A mode applies to some wanted identities only: arbitrary-node to a Node user name alone, serviceaccount to a
//! ServiceAccount user name alone, user-info to any other user, legacy always. A constrained mode then asks
//! the authorizer whether the requester may do this request through it (`impersonate-on:<mode>:<verb>` on the
//! request's own attributes) and may impersonate each part of the identity (`impersonate:<mode>` on `users`,
//! `nodes` or `serviceaccounts`, `groups`, `uids` and `userextras/<key>` in `authentication.k8s.io`), and
//! refuses the empty and the `system:masters` group and extra keys that are not lower-case domain-prefixed
//! paths. Legacy asks for `impersonate` on `users`, `groups` and `serviceaccounts` in the core group and on
//! `uids` and `userextras` in `authentication.k8s.io`. The first error is the answer when no mode allows.
//!
//! A Node impersonated through arbitrary-node gets the fixed group `system:nodes`; legacy keeps the groups
//! asked for (a ServiceAccount without groups gets its ServiceAccount groups); then `system:authenticated` is
//! added (`system:unauthenticated` for `system:anonymous`) unless the groups say otherwise. Which mode a
//! requester used last therefore decides whether a Node user name gets `system:nodes`, as it does in
//! kube-apiserver (an admin who once impersonated `system:masters` stays on legacy).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use http::HeaderMap;
use percent_encoding::percent_decode_str;

use flotilla_registry::auth::rbac::{self, Attributes};
use flotilla_registry::auth::user::{self, UserInfo};
use flotilla_registry::status::ApiError;
use flotilla_registry::validation::format::go_quote;
use flotilla_store::Store;

/// The user to impersonate.
pub(crate) const USER: &str = "impersonate-user";
/// A group to impersonate (repeated).
pub(crate) const GROUP: &str = "impersonate-group";
/// The uid to impersonate.
pub(crate) const UID: &str = "impersonate-uid";
/// The prefix of extra values to impersonate; the rest of the header name is the percent-encoded key.
pub(crate) const EXTRA_PREFIX: &str = "impersonate-extra-";

/// Whether `name` is one of the impersonation headers (which the server consumes and never forwards).
pub(crate) fn is_impersonation_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == USER || name == GROUP || name == UID || name.starts_with(EXTRA_PREFIX)
}

/// The impersonation modes of kube-apiserver that can apply here (associated-node needs a requester bound to a
/// Node, which this server's tokens never are), in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    ArbitraryNode,
    ServiceAccount,
    UserInfo,
    Legacy,
}

const MODES: [Mode; 4] = [
    Mode::ArbitraryNode,
    Mode::ServiceAccount,
    Mode::UserInfo,
    Mode::Legacy,
];

/// How many requesters' last modes are remembered (kube's LRU holds 10,000; this one forgets all at once).
const REMEMBERED: usize = 10_000;

/// The last mode that allowed each requester (by user name), which kube tries first.
#[derive(Debug, Default)]
pub struct Impersonation {
    last: Mutex<HashMap<String, Mode>>,
}

impl Impersonation {
    /// The identity `requester` speaks for when a request carries `headers`: `None` without impersonation.
    /// `request` is what the request asks to do (as `requester`), which the constrained modes authorize too.
    ///
    /// # Errors
    /// 400 BadRequest, worded as kube-apiserver words it, when groups, a uid or extra values are asked for
    /// without a user name; kube-apiserver's 403 from the first mode that applied and was denied when no mode
    /// allows.
    pub(crate) fn impersonate(
        &self,
        store: &Store,
        requester: &UserInfo,
        headers: &HeaderMap,
        request: &Attributes,
    ) -> Result<Option<UserInfo>, ApiError> {
        let Some(wanted) = wanted(headers)? else {
            return Ok(None);
        };
        let remembered = self
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&requester.username)
            .copied();
        let order = remembered
            .into_iter()
            .chain(MODES.into_iter().filter(|m| Some(*m) != remembered));
        let mut first_error = None;
        for mode in order {
            match check(store, mode, requester, &wanted, request) {
                Ok(Some(user)) => {
                    if remembered != Some(mode) {
                        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
                        if last.len() >= REMEMBERED {
                            last.clear();
                        }
                        last.insert(requester.username.clone(), mode);
                    }
                    return Ok(Some(user));
                }
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        // Legacy always applies, so at least one mode answered with an error.
        Err(first_error.unwrap_or_else(|| ApiError::internal("all impersonation modes failed")))
    }
}

impl Mode {
    /// The mode's name in verbs (`impersonate:<name>`, `impersonate-on:<name>:<verb>`); `None` for legacy.
    fn constraint(self) -> Option<&'static str> {
        match self {
            Mode::ArbitraryNode => Some("arbitrary-node"),
            Mode::ServiceAccount => Some("serviceaccount"),
            Mode::UserInfo => Some("user-info"),
            Mode::Legacy => None,
        }
    }
}

/// The group kube's constrained modes authorize identities in; legacy uses the core group for users, groups
/// and ServiceAccounts.
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// Authorizes `attrs`, or kube's 403 for them with the authorizer's reason.
fn allowed(store: &Store, attrs: &Attributes) -> Result<(), ApiError> {
    let decision = rbac::authorize(store, attrs);
    if decision.allowed {
        Ok(())
    } else {
        Err(rbac::forbidden(attrs, &decision.reason))
    }
}

/// Whether `mode` applies to `wanted` at all (kube's mode filters); modes that do not are skipped silently.
fn applies(mode: Mode, wanted: &UserInfo) -> bool {
    let only_name = wanted.uid.is_empty() && wanted.groups.is_empty() && wanted.extra.is_empty();
    let node = user::node_name(&wanted.username).is_some();
    let service_account = user::split_service_account(&wanted.username).is_some();
    match mode {
        Mode::ArbitraryNode => only_name && node,
        Mode::ServiceAccount => only_name && service_account,
        Mode::UserInfo => !node && !service_account,
        Mode::Legacy => true,
    }
}

/// One mode's answer: `None` when it does not apply, the impersonated user when `requester` may impersonate
/// `wanted` this way, or the 403 of the first check that failed.
fn check(
    store: &Store,
    mode: Mode,
    requester: &UserInfo,
    wanted: &UserInfo,
    request: &Attributes,
) -> Result<Option<UserInfo>, ApiError> {
    if !applies(mode, wanted) {
        return Ok(None);
    }
    let constraint = mode.constraint();
    if let Some(name) = constraint {
        // The requester must also be allowed to do this very request through this mode.
        let on = Attributes {
            user: requester.clone(),
            verb: format!("impersonate-on:{name}:{}", request.verb),
            ..request.clone()
        };
        allowed(store, &on)?;
    }
    let verb = constraint.map_or_else(|| "impersonate".to_string(), |c| format!("impersonate:{c}"));
    let identity_group = if constraint.is_some() {
        AUTHENTICATION_GROUP
    } else {
        ""
    };
    let attrs = |group: &str, resource: &str, name: &str| Attributes {
        user: requester.clone(),
        verb: verb.clone(),
        resource_request: true,
        api_group: group.to_string(),
        api_version: "v1".to_string(),
        resource: resource.to_string(),
        name: name.to_string(),
        ..Attributes::default()
    };
    let refuse = |a: &Attributes, why: String| Err(rbac::forbidden(a, &why));
    let mut actual = wanted.clone();
    let mut username = attrs(identity_group, "users", &wanted.username);
    if constraint.is_some()
        && let Some(node) = user::node_name(&wanted.username)
    {
        username.resource = "nodes".into();
        username.name = node.to_string();
        if !wanted.groups.is_empty() {
            let why = format!(
                "when impersonating a node, cannot impersonate groups {}",
                rbac::go_quoted_list(&wanted.groups)
            );
            return refuse(&username, why);
        }
        actual.groups = vec![user::NODES.into()];
    }
    if let Some((namespace, name)) = user::split_service_account(&wanted.username) {
        username.resource = "serviceaccounts".into();
        username.namespace = namespace.to_string();
        username.name = name.to_string();
        if constraint.is_some() && !wanted.groups.is_empty() {
            let why = format!(
                "when impersonating a service account, cannot impersonate groups {}",
                rbac::go_quoted_list(&wanted.groups)
            );
            return refuse(&username, why);
        }
        if wanted.groups.is_empty() {
            actual.groups = user::service_account_groups(namespace);
        }
    }
    allowed(store, &username)?;
    if !wanted.uid.is_empty() {
        allowed(store, &attrs(AUTHENTICATION_GROUP, "uids", &wanted.uid))?;
    }
    if !wanted.groups.is_empty() {
        let mut groups = attrs(identity_group, "groups", "");
        if constraint.is_some() {
            if wanted.groups.iter().any(String::is_empty) {
                return refuse(
                    &groups,
                    "impersonating the empty string group is not allowed".into(),
                );
            }
            if wanted.groups.iter().any(|g| g == user::MASTERS) {
                groups.name = user::MASTERS.into();
                return refuse(
                    &groups,
                    "impersonating the system:masters group is not allowed".into(),
                );
            }
        }
        let all = constraint.is_some() && wanted.groups.len() >= MANY_CHECKS && {
            groups.name = "*".into();
            allowed(store, &groups).is_ok()
        };
        if !all {
            for group in &wanted.groups {
                groups.name = group.clone();
                allowed(store, &groups)?;
            }
        }
    }
    if !wanted.extra.is_empty() {
        let mut extra = attrs(AUTHENTICATION_GROUP, "userextras", "");
        if constraint.is_some()
            && let Some(why) = invalid_extra(&wanted.extra)
        {
            return refuse(&extra, why);
        }
        let values: usize = wanted.extra.values().map(Vec::len).sum();
        let large = wanted.extra.len() >= MANY_CHECKS || values >= MANY_CHECKS;
        let all = constraint.is_some() && large && {
            extra.subresource = "*".into();
            extra.name = "*".into();
            allowed(store, &extra).is_ok()
        };
        if !all {
            for (key, values) in &wanted.extra {
                extra.subresource = key.clone();
                for value in values {
                    extra.name = value.clone();
                    allowed(store, &extra)?;
                }
            }
        }
    }
    if actual.username == user::ANONYMOUS {
        actual.ensure_group(user::UNAUTHENTICATED);
    } else if !actual.groups.iter().any(|g| g == user::UNAUTHENTICATED) {
        actual.ensure_group(user::AUTHENTICATED);
    }
    Ok(Some(actual))
}

/// From this many groups or extra values on, a constrained mode first asks once for all of them (`*`).
const MANY_CHECKS: usize = 4;

/// Why the constrained modes refuse these extra values, if they do.
fn invalid_extra(extra: &BTreeMap<String, Vec<String>>) -> Option<String> {
    extra.iter().find_map(|(key, values)| {
        if key.is_empty() {
            Some("impersonating the empty string key in extra is not allowed".to_string())
        } else if !is_domain_prefixed_path(key) {
            Some(format!(
                "impersonating an invalid key in extra is not allowed: extra.key: Invalid value: {}: must be a domain-prefixed path (such as \"acme.io/foo\")",
                go_quote(key)
            ))
        } else if *key != key.to_lowercase() {
            Some(format!(
                "impersonating a non-lowercase key in extra is not allowed: {}",
                go_quote(key)
            ))
        } else if values.is_empty() {
            Some("impersonating empty values in extra is not allowed".to_string())
        } else if values.iter().any(String::is_empty) {
            Some("impersonating the empty string value in extra is not allowed".to_string())
        } else {
            None
        }
    })
}

/// What the headers ask for, without defaulting (kube's `processImpersonationHeaders`).
fn wanted(headers: &HeaderMap) -> Result<Option<UserInfo>, ApiError> {
    let text = |v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
    let first = |name: &str| headers.get(name).map(text).unwrap_or_default();
    let mut wanted = UserInfo {
        username: first(USER),
        uid: first(UID),
        groups: headers.get_all(GROUP).iter().map(text).collect(),
        extra: BTreeMap::new(),
    };
    let mut has_extra = false;
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            has_extra = true;
            // http lower-cases header names, as kube lower-cases the key before unescaping it.
            let key = match percent_decode_str(key).decode_utf8() {
                Ok(k) => k.into_owned(),
                Err(_) => key.to_string(),
            };
            wanted.extra.entry(key).or_default().push(text(value));
        }
    }
    let has_groups = headers.contains_key(GROUP);
    if !wanted.username.is_empty() {
        return Ok(Some(wanted));
    }
    if has_groups || has_extra || !wanted.uid.is_empty() {
        return Err(ApiError::bad_request(format!(
            "requested {} without impersonating a user name",
            go_syntax(&wanted, has_groups)
        )));
    }
    Ok(None)
}

/// apimachinery's `IsDomainPrefixedPath`: `<DNS-1123 subdomain>/<HTTP path characters>`.
fn is_domain_prefixed_path(key: &str) -> bool {
    let Some((host, path)) = key.split_once('/') else {
        return false;
    };
    !host.is_empty()
        && flotilla_registry::validation::format::is_dns1123_subdomain(host).is_empty()
        && !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c))
}

/// `wanted` as Go's `%#v` prints a `*user.DefaultInfo` (kube's error message quotes it so).
fn go_syntax(wanted: &UserInfo, has_groups: bool) -> String {
    let strings = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| go_quote(s)).collect();
        format!("[]string{{{}}}", items.join(", "))
    };
    let groups = if has_groups {
        strings(&wanted.groups)
    } else {
        "[]string(nil)".to_string()
    };
    let extra = if wanted.extra.is_empty() {
        "map[string][]string(nil)".to_string()
    } else {
        let entries: Vec<String> = wanted
            .extra
            .iter()
            .map(|(k, v)| format!("{}:{}", go_quote(k), strings(v)))
            .collect();
        format!("map[string][]string{{{}}}", entries.join(", "))
    };
    format!(
        "&user.DefaultInfo{{Name:{}, UID:{}, Groups:{groups}, Extra:{extra}}}",
        go_quote(&wanted.username),
        go_quote(&wanted.uid)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                http::HeaderValue::from_str(v).expect("value"),
            );
        }
        h
    }

    /// An empty store: only `system:masters` is allowed anything.
    fn store() -> (tempfile::TempDir, std::sync::Arc<Store>) {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        (dir, store)
    }

    fn impersonated(h: &HeaderMap) -> Result<Option<UserInfo>, ApiError> {
        let (_dir, store) = store();
        Impersonation::default().impersonate(&store, &UserInfo::admin(), h, &Attributes::default())
    }

    fn as_user(pairs: &[(&str, &str)]) -> UserInfo {
        impersonated(&headers(pairs))
            .expect("valid")
            .expect("impersonates")
    }

    #[test]
    fn no_headers_impersonate_nobody() {
        assert_eq!(impersonated(&HeaderMap::new()).expect("valid"), None);
        assert_eq!(
            impersonated(&headers(&[("Impersonate-User", "")])).expect("valid"),
            None
        );
    }

    #[test]
    fn the_mode_a_requester_used_last_decides_a_nodes_groups() {
        let modes = Impersonation::default();
        let (_dir, store) = store();
        let bob = UserInfo {
            username: "bob".into(),
            groups: vec![user::MASTERS.into()],
            ..UserInfo::default()
        };
        let alice = UserInfo::admin();
        let node = headers(&[("Impersonate-User", "system:node:n1")]);
        let groups = |who: &UserInfo, h: &HeaderMap| {
            modes
                .impersonate(&store, who, h, &Attributes::default())
                .expect("valid")
                .expect("impersonates")
                .groups
        };
        assert_eq!(groups(&alice, &node), [user::NODES, user::AUTHENTICATED]);
        // User-info mode does not take a Node, so the node mode is found again.
        groups(&alice, &headers(&[("Impersonate-User", "jane")]));
        assert_eq!(groups(&alice, &node), [user::NODES, user::AUTHENTICATED]);
        // system:masters needs legacy mode, which then allows everything first.
        let masters = headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", user::MASTERS),
        ]);
        assert_eq!(
            groups(&alice, &masters),
            [user::MASTERS, user::AUTHENTICATED]
        );
        assert_eq!(groups(&alice, &node), [user::AUTHENTICATED]);
        // Another requester has its own history.
        assert_eq!(groups(&bob, &node), [user::NODES, user::AUTHENTICATED]);
    }

    #[test]
    fn user_info_mode_takes_only_domain_prefixed_extra_keys() {
        let u = |extra: &str| BTreeMap::from([(extra.to_string(), vec!["v".to_string()])]);
        assert_eq!(invalid_extra(&u("example.com/scopes")), None);
        assert!(invalid_extra(&u("scopes")).is_some());
        assert!(invalid_extra(&u("Bad_Host/x")).is_some());
        assert!(invalid_extra(&u("example.com/")).is_some());
        assert!(invalid_extra(&u("example.com/Scopes")).is_some());
    }

    #[test]
    fn a_requester_without_rights_is_refused_by_the_first_mode_that_applied() {
        let (_dir, store) = store();
        let requester = UserInfo::service_account("ns", "app", "");
        let request = crate::authz::attributes(
            &requester,
            &http::Method::GET,
            "/api/v1/namespaces/ns/pods",
            None,
        );
        let error = Impersonation::default()
            .impersonate(
                &store,
                &requester,
                &headers(&[("Impersonate-User", "jane")]),
                &request,
            )
            .expect_err("refused");
        assert_eq!(error.code, 403);
        assert_eq!(
            error.message,
            "pods is forbidden: User \"system:serviceaccount:ns:app\" cannot impersonate-on:user-info:list \
             resource \"pods\" in API group \"\" in the namespace \"ns\""
        );
    }

    #[test]
    fn a_user_gets_its_groups_and_system_authenticated() {
        let u = as_user(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "dev"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Uid", "u-1"),
        ]);
        assert_eq!(u.username, "jane");
        assert_eq!(u.uid, "u-1");
        assert_eq!(u.groups, ["dev", "ops", user::AUTHENTICATED]);
        assert_eq!(
            as_user(&[("Impersonate-User", "jane")]).groups,
            [user::AUTHENTICATED]
        );
        let explicit = as_user(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", user::AUTHENTICATED),
        ]);
        assert_eq!(explicit.groups, [user::AUTHENTICATED]);
        let unauthenticated = as_user(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", user::UNAUTHENTICATED),
        ]);
        assert_eq!(unauthenticated.groups, [user::UNAUTHENTICATED]);
        assert_eq!(
            as_user(&[("Impersonate-User", user::ANONYMOUS)]).groups,
            [user::UNAUTHENTICATED]
        );
    }

    #[test]
    fn service_accounts_and_nodes_get_their_fixed_groups() {
        assert_eq!(
            as_user(&[("Impersonate-User", "system:serviceaccount:ns1:bot")]).groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                user::AUTHENTICATED
            ]
        );
        // Groups asked for replace a ServiceAccount's.
        let sa = as_user(&[
            ("Impersonate-User", "system:serviceaccount:ns1:bot"),
            ("Impersonate-Group", "g"),
        ]);
        assert_eq!(sa.groups, ["g", user::AUTHENTICATED]);
        assert_eq!(
            as_user(&[("Impersonate-User", "system:node:node-1")]).groups,
            [user::NODES, user::AUTHENTICATED]
        );
        // With a uid the node mode does not apply: the legacy mode keeps the groups asked for (none).
        let node_uid = as_user(&[
            ("Impersonate-User", "system:node:node-1"),
            ("Impersonate-Uid", "x"),
        ]);
        assert_eq!(node_uid.groups, [user::AUTHENTICATED]);
    }

    #[test]
    fn extra_keys_are_lower_cased_and_unescaped() {
        let u = as_user(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-scopes", "edit"),
            ("Impersonate-Extra-Example.com%2Fteam", "a"),
            ("Impersonate-Extra-Bad%zz", "b"),
        ]);
        assert_eq!(u.extra["scopes"], ["view", "edit"]);
        assert_eq!(u.extra["example.com/team"], ["a"]);
        assert_eq!(u.extra["bad%zz"], ["b"]);
    }

    #[test]
    fn groups_uid_or_extra_without_a_user_are_a_bad_request() {
        let err = impersonated(&headers(&[
            ("Impersonate-Group", "g1"),
            ("Impersonate-Group", "g2"),
        ]))
        .expect_err("no user");
        assert_eq!(err.code, 400);
        assert_eq!(err.reason, "BadRequest");
        assert_eq!(
            err.message,
            r#"requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"g1", "g2"}, Extra:map[string][]string(nil)} without impersonating a user name"#
        );
        let err = impersonated(&headers(&[
            ("Impersonate-Uid", "u"),
            ("Impersonate-Extra-K", "v"),
        ]))
        .expect_err("no user");
        assert_eq!(
            err.message,
            r#"requested &user.DefaultInfo{Name:"", UID:"u", Groups:[]string(nil), Extra:map[string][]string{"k":[]string{"v"}}} without impersonating a user name"#
        );
    }

    #[test]
    fn the_headers_are_recognised_in_any_case() {
        assert!(is_impersonation_header("Impersonate-User"));
        assert!(is_impersonation_header("impersonate-extra-x"));
        assert!(!is_impersonation_header("X-Remote-User"));
    }
}
