//! Impersonation (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-<key>`), as
//! kube-apiserver 1.37's filter answers it: constrained impersonation (beta, on by default), which tries its modes
//! in order (associated-node, arbitrary-node, serviceaccount, user-info, legacy) and uses the first that allows,
//! starting with the mode that last allowed the same requester.
//!
//! Authorization is allow-all here, so every authenticated user may impersonate anyone, and a mode allows exactly
//! when it applies: arbitrary-node to a Node user name alone (the Node gets the fixed group `system:nodes`),
//! serviceaccount to a ServiceAccount user name alone, user-info to any other user unless it asks for the empty
//! or the `system:masters` group or for extra keys that are not domain-prefixed paths, legacy always. Legacy
//! keeps the groups asked for (a ServiceAccount without groups gets its ServiceAccount groups); then
//! `system:authenticated` is added (`system:unauthenticated` for `system:anonymous`) unless the groups say
//! otherwise. Which mode a requester used last therefore decides whether a Node user name gets `system:nodes`,
//! as it does in kube-apiserver (an admin who once impersonated `system:masters` stays on legacy).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use http::HeaderMap;
use percent_encoding::percent_decode_str;

use flotilla_registry::auth::user::{self, UserInfo};
use flotilla_registry::status::ApiError;
use flotilla_registry::validation::format::go_quote;

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
    ///
    /// # Errors
    /// 400 BadRequest, worded as kube-apiserver words it, when groups, a uid or extra values are asked for
    /// without a user name.
    pub(crate) fn impersonate(
        &self,
        requester: &UserInfo,
        headers: &HeaderMap,
    ) -> Result<Option<UserInfo>, ApiError> {
        let Some(wanted) = wanted(headers)? else {
            return Ok(None);
        };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let remembered = last.get(&requester.username).copied();
        let mode = match remembered.filter(|m| applies(*m, &wanted)) {
            Some(mode) => mode,
            None => {
                let mode = MODES
                    .into_iter()
                    .find(|m| Some(*m) != remembered && applies(*m, &wanted))
                    .unwrap_or(Mode::Legacy);
                if last.len() >= REMEMBERED {
                    last.clear();
                }
                last.insert(requester.username.clone(), mode);
                mode
            }
        };
        Ok(Some(resolve(mode, wanted)))
    }
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

/// Whether `mode` allows impersonating `wanted` when every authorization check allows.
fn applies(mode: Mode, wanted: &UserInfo) -> bool {
    let only_name = wanted.uid.is_empty() && wanted.groups.is_empty() && wanted.extra.is_empty();
    let node = user::node_name(&wanted.username).is_some();
    let service_account = user::split_service_account(&wanted.username).is_some();
    match mode {
        Mode::ArbitraryNode => only_name && node,
        Mode::ServiceAccount => only_name && service_account,
        Mode::UserInfo => {
            !node
                && !service_account
                && !wanted
                    .groups
                    .iter()
                    .any(|g| g.is_empty() || g == user::MASTERS)
                && wanted.extra.iter().all(|(key, values)| {
                    is_domain_prefixed_path(key) && values.iter().all(|v| !v.is_empty())
                })
        }
        Mode::Legacy => true,
    }
}

/// The user `mode` makes of `wanted`.
fn resolve(mode: Mode, mut wanted: UserInfo) -> UserInfo {
    if mode == Mode::ArbitraryNode {
        wanted.groups = vec![user::NODES.into()];
    } else if let Some((namespace, _)) = user::split_service_account(&wanted.username)
        && wanted.groups.is_empty()
    {
        wanted.groups = user::service_account_groups(namespace);
    }
    if wanted.username == user::ANONYMOUS {
        wanted.ensure_group(user::UNAUTHENTICATED);
    } else if !wanted.groups.iter().any(|g| g == user::UNAUTHENTICATED) {
        wanted.ensure_group(user::AUTHENTICATED);
    }
    wanted
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

    fn impersonated(h: &HeaderMap) -> Result<Option<UserInfo>, ApiError> {
        Impersonation::default().impersonate(&UserInfo::admin(), h)
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
        let (alice, bob) = (
            UserInfo::admin(),
            UserInfo::service_account("ns", "bob", ""),
        );
        let node = headers(&[("Impersonate-User", "system:node:n1")]);
        let groups = |who: &UserInfo, h: &HeaderMap| {
            modes
                .impersonate(who, h)
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
        let u = |extra: &str| UserInfo {
            username: "jane".into(),
            extra: BTreeMap::from([(extra.to_string(), vec!["v".to_string()])]),
            ..UserInfo::default()
        };
        assert!(applies(Mode::UserInfo, &u("example.com/scopes")));
        assert!(!applies(Mode::UserInfo, &u("scopes")));
        assert!(!applies(Mode::UserInfo, &u("Bad_Host/x")));
        assert!(!applies(Mode::UserInfo, &u("example.com/")));
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
