//! Authorization of every request after authentication, impersonation and the in-flight limit, as
//! kube-apiserver's filter chain orders them: the request's attributes, read from its method, path and
//! query as kube's `RequestInfoFactory` reads them, go to the registry's authorizer
//! (`flotilla_registry::auth::rbac`), and a denial is answered with kube-apiserver's 403.

use http::Method;
use percent_encoding::percent_decode_str;

use crate::route::Query;
use flotilla_registry::auth::UserInfo;
use flotilla_registry::auth::rbac::{self, Attributes};
use flotilla_registry::status::ApiError;
use flotilla_store::Store;

/// Subresources of a Namespace itself (`/api/v1/namespaces/<name>/status`), not resources inside it.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The value a field selector requires `field` to equal exactly, if it does.
fn exact_field(selector: &str, field: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let (key, value) = term
            .split_once("==")
            .or_else(|| term.split_once('='))
            .filter(|(k, _)| !k.ends_with('!'))?;
        (key.trim() == field).then(|| value.trim().to_string())
    })
}

/// Whether `name` may be a path segment (kube's `IsValidPathSegmentName`).
fn valid_segment(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('%')
}

/// The attributes kube-apiserver authorizes a request by.
pub(crate) fn attributes(
    user: &UserInfo,
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Attributes {
    let non_resource = Attributes {
        user: user.clone(),
        verb: method.as_str().to_ascii_lowercase(),
        path: path.to_string(),
        ..Attributes::default()
    };
    let parts: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .map(|p| percent_decode_str(p).decode_utf8_lossy().into_owned())
        .collect();
    let (group, rest) = match parts.as_slice() {
        [prefix, version, rest @ ..] if prefix == "api" && !rest.is_empty() => {
            ("", (version, rest))
        }
        [prefix, group, version, rest @ ..] if prefix == "apis" && !rest.is_empty() => {
            (group.as_str(), (version, rest))
        }
        _ => return non_resource,
    };
    let (version, mut rest) = rest;
    let mut attrs = Attributes {
        resource_request: true,
        api_group: group.to_string(),
        api_version: version.clone(),
        path: path.to_string(),
        ..non_resource
    };
    let special = matches!(rest[0].as_str(), "watch" | "proxy");
    if special {
        if rest.len() < 2 {
            // kube refuses to guess; its filter then answers as for an unparseable request.
            return attrs;
        }
        attrs.verb = rest[0].clone();
        rest = &rest[1..];
    } else {
        attrs.verb = match method.as_str() {
            "POST" => "create",
            "GET" | "HEAD" => "get",
            "PUT" => "update",
            "PATCH" => "patch",
            "DELETE" => "delete",
            _ => "",
        }
        .to_string();
    }
    if rest[0] == "namespaces" && rest.len() > 1 {
        attrs.namespace = rest[1].clone();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2].as_str()) {
            rest = &rest[2..];
        }
    }
    attrs.resource = rest[0].clone();
    if let Some(name) = rest.get(1) {
        attrs.name = name.clone();
    }
    if let Some(sub) = rest.get(2)
        && attrs.verb != "proxy"
    {
        attrs.subresource = sub.clone();
    }
    if attrs.name.is_empty() && attrs.verb == "get" {
        let query = Query::parse(query);
        let watch = match query.flag("watch") {
            Ok(flag) => flag == Some(true),
            Err(_) => !matches!(
                query.get("watch").map(str::to_ascii_lowercase).as_deref(),
                Some("false" | "0")
            ),
        };
        attrs.verb = if watch { "watch" } else { "list" }.to_string();
        if let Some(name) = query
            .get("fieldSelector")
            .and_then(|s| exact_field(s, "metadata.name"))
            .filter(|n| valid_segment(n))
        {
            attrs.name = name;
        }
    }
    if attrs.name.is_empty() && attrs.verb == "delete" {
        attrs.verb = "deletecollection".to_string();
    }
    attrs
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
