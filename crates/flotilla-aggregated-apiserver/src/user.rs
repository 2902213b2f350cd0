//! The caller's identity, as the front proxy asserted it, and the impersonation headers that pass it on.

use std::collections::BTreeMap;

use http::{HeaderMap, HeaderName, HeaderValue};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::names;

/// Who is calling: kube's `user.Info`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct UserInfo {
    /// The user name.
    pub(crate) name: String,
    /// The user's uid, often empty.
    pub(crate) uid: String,
    /// The user's groups, in the order asserted.
    pub(crate) groups: Vec<String>,
    /// Extra attributes (keys lower-case, as the request-header authenticator records them).
    pub(crate) extra: BTreeMap<String, Vec<String>>,
}

/// Characters escaped in an `Impersonate-Extra-` key, as client-go escapes them: everything but the
/// characters legal in a header name that are not `%`.
const EXTRA_KEY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'*')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

impl UserInfo {
    /// Whether the user is in `group`.
    pub(crate) fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// Every header that impersonates this user fully (user, uid, groups, extra), for the control plane,
    /// where RBAC and admission must see the caller exactly.
    pub(crate) fn impersonation_headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        append(&mut headers, "impersonate-user", &self.name);
        if !self.uid.is_empty() {
            append(&mut headers, "impersonate-uid", &self.uid);
        }
        for group in &self.groups {
            append(&mut headers, "impersonate-group", group);
        }
        for (key, values) in &self.extra {
            let name = format!("impersonate-extra-{}", utf8_percent_encode(key, EXTRA_KEY));
            for value in values {
                append(&mut headers, &name, value);
            }
        }
        headers
    }

    /// The headers that impersonate this user in a member, as Karmada's proxy sets them: the user name and the
    /// groups but `system:authenticated` and `system:unauthenticated`; no uid, no extra.
    pub(crate) fn member_impersonation_headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        append(&mut headers, "impersonate-user", &self.name);
        for group in &self.groups {
            if !names::SKIPPED_GROUPS.contains(&group.as_str()) {
                append(&mut headers, "impersonate-group", group);
            }
        }
        headers
    }
}

/// Appends a header, leaving out a value no header can carry (the front proxy could not have sent it either).
fn append(headers: &mut HeaderMap, name: &str, value: &str) {
    match (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        (Ok(name), Ok(value)) => {
            headers.append(name, value);
        }
        _ => tracing::debug!(
            header = name,
            "left out an impersonation header that is not valid"
        ),
    }
}

/// Whether `name` is one of the headers that carry or assert an identity: credentials and impersonation.
pub(crate) fn is_identity_header(name: &HeaderName) -> bool {
    let name = name.as_str();
    name == "authorization" || name == "proxy-authorization" || name.starts_with("impersonate-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tom() -> UserInfo {
        UserInfo {
            name: "tom".into(),
            uid: "42".into(),
            groups: vec![
                "devs".into(),
                "system:authenticated".into(),
                "system:unauthenticated".into(),
            ],
            extra: [(
                "scopes.example.com/a b".to_owned(),
                vec!["x".to_owned(), "y".to_owned()],
            )]
            .into(),
        }
    }

    fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect()
    }

    #[test]
    fn the_control_plane_sees_every_attribute() {
        let headers = tom().impersonation_headers();
        assert_eq!(values(&headers, "impersonate-user"), ["tom"]);
        assert_eq!(values(&headers, "impersonate-uid"), ["42"]);
        assert_eq!(
            values(&headers, "impersonate-group"),
            ["devs", "system:authenticated", "system:unauthenticated"]
        );
        assert_eq!(
            values(&headers, "impersonate-extra-scopes.example.com%2fa%20b"),
            ["x", "y"]
        );
    }

    #[test]
    fn members_see_the_name_and_groups_only_as_karmada_sends_them() {
        let headers = tom().member_impersonation_headers();
        assert_eq!(values(&headers, "impersonate-user"), ["tom"]);
        assert_eq!(values(&headers, "impersonate-group"), ["devs"]);
        assert_eq!(headers.len(), 2);
    }

    #[test]
    fn identity_headers_are_recognised() {
        for name in [
            "authorization",
            "impersonate-user",
            "impersonate-extra-x",
            "proxy-authorization",
        ] {
            assert!(is_identity_header(&HeaderName::from_static(name)), "{name}");
        }
        assert!(!is_identity_header(&HeaderName::from_static("accept")));
    }
}
