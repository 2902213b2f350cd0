//! Bootstrap tokens (`<id>.<secret>`), as kube-apiserver's `--enable-bootstrap-token-auth` authenticates them:
//! Secret `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`, not being deleted, with
//! the same `token-id` and `token-secret`, `usage-bootstrap-authentication: "true"` and an `expiration` (if any)
//! still ahead, stands for user `system:bootstrap:<id>` in group `system:bootstrappers` and the groups of
//! `auth-extra-groups` (each `system:bootstrappers:...`). Agents register with them (`karmadactl register`).

use base64::Engine;
use serde_json::Value;

use super::UserInfo;
use super::user::AUTHENTICATED;
use flotilla_store::{ResKey, Store};

/// The Secret type of bootstrap tokens.
pub const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// The group of every bootstrap token's user.
pub const BOOTSTRAPPERS: &str = "system:bootstrappers";

/// `<id>.<secret>`: six and sixteen lower-case letters and digits.
fn split(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let ok = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (ok(id, 6) && ok(secret, 16)).then_some((id, secret))
}

fn data(secret: &Value, key: &str) -> Option<String> {
    let encoded = secret.pointer(&format!("/data/{key}"))?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// Whether `group` may be a bootstrap token's extra group.
fn valid_extra_group(group: &str) -> bool {
    group
        .strip_prefix("system:bootstrappers:")
        .is_some_and(|rest| {
            !rest.is_empty()
                && rest.len() <= 256
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-')
                && rest
                    .bytes()
                    .last()
                    .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Compares two secrets in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The user bootstrap token `token` stands for at `now` (seconds since the epoch), if it is one and valid.
pub fn authenticate(store: &Store, token: &str, now: i64) -> Option<UserInfo> {
    let (id, secret) = split(token)?;
    let stored = store.get(
        &ResKey::new("", "secrets"),
        "kube-system",
        &format!("bootstrap-token-{id}"),
    )?;
    if crate::meta::is_deleting(&stored)
        || stored.get("type").and_then(Value::as_str) != Some(SECRET_TYPE)
    {
        return None;
    }
    if data(&stored, "token-id").as_deref() != Some(id)
        || !same(&data(&stored, "token-secret")?, secret)
    {
        return None;
    }
    if let Some(expiration) = data(&stored, "expiration") {
        let at: jiff::Timestamp = expiration.parse().ok()?;
        if at.as_second() <= now {
            return None;
        }
    }
    if data(&stored, "usage-bootstrap-authentication").as_deref() != Some("true") {
        return None;
    }
    let mut groups = vec![BOOTSTRAPPERS.to_string()];
    if let Some(extra) = data(&stored, "auth-extra-groups") {
        for group in extra.split(',').map(str::trim).filter(|g| !g.is_empty()) {
            if !valid_extra_group(group) {
                return None;
            }
            groups.push(group.to_string());
        }
    }
    groups.push(AUTHENTICATED.to_string());
    Some(UserInfo {
        username: format!("system:bootstrap:{id}"),
        groups,
        ..UserInfo::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_extra_groups_have_kubes_shapes() {
        assert_eq!(
            split("abcdef.0123456789abcdef"),
            Some(("abcdef", "0123456789abcdef"))
        );
        assert_eq!(split("ABCDEF.0123456789abcdef"), None);
        assert_eq!(split("abcdef.0123456789abcde"), None);
        assert!(valid_extra_group(
            "system:bootstrappers:karmada:default-cluster-token"
        ));
        assert!(!valid_extra_group("system:masters"));
        assert!(!valid_extra_group("system:bootstrappers:"));
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}
