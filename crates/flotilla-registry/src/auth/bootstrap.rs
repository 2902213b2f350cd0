//! Bootstrap tokens (`<id>.<secret>`), as kube-apiserver's `--enable-bootstrap-token-auth` authenticates them:
//! Secret `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`, not being deleted, with
//! the same `token-id` and `token-secret`, `usage-bootstrap-authentication: "true"` and an `expiration` (if any)
//! still ahead, stands for user `system:bootstrap:<id>` in group `system:bootstrappers` and the groups of
//! `auth-extra-groups` (each `system:bootstrappers:...`). Agents register with them (`karmadactl register`).
//!
//! A token with `usage-bootstrap-signing: "true"` also signs the `kubeconfig` of ConfigMap
//! `kube-public/cluster-info` ([`detached_signature`]), which an agent reads anonymously and trusts once it has
//! checked the signature against its own token (the bootstrap signer, `crate::controllers`, keeps them).

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde_json::{Value, json};

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

/// The Secret name prefix of bootstrap tokens (`bootstrap-token-<id>`).
pub const SECRET_PREFIX: &str = "bootstrap-token-";

/// The bytes of `secret`'s data key `key`.
pub(crate) fn data_bytes(secret: &Value, key: &str) -> Option<Vec<u8>> {
    let encoded = secret.pointer(&format!("/data/{key}"))?.as_str()?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
}

fn data(secret: &Value, key: &str) -> Option<String> {
    String::from_utf8(data_bytes(secret, key)?).ok()
}

/// The token id a bootstrap token Secret's name carries (`bootstrap-token-<six lower-case letters or digits>`).
pub fn id_of_name(name: &str) -> Option<&str> {
    let id = name.strip_prefix(SECRET_PREFIX)?;
    (id.len() == 6
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
    .then_some(id)
}

/// How long the bootstrap token of `secret` has left at `now`, as kube's `GetExpiration` reads its `expiration`
/// (RFC 3339): `None` when it has none, zero once it has passed or when it cannot be read.
pub fn time_left(secret: &Value, now: jiff::Timestamp) -> Option<Duration> {
    let raw = data_bytes(secret, "expiration").filter(|b| !b.is_empty())?;
    let at = std::str::from_utf8(&raw)
        .ok()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok());
    let Some(at) = at else {
        return Some(Duration::ZERO);
    };
    let left = at.as_nanosecond() - now.as_nanosecond();
    if left <= 0 {
        return Some(Duration::ZERO);
    }
    // Beyond some 584 years the nanoseconds leave u64; so far ahead, "that long" is as good as exact.
    Some(Duration::from_nanos(
        u64::try_from(left).unwrap_or(u64::MAX),
    ))
}

/// The detached JWS (RFC 7515, appendix F) with which bootstrap token `id.secret` signs `content`, exactly as
/// kube's bootstrap signer writes it and `kubeadm join` or `karmadactl register` recompute it to compare: HS256
/// keyed with the token's secret, the protected header `{"alg":"HS256","kid":"<id>"}` (keys sorted, as
/// go-jose serializes it), header and signature base64url without padding, the payload left out between the
/// two dots.
pub fn detached_signature(content: &[u8], id: &str, secret: &[u8]) -> String {
    // Token ids are lower-case letters and digits, which JSON writes as they are (no escaping to differ in).
    let header = URL_SAFE_NO_PAD.encode(json!({"alg": "HS256", "kid": id}).to_string());
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(content));
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let tag = hmac::sign(&key, signing_input.as_bytes());
    format!("{header}..{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
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

    #[test]
    fn detached_signatures_are_kubes() {
        // Computed with kube's own `jws.ComputeDetachedSignature` (k8s.io/cluster-bootstrap v0.37.2).
        let kubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n    server: https://127.0.0.1:6443\n";
        assert_eq!(
            detached_signature(kubeconfig.as_bytes(), "abcdef", b"0123456789abcdef"),
            "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..FmDd1cUgWwYSBjgJsqLp5-YyHI4LMaBSB3xm-xU6fy0"
        );
        assert_eq!(
            detached_signature(b"", "q1w2e3", b"zyxwvutsrqponmlk"),
            "eyJhbGciOiJIUzI1NiIsImtpZCI6InExdzJlMyJ9..S4Nm0l8QOAArH2inqaPoouqwOftQv2GPd7X5SOZri6Q"
        );
    }

    #[test]
    fn expirations_and_names_read_as_kube_reads_them() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let secret = |expiration: Option<&str>| match expiration {
            Some(e) => json!({"data": {"expiration": b64(e)}}),
            None => json!({"data": {}}),
        };
        let now: jiff::Timestamp = "2030-01-01T00:00:00Z".parse().expect("time");
        assert_eq!(time_left(&secret(None), now), None);
        assert_eq!(time_left(&secret(Some("")), now), None);
        assert_eq!(
            time_left(&secret(Some("2030-01-01T00:01:00Z")), now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            time_left(&secret(Some("2030-01-01T01:00:00+01:00")), now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            time_left(&secret(Some("tomorrow")), now),
            Some(Duration::ZERO)
        );
        assert!(
            time_left(&secret(Some("2999-01-01T00:00:00Z")), now)
                .is_some_and(|left| left > Duration::from_secs(500 * 365 * 86_400))
        );
        assert_eq!(id_of_name("bootstrap-token-abc123"), Some("abc123"));
        for not in [
            "bootstrap-token-ABC123",
            "bootstrap-token-abc12",
            "token-abc123",
            "bootstrap-token-abc1234",
        ] {
            assert_eq!(id_of_name(not), None, "{not}");
        }
    }
}
