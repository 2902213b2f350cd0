//! Who a request comes from, as kube-apiserver's authentication filters decide it before anything else runs:
//! the paths anyone may read, the bearer token of the `Authorization` header (the tokens themselves are the
//! registry's, `flotilla_registry::auth`), impersonation of another user ([`impersonation`]), and the address
//! the connection came from ([`ClientAddr`]); a client certificate issued by the cluster CA names its user first
//! ([`certificate_user`]). Authorization follows (`crate::authz`).

pub(crate) mod impersonation;

use std::net::SocketAddr;

use flotilla_registry::auth::{self, UserInfo};
use flotilla_registry::context::Ctx;
use flotilla_store::ResKey;

/// The address a request came from (Go's `RemoteAddr`), which proxied requests carry in `X-Forwarded-For`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddr(pub SocketAddr);

/// The user a connection's client certificate names (verified against the cluster CA in the TLS handshake), as
/// kube-apiserver's x509 authenticator reads it: the subject's common name, its organizations as groups.
#[derive(Debug, Clone, Default)]
pub(crate) struct CertificateUser(pub Option<UserInfo>);

/// The user of the leaf of `chain`, if the client presented one with a common name.
pub(crate) fn certificate_user(chain: &[rustls_pki_types::CertificateDer<'_>]) -> Option<UserInfo> {
    let leaf = chain.first()?;
    let (_, cert) = x509_parser::parse_x509_certificate(leaf).ok()?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .filter(|cn| !cn.is_empty())?;
    let mut groups: Vec<String> = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect();
    if !groups.iter().any(|g| g == auth::user::AUTHENTICATED) {
        groups.push(auth::user::AUTHENTICATED.to_string());
    }
    Some(UserInfo {
        username: name.to_string(),
        groups,
        ..UserInfo::default()
    })
}

/// Paths anyone may read, as the real `system:public-info-viewer` role allows.
pub(crate) fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/"
    ) || path.starts_with("/healthz/")
        || path.starts_with("/livez/")
        || path.starts_with("/readyz/")
}

/// The user an `Authorization` header value authenticates: the admin, a ServiceAccount token Secret's
/// account, or a bound token's account while that ServiceAccount still exists with the uid it was issued for.
/// A ServiceAccount's user carries the account's uid, as kube-apiserver's token authenticators give it.
pub(crate) fn authenticate(ctx: &Ctx, header: Option<&str>) -> Option<UserInfo> {
    let token = auth::bearer(header)?;
    let accounts = ResKey::new("", "serviceaccounts");
    let uid_of = |namespace: &str, name: &str| {
        let account = ctx.store.get(&accounts, namespace, name)?;
        flotilla_registry::meta::meta_str(&account, "uid").map(str::to_string)
    };
    let now = jiff::Timestamp::now().as_second();
    if let Some(claims) = ctx.tokens.verify_bound(token, now) {
        let uid = uid_of(&claims.namespace, &claims.name)?;
        return (uid == claims.uid)
            .then(|| UserInfo::service_account(&claims.namespace, &claims.name, &uid));
    }
    if let Some(user) = auth::bootstrap::authenticate(&ctx.store, token, now) {
        return Some(user);
    }
    let mut user = ctx.tokens.authenticate(header)?;
    if let Some((namespace, name)) = auth::user::split_service_account(&user.username) {
        user.uid = uid_of(namespace, name).unwrap_or_default();
    }
    Some(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_and_version_are_public() {
        assert!(is_public("/healthz") && is_public("/version") && is_public("/readyz"));
        assert!(!is_public("/api") && !is_public("/apis/apps/v1"));
    }
}
