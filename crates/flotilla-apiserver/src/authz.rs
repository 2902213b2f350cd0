//! Authorization of every request after authentication, impersonation and the in-flight limit, as
//! kube-apiserver's filter chain orders them: the request's attributes, read from its method, path and
//! query as kube's `RequestInfoFactory` reads them, go to the registry's authorizer
//! (`flotilla_registry::auth::rbac`), and a denial is answered with kube-apiserver's 403.

use flotilla_apimachinery::request_info;
use http::Method;

use flotilla_registry::auth::UserInfo;
use flotilla_registry::auth::rbac::{self, Attributes};
use flotilla_registry::status::ApiError;
use flotilla_store::Store;

/// The attributes kube-apiserver authorizes a request by: its `RequestInfo` and user.
pub(crate) fn attributes(
    user: &UserInfo,
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Attributes {
    let info = request_info::parse(method.as_str(), path, query.unwrap_or(""));
    Attributes {
        user: user.clone(),
        verb: info.verb,
        resource_request: info.is_resource_request,
        path: path.to_string(),
        namespace: info.namespace,
        api_group: info.api_group,
        api_version: info.api_version,
        resource: info.resource,
        subresource: info.subresource,
        name: info.name,
    }
}

/// Authorizes `attrs`.
///
/// # Errors
/// kube-apiserver's 403 when no rule allows the request.
pub(crate) fn authorize(store: &Store, attrs: &Attributes) -> Result<(), ApiError> {
    let decision = rbac::authorize(store, attrs);
    if decision.allowed {
        return Ok(());
    }
    Err(rbac::forbidden(attrs, &decision.reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(method: Method, path: &str, query: Option<&str>) -> Attributes {
        attributes(&UserInfo::default(), &method, path, query)
    }

    #[test]
    fn resource_requests_read_as_kube_reads_them() {
        let a = attrs(Method::GET, "/api/v1/namespaces/ns1/pods", None);
        assert_eq!(
            (a.verb.as_str(), a.namespace.as_str(), a.resource.as_str()),
            ("list", "ns1", "pods")
        );
        let a = attrs(
            Method::GET,
            "/api/v1/namespaces/ns1/pods",
            Some("watch=true"),
        );
        assert_eq!(a.verb, "watch");
        let a = attrs(
            Method::GET,
            "/api/v1/pods",
            Some("fieldSelector=metadata.name%3Dp1"),
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("list", "p1"));
        let a = attrs(
            Method::DELETE,
            "/apis/apps/v1/namespaces/ns1/deployments",
            None,
        );
        assert_eq!(
            (a.verb.as_str(), a.api_group.as_str()),
            ("deletecollection", "apps")
        );
        let a = attrs(
            Method::PUT,
            "/apis/apps/v1/namespaces/ns1/deployments/d/scale",
            None,
        );
        assert_eq!(
            (a.verb.as_str(), a.name.as_str(), a.subresource.as_str()),
            ("update", "d", "scale")
        );
        // A Namespace is in itself, and its status is its subresource.
        let a = attrs(Method::PUT, "/api/v1/namespaces/ns1/status", None);
        assert_eq!(
            (
                a.namespace.as_str(),
                a.resource.as_str(),
                a.name.as_str(),
                a.subresource.as_str()
            ),
            ("ns1", "namespaces", "ns1", "status")
        );
        let a = attrs(Method::GET, "/api/v1/watch/namespaces/ns1/pods/p", None);
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("watch", "p"));
    }

    #[test]
    fn discovery_and_other_paths_are_non_resource_requests() {
        for path in [
            "/api",
            "/api/v1",
            "/apis/apps",
            "/apis/apps/v1",
            "/version",
            "/openapi/v2",
        ] {
            let a = attrs(Method::GET, path, None);
            assert!(!a.resource_request, "{path}");
            assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", path));
        }
    }
}
