//! Bound ServiceAccount tokens, what the `serviceaccounts/<name>/token` subresource issues (`kubectl create
//! token`): JWTs carrying upstream's claims (`sub`, `aud`, `exp`, `iat`, `iss` and the `kubernetes.io`
//! namespace and ServiceAccount name and uid), signed with HMAC-SHA256 under a key derived from the admin
//! token, so they survive restarts without being stored. kube-apiserver signs with RSA; no client verifies the
//! signature itself, they only read the claims.
//!
//! Guarantees: a token is accepted only with a valid signature, before its expiry, and (checked by the caller
//! against the store) while the ServiceAccount it names still exists with the same uid.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde_json::{Value, json};

/// The issuer and default audience, as a kind cluster's API server names itself.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

/// Who a bound token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The ServiceAccount's namespace.
    pub namespace: String,
    /// The ServiceAccount's name.
    pub name: String,
    /// The ServiceAccount's uid when the token was issued.
    pub uid: String,
}

impl Claims {
    /// The user name the token authenticates as.
    pub fn user(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }
}

fn key(secret: &str) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes())
}

/// Issues a token for `claims`, valid for `audiences` from `now` until `expires` (Unix seconds).
pub(crate) fn issue(
    secret: &str,
    claims: &Claims,
    audiences: &[String],
    now: i64,
    expires: i64,
) -> String {
    let payload = json!({
        "aud": audiences, "exp": expires, "iat": now, "nbf": now, "iss": ISSUER, "sub": claims.user(),
        "kubernetes.io": {"namespace": claims.namespace,
                          "serviceaccount": {"name": claims.name, "uid": claims.uid}},
    });
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(HEADER),
        URL_SAFE_NO_PAD.encode(payload.to_string())
    );
    let tag = hmac::sign(&key(secret), signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
}

/// The claims of a token this server issued that is still within its lifetime, `None` for anything else.
pub(crate) fn verify(secret: &str, token: &str, now: i64) -> Option<Claims> {
    let (signed, tag) = token.rsplit_once('.')?;
    let (header, payload) = signed.split_once('.')?;
    if URL_SAFE_NO_PAD.decode(header).ok()? != HEADER.as_bytes() {
        return None;
    }
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    hmac::verify(&key(secret), signed.as_bytes(), &tag).ok()?;
    let payload: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    if payload.get("exp").and_then(Value::as_i64)? <= now {
        return None;
    }
    let k8s = payload.get("kubernetes.io")?;
    let s = |p: &str| k8s.pointer(p).and_then(Value::as_str).map(str::to_string);
    Some(Claims {
        namespace: s("/namespace")?,
        name: s("/serviceaccount/name")?,
        uid: s("/serviceaccount/uid")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            namespace: "ns".into(),
            name: "builder".into(),
            uid: "u-1".into(),
        }
    }

    #[test]
    fn tokens_verify_until_they_expire_and_only_under_their_key() {
        let token = issue("secret", &claims(), &[ISSUER.to_string()], 1_000, 4_600);
        assert_eq!(verify("secret", &token, 2_000), Some(claims()));
        assert_eq!(verify("secret", &token, 4_600), None);
        assert_eq!(verify("other", &token, 2_000), None);
        let mut forged = token.clone();
        forged.replace_range(token.len() - 3.., "AAA");
        assert_eq!(verify("secret", &forged, 2_000), None);
        assert_eq!(verify("secret", "not.a.token", 2_000), None);
        assert_eq!(claims().user(), "system:serviceaccount:ns:builder");
    }
}
