//! `clusters/{name}/proxy/{path}`: the caller's request, authorized by the control plane, passed to the
//! member's API server as the caller (Karmada's `ProxyREST.Connect` and `ConnectCluster`), or, for the name
//! `*`, to every cluster ([`aggregate`]).
//!
//! Guarantees: nothing reaches a member before the control plane allowed the caller the verb on
//! `clusters/proxy` of that cluster; the member sees the impersonator's token and the caller's name and
//! groups, never the caller's own credentials or the front proxy's identity headers; a member that does
//! not answer is a 503 naming the cluster.

mod aggregate;
mod forward;
mod member;

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use http::Request;
use kube::Client;

pub(crate) use member::Connections;

use self::forward::{Target, forward, is_upgrade};
use crate::authn::FrontProxy;
use crate::authz::Authorizer;
use crate::cache::Members;
use crate::error::RequestError;
use crate::names;
use crate::request_info::verb_for;
use crate::user::UserInfo;

/// What the proxy needs.
pub(crate) struct Proxy {
    /// The control plane, as this server.
    pub(crate) control_plane: Client,
    /// The front-proxy settings (which headers carry identities).
    pub(crate) front_proxy: FrontProxy,
    /// Asks the control plane who may use which proxy.
    pub(crate) authorizer: Authorizer,
    /// The Clusters and their Secrets.
    pub(crate) members: Arc<Members>,
    /// Member clients.
    pub(crate) connections: Connections,
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
        let verb = verb_for(request.method());
        self.authorizer.authorize_proxy(user, verb, cluster).await?;
        if is_upgrade(request.headers()) {
            return Err(RequestError::UpgradeUnsupported {
                cluster: cluster.to_owned(),
            });
        }
        if cluster == names::ALL_CLUSTERS {
            return aggregate::serve(self, user, path, request).await;
        }
        let found = self.members.cluster(cluster).await?;
        let client = self.connections.connect(&self.members, &found).await?;
        let query = request.uri().query().unwrap_or_default().to_owned();
        let target = Target {
            client: &client,
            path_and_query: path_and_query(&clean_join(path), &query),
            identity: user.member_impersonation_headers(),
            cluster,
        };
        forward(target, &self.front_proxy, request).await
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
