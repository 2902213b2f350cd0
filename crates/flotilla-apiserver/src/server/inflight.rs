//! kube-apiserver's `--max-requests-inflight` and `--max-mutating-requests-inflight` (its `WithMaxInFlightLimit`
//! filter): what a request counts against, and the answer to one over its limit.
//!
//! As upstream: the limit applies after authentication and impersonation, `system:masters` is exempt, and
//! long-running requests (watches, `proxy`, and the `attach`, `exec`, `log`, `portforward` and `proxy`
//! subresources) are never counted; a request is mutating unless it is a get, list or watch (`GET` or `HEAD`).

use axum::response::Response;
use flotilla_registry::auth::UserInfo;
use flotilla_registry::auth::user::MASTERS;
use flotilla_registry::status::ApiError;
use flotilla_serving::inflight::Class;
use http::{HeaderValue, Method, header};
use serde_json::{Map, json};

use crate::route::Query;
use crate::wire::error_response;

/// The subresources kube-apiserver treats as long-running.
const LONG_RUNNING_SUBRESOURCES: &[&str] = &["attach", "exec", "log", "portforward", "proxy"];

/// What the request `method path?query` from `user` counts against.
pub(crate) fn class(
    method: &Method,
    path: &str,
    query: Option<&str>,
    user: Option<&UserInfo>,
) -> Class {
    if user.is_some_and(|u| u.groups.iter().any(|g| g == MASTERS)) || long_running(path, query) {
        return Class::Exempt;
    }
    if method == Method::GET || method == Method::HEAD {
        Class::ReadOnly
    } else {
        Class::Mutating
    }
}

fn long_running(path: &str, query: Option<&str>) -> bool {
    if Query::parse(query).flag("watch") == Ok(Some(true)) {
        return true;
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segments.as_slice() {
        ["api", _, rest @ ..] | ["apis", _, _, rest @ ..] => rest,
        _ => return false,
    };
    // The verb in the path (`/api/v1/watch/...`, `/api/v1/proxy/...`), else the subresource after the name
    // (and after the namespace for namespaced objects).
    let subresource = match rest {
        ["watch" | "proxy", ..] => return true,
        ["namespaces", _, _, _, sub, ..] => Some(*sub),
        ["namespaces", ..] => None,
        [_, _, sub, ..] => Some(*sub),
        _ => None,
    };
    subresource.is_some_and(|sub| LONG_RUNNING_SUBRESOURCES.contains(&sub))
}

/// kube-apiserver's answer over the limit: 429 with `Retry-After: 1`.
pub(crate) fn too_many_requests() -> Response {
    let mut details = Map::new();
    details.insert("retryAfterSeconds".into(), json!(1));
    let error = ApiError::new(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
    )
    .with_details(details);
    let mut response = error_response(&error);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(groups: &[&str]) -> UserInfo {
        let mut user = UserInfo::admin();
        user.groups = groups.iter().map(|g| (*g).to_owned()).collect();
        user
    }

    #[test]
    fn requests_count_as_kube_apiserver_counts_them() {
        use Class::{Exempt, Mutating, ReadOnly};
        let alice = user(&["system:authenticated"]);
        let admin = user(&[MASTERS]);
        // Method, path, query, user, and the class expected.
        type Case<'a> = (
            Method,
            &'a str,
            Option<&'a str>,
            Option<&'a UserInfo>,
            Class,
        );
        let cases: &[Case] = &[
            (
                Method::GET,
                "/api/v1/namespaces/a/pods",
                None,
                Some(&alice),
                ReadOnly,
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods",
                Some("watch=true"),
                Some(&alice),
                Exempt,
            ),
            (
                Method::GET,
                "/api/v1/watch/namespaces/a/pods",
                None,
                Some(&alice),
                Exempt,
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods/p/log",
                None,
                Some(&alice),
                Exempt,
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/services/s/proxy/x",
                None,
                Some(&alice),
                Exempt,
            ),
            (
                Method::GET,
                "/apis/cluster.karmada.io/v1alpha1/clusters/m/proxy/api",
                None,
                Some(&alice),
                Exempt,
            ),
            (
                Method::GET,
                "/api/v1/nodes/n/proxy/metrics",
                None,
                Some(&alice),
                Exempt,
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods/p/status",
                None,
                Some(&alice),
                ReadOnly,
            ),
            (
                Method::GET,
                "/api/v1/namespaces/log",
                None,
                Some(&alice),
                ReadOnly,
            ),
            (Method::GET, "/healthz", None, None, ReadOnly),
            (
                Method::POST,
                "/api/v1/namespaces/a/pods/p/exec",
                None,
                Some(&alice),
                Exempt,
            ),
            (
                Method::POST,
                "/api/v1/namespaces/a/configmaps",
                None,
                Some(&alice),
                Mutating,
            ),
            (
                Method::POST,
                "/api/v1/namespaces/a/configmaps",
                None,
                Some(&admin),
                Exempt,
            ),
            (Method::DELETE, "/api/v1/namespaces/a", None, None, Mutating),
        ];
        for (method, path, query, user, expected) in cases {
            assert_eq!(
                class(method, path, *query, *user),
                *expected,
                "{method} {path} {query:?}"
            );
        }
    }

    #[test]
    fn the_refusal_is_a_status_with_retry_after() {
        let response = too_many_requests();
        assert_eq!(response.status(), 429);
        assert_eq!(
            response
                .headers()
                .get(header::RETRY_AFTER)
                .map(|v| v.as_bytes()),
            Some(&b"1"[..])
        );
    }
}
