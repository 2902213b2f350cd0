//! Who a request speaks for: the bearer tokens the server accepts (the admin token kept in the data dir, the
//! tokens of ServiceAccount token Secrets, bound tokens ([`bound`])) and the identity each stands for
//! ([`user`]). The server's authentication reads them; the token request handler and the ServiceAccount token
//! controller issue them.

pub mod bootstrap;
pub mod bound;
pub mod rbac;
pub mod user;

pub use user::UserInfo;

use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLock;

use rand::RngCore;

/// The token table.
pub struct Tokens {
    admin: String,
    service_accounts: RwLock<HashMap<String, String>>,
}

/// A random hex token of 32 bytes.
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Tokens {
    /// Loads the admin token from `dir/admin.token`, creating it on first start.
    pub fn load_or_create(dir: &Path) -> std::io::Result<Self> {
        let path = dir.join("admin.token");
        let admin = match std::fs::read_to_string(&path) {
            Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
            _ => {
                let t = random_token();
                std::fs::write(&path, &t)?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
                }
                t
            }
        };
        Ok(Self {
            admin,
            service_accounts: RwLock::new(HashMap::new()),
        })
    }

    /// The admin token.
    pub fn admin(&self) -> &str {
        &self.admin
    }

    /// Issues a bound token ([`bound`]) for a ServiceAccount, signed under the admin token.
    pub fn issue_bound(
        &self,
        claims: &bound::Claims,
        audiences: &[String],
        now: i64,
        expires: i64,
    ) -> String {
        bound::issue(&self.admin, claims, audiences, now, expires)
    }

    /// The claims of a bound token this server issued and that has not expired.
    pub fn verify_bound(&self, token: &str, now: i64) -> Option<bound::Claims> {
        bound::verify(&self.admin, token, now)
    }

    /// The user an `Authorization` header value authenticates through the token table, as
    /// [`Self::authenticate_token`] does for its bearer token.
    pub fn authenticate(&self, header: Option<&str>) -> Option<UserInfo> {
        self.authenticate_token(bearer(header)?)
    }

    /// The user a bearer token authenticates through the token table (the admin token and ServiceAccount token
    /// Secrets), if any; a ServiceAccount's uid is left for the caller to fill from the store. Bound tokens need
    /// the store: the server's authentication checks them.
    pub fn authenticate_token(&self, token: &str) -> Option<UserInfo> {
        if constant_time_eq(token.as_bytes(), self.admin.as_bytes()) {
            return Some(UserInfo::admin());
        }
        let name = self
            .service_accounts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned()?;
        let (namespace, account) = user::split_service_account(&name)?;
        Some(UserInfo::service_account(namespace, account, ""))
    }

    /// Adds one ServiceAccount token to the table without touching the others.
    pub fn grant(&self, token: &str, user: &str) {
        self.service_accounts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.to_string(), user.to_string());
    }

    /// Replaces the ServiceAccount token table (token → `system:serviceaccount:<ns>:<sa>`).
    pub fn set_service_account_tokens(&self, tokens: HashMap<String, String>) {
        *self
            .service_accounts
            .write()
            .unwrap_or_else(|e| e.into_inner()) = tokens;
    }
}

/// The token of an `Authorization` header value, as kube-apiserver's bearer token authenticator reads it: the
/// value without surrounding white space, split at its first two spaces, whose first part is `bearer` in any
/// case and whose second, the token, is not empty (a third part is ignored). Anything else carries no token, so
/// the request goes on to the next authenticator (in the end, the anonymous one) rather than failing.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let mut parts = header?.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_token_persists_and_authenticates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Tokens::load_or_create(dir.path()).expect("create");
        let again = Tokens::load_or_create(dir.path()).expect("load");
        assert_eq!(t.admin(), again.admin());
        assert_eq!(t.admin().len(), 64);
        let header = format!("Bearer {}", t.admin());
        assert_eq!(t.authenticate(Some(&header)), Some(UserInfo::admin()));
        assert!(t.authenticate(Some("Bearer nope")).is_none());
        assert!(t.authenticate(None).is_none());
        assert_eq!(t.authenticate_token(t.admin()), Some(UserInfo::admin()));
        t.set_service_account_tokens(HashMap::from([(
            "sa-tok".into(),
            "system:serviceaccount:ns:sa".into(),
        )]));
        assert_eq!(
            t.authenticate(Some("Bearer sa-tok")).map(|u| u.username),
            Some("system:serviceaccount:ns:sa".to_string())
        );
    }

    #[test]
    fn bearer_tokens_are_read_as_kube_reads_them() {
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("  bEaReR abc  ")), Some("abc"));
        // A third part is ignored; a second space makes the token empty.
        assert_eq!(bearer(Some("Bearer abc def")), Some("abc"));
        assert_eq!(bearer(Some("Bearer  abc")), None);
        for none in [
            "",
            "Bearer",
            "Bearer ",
            "Basic YWxpY2U6c2VjcmV0",
            "Bearerabc",
            "Token abc",
        ] {
            assert_eq!(bearer(Some(none)), None, "{none:?}");
        }
        assert_eq!(bearer(None), None);
    }
}
