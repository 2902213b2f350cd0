//! `clusters/{name}/proxy/{path}`: the caller's request, authorized by the control plane, passed to the
//! member's API server as the caller (Karmada's `ProxyREST.Connect` and `ConnectCluster`), or, for the name
//! `*`, to every cluster ([`aggregate`]). Requests are forwarded and their answers streamed ([`forward`]);
//! requests to switch protocols (exec, attach, port-forward) are upgraded end to end ([`upgrade`]).
//!
//! Guarantees: nothing reaches a member before the control plane allowed the caller the verb on
//! `clusters/proxy` of that cluster; the member sees the impersonator's token and the caller's name and
//! groups, never the caller's own credentials or the front proxy's identity headers, upgrades included; a
//! member that does not answer is a 503 naming the cluster.

mod aggregate;
mod forward;
mod member;
mod upgrade;

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use http::Request;
use hyper::upgrade::OnUpgrade;
use tokio_util::sync::CancellationToken;

pub(crate) use member::{Clients, Connections};

use self::forward::{Target, forward, is_upgrade};
use crate::authn::FrontProxy;
use crate::authz::Authorizer;
use crate::cache::Members;
use crate::error::RequestError;
use crate::names;
use crate::user::UserInfo;
use flotilla_apimachinery::request_info::verb_for;

/// What the proxy needs.
pub(crate) struct Proxy {
    /// The control plane, as this server (for `clusters/*/proxy` with a path naming no resource). Both
    /// clients are the server's own: an upgrade to the control plane, which nothing sends, gets whatever
    /// answer the control plane gives a request whose `Connection` HTTP/2 dropped.
    pub(crate) control_plane: Clients,
    /// The front-proxy settings (which headers carry identities).
    pub(crate) front_proxy: FrontProxy,
    /// Asks the control plane who may use which proxy.
    pub(crate) authorizer: Authorizer,
    /// The Clusters and their Secrets.
    pub(crate) members: Arc<Members>,
    /// Member clients.
    pub(crate) connections: Connections,
    /// Cancelled when the server stops: upgraded connections end then.
    pub(crate) shutdown: CancellationToken,
}

impl Proxy {
    /// Answers `request` for `path` (below `clusters/{cluster}/proxy`, empty or starting with `/`) as `user`.
    ///
    /// # Errors
    /// Forbidden, the cluster's connection errors (Karmada's texts), or the member unreachable.
    pub(crate) async fn serve(
        &self,
        user: &UserInfo,
        cluster: &str,
        path: &str,
        request: Request<Body>,
    ) -> Result<Response, RequestError> {
        let verb = verb_for(request.method().as_str());
        self.authorizer.authorize_proxy(user, verb, cluster).await?;
        // hyper hands a request its upgrade only on an HTTP/1.1 connection: refuse before any member is asked.
        if is_upgrade(request.headers()) && request.extensions().get::<OnUpgrade>().is_none() {
            return Err(RequestError::NotUpgradable {
                cluster: cluster.to_owned(),
            });
        }
        if cluster == names::ALL_CLUSTERS {
            return aggregate::serve(self, user, path, request).await;
        }
        let found = self.members.cluster(cluster).await?;
        let clients = self.connections.connect(&self.members, &found).await?;
        let query = request.uri().query().unwrap_or_default().to_owned();
        let target = Target {
            clients: &clients,
            path_and_query: path_and_query(&clean_join(path), &query),
            identity: user.member_impersonation_headers(),
            cluster,
        };
        self.pass(target, request).await
    }

    /// Sends `request` to `target`: upgraded end to end when it asks to switch protocols, forwarded otherwise.
    async fn pass(
        &self,
        target: Target<'_>,
        request: Request<Body>,
    ) -> Result<Response, RequestError> {
        if is_upgrade(request.headers()) {
            upgrade::upgrade(target, &self.front_proxy, &self.shutdown, request).await
        } else {
            forward(target, &self.front_proxy, request).await
        }
    }
}

/// `path` as Go's `path.Join(location.Path, path)` leaves it below the member's base URL: `.` and `..`
/// resolved, repeated and trailing slashes dropped, always starting with `/`.
pub(crate) fn clean_join(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    format!("/{}", segments.join("/"))
}

/// A path with the query, if any.
pub(crate) fn path_and_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned_as_go_joins_them() {
        for (given, expected) in [
            ("", "/"),
            ("/", "/"),
            ("/api", "/api"),
            ("/api/v1/", "/api/v1"),
            ("//api//v1", "/api/v1"),
            ("/api/./v1/../v2", "/api/v2"),
            ("/../../etc", "/etc"),
        ] {
            assert_eq!(clean_join(given), expected, "{given:?}");
        }
        assert_eq!(path_and_query("/api", ""), "/api");
        assert_eq!(
            path_and_query("/api", "watch=1&x=%20"),
            "/api?watch=1&x=%20"
        );
    }
}
