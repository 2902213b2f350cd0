//! Who a request comes from, as kube-apiserver's authentication filters decide it before anything else runs,
//! on every path: a client certificate issued by the cluster CA names its user first ([`certificate_user`]),
//! then the bearer token of the `Authorization` header ([`authenticate`]; the tokens themselves are the
//! registry's, `flotilla_registry::auth`), and a request with neither is `system:anonymous`; then impersonation
//! of another user ([`impersonation`]), and the address the connection came from ([`ClientAddr`]).
//! Authorization follows (`crate::authz`) and decides what the anonymous user may do, as RBAC's
//! `system:public-info-viewer` lets everyone read `/healthz`, `/livez`, `/readyz` and `/version`.

pub(crate) mod impersonation;

use std::net::SocketAddr;

use flotilla_registry::auth::{self, UserInfo};
use flotilla_registry::context::Ctx;
use flotilla_registry::status::ApiError;
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

/// Who a request without a client certificate comes from, as kube-apiserver's authenticator union with
/// `--anonymous-auth=true` (its default) decides it from the `Authorization` header: `Ok(Some)` for a bearer
/// token an authenticator accepts, `Ok(None)` when the header carries no bearer token (missing, another scheme
/// such as `Basic`, or an empty token), which makes the request anonymous ([`UserInfo::anonymous`]), and 401 for
/// a bearer token no authenticator accepts (on every path, `/healthz` too, as kube answers it).
///
/// # Errors
/// 401 Unauthorized for a bearer token that authenticates nobody.
pub(crate) fn authenticate(ctx: &Ctx, header: Option<&str>) -> Result<Option<UserInfo>, ApiError> {
    let Some(token) = auth::bearer(header) else {
        return Ok(None);
    };
    authenticate_token(ctx, token)
        .map(Some)
        .ok_or_else(ApiError::unauthorized)
}

/// The user a bearer token authenticates: the admin, a ServiceAccount token Secret's account, a bootstrap
/// token's user, or a bound token's account while that ServiceAccount still exists with the uid it was issued
/// for. A ServiceAccount's user carries the account's uid, as kube-apiserver's token authenticators give it.
pub(crate) fn authenticate_token(ctx: &Ctx, token: &str) -> Option<UserInfo> {
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
    let mut user = ctx.tokens.authenticate_token(token)?;
    if let Some((namespace, name)) = auth::user::split_service_account(&user.username) {
        user.uid = uid_of(namespace, name).unwrap_or_default();
    }
    Some(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> (tempfile::TempDir, Ctx) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ctx = Ctx::new(
            flotilla_store::Store::open(dir.path()).expect("store"),
            auth::Tokens::load_or_create(dir.path()).expect("tokens"),
            String::new(),
            "127.0.0.1:6443".into(),
            tokio_util::sync::CancellationToken::new(),
        );
        (dir, ctx)
    }

    #[test]
    fn no_bearer_token_is_anonymous_and_a_refused_one_is_unauthorized() {
        let (_dir, ctx) = ctx();
        let admin = format!("Bearer {}", ctx.tokens.admin());
        assert_eq!(
            authenticate(&ctx, Some(&admin)).expect("accepted"),
            Some(UserInfo::admin())
        );
        for anonymous in [
            None,
            Some(""),
            Some("Basic YWxpY2U6c2VjcmV0"),
            Some("Bearer "),
        ] {
            assert_eq!(
                authenticate(&ctx, anonymous).expect("no token"),
                None,
                "{anonymous:?}"
            );
        }
        let refused = authenticate(&ctx, Some("Bearer not-a-token")).expect_err("refused");
        assert_eq!((refused.code, refused.reason), (401, "Unauthorized"));
    }
}
