//! Which handler answers a request, and the authentication every handler but the health checks needs.
//!
//! Served: `/healthz`, `/livez`, `/readyz`, `/version` (to anyone, as the always-allowed paths of an
//! aggregated server); `/apis`, `/apis/cluster.karmada.io`, `/apis/cluster.karmada.io/v1alpha1`,
//! `/openapi/v2`, `/openapi/v3`, `/openapi/v3/apis/cluster.karmada.io/v1alpha1`; Clusters at
//! `.../v1alpha1/clusters[/{name}[/status]]` and the deprecated `.../v1alpha1/watch/clusters[/{name}]`; and
//! `.../v1alpha1/clusters/{name}/proxy[/{path}]`. Anything else is kube's plain `404 page not found`.

use std::sync::Arc;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{Method, Request, StatusCode, header};
use kube::Client;
use serde_json::json;

use crate::authn::{FrontProxy, PeerCertificates};
use crate::cache::Members;
use crate::error::{RequestError, json_response};
use crate::proxy::Proxy;
use crate::{discovery, names, openapi, storage};

/// What every request may use.
pub(crate) struct Shared {
    /// The control plane, as this server.
    pub(crate) client: Client,
    /// Front-proxy authentication.
    pub(crate) front_proxy: FrontProxy,
    /// The Clusters and their Secrets.
    pub(crate) members: Arc<Members>,
    /// The cluster proxy.
    pub(crate) proxy: Proxy,
}

/// What a path asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// Answered to anyone.
    Public(Public),
    /// Answered to an authenticated caller.
    Api(Api<'a>),
    /// Nothing served.
    NotFound,
}

/// The paths answered to anyone.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Public {
    /// `/healthz` or `/livez`.
    Live,
    /// `/readyz`.
    Ready,
    /// `/version`.
    Version,
}

/// The paths answered to an authenticated caller.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Api<'a> {
    /// `/apis`.
    Apis,
    /// `/apis/cluster.karmada.io`.
    Group,
    /// `/apis/cluster.karmada.io/v1alpha1`.
    Resources,
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiV3Index,
    /// `/openapi/v3/apis/cluster.karmada.io/v1alpha1`.
    OpenApiV3,
    /// A Cluster path below `/apis/cluster.karmada.io/v1alpha1/`.
    Storage(&'a str),
    /// `clusters/{cluster}/proxy{path}`.
    Proxy {
        /// The cluster, or `*`.
        cluster: &'a str,
        /// Empty, or starting with `/`.
        path: &'a str,
    },
}

impl Route<'_> {
    /// Whether the route only reads (discovery, OpenAPI, health): other methods are refused.
    fn reads_only(&self) -> bool {
        matches!(
            self,
            Route::Public(_)
                | Route::Api(
                    Api::Apis
                        | Api::Group
                        | Api::Resources
                        | Api::OpenApiV2
                        | Api::OpenApiV3Index
                        | Api::OpenApiV3
                )
        )
    }
}

/// The route of `path`.
pub(crate) fn route(path: &str) -> Route<'_> {
    let group_version = format!("/apis/{}/{}", names::GROUP, names::VERSION);
    if let Some(rest) = path
        .strip_prefix(group_version.as_str())
        .and_then(|rest| rest.strip_prefix("/clusters/"))
        && let Some((cluster, after)) = rest.split_once('/')
        && let Some(proxied) = after.strip_prefix(names::PROXY)
        && !cluster.is_empty()
        && (proxied.is_empty() || proxied.starts_with('/'))
    {
        return Route::Api(Api::Proxy {
            cluster,
            path: proxied,
        });
    }
    let trimmed = match path.trim_end_matches('/') {
        "" => "/",
        trimmed => trimmed,
    };
    match trimmed {
        "/healthz" | "/livez" => return Route::Public(Public::Live),
        "/readyz" => return Route::Public(Public::Ready),
        "/version" => return Route::Public(Public::Version),
        "/apis" => return Route::Api(Api::Apis),
        "/openapi/v2" => return Route::Api(Api::OpenApiV2),
        "/openapi/v3" => return Route::Api(Api::OpenApiV3Index),
        _ => {}
    }
    if trimmed == format!("/apis/{}", names::GROUP) {
        return Route::Api(Api::Group);
    }
    if trimmed == group_version {
        return Route::Api(Api::Resources);
    }
    if trimmed == format!("/openapi/v3{group_version}") {
        return Route::Api(Api::OpenApiV3);
    }
    let Some(rest) = trimmed
        .strip_prefix(group_version.as_str())
        .and_then(|rest| rest.strip_prefix('/'))
    else {
        return Route::NotFound;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let cluster_path = match parts.as_slice() {
        ["watch", rest @ ..] => rest,
        all => all,
    };
    match cluster_path {
        [names::RESOURCE] | [names::RESOURCE, _] => Route::Api(Api::Storage(rest)),
        [names::RESOURCE, _, "status"] if parts[0] != "watch" => Route::Api(Api::Storage(rest)),
        _ => Route::NotFound,
    }
}

/// Answers one request.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request<Body>) -> Response {
    let path = request.uri().path().to_owned();
    let route = route(&path);
    if route.reads_only() && request.method() != Method::GET && request.method() != Method::HEAD {
        return (StatusCode::METHOD_NOT_ALLOWED, "405: Method Not Allowed").into_response();
    }
    let api = match route {
        Route::Public(Public::Live) => return (StatusCode::OK, "ok").into_response(),
        Route::Public(Public::Ready) => return ready(&shared),
        Route::Public(Public::Version) => return json_response(StatusCode::OK, &version()),
        Route::NotFound => {
            return (
                StatusCode::NOT_FOUND,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "404 page not found\n",
            )
                .into_response();
        }
        Route::Api(api) => api,
    };
    let peer = request
        .extensions()
        .get::<PeerCertificates>()
        .cloned()
        .unwrap_or_default();
    let user = match shared.front_proxy.authenticate(&peer, request.headers()) {
        Ok(user) => user,
        Err(error) => return error.into_response(),
    };
    let document = |doc: serde_json::Value| json_response(StatusCode::OK, &doc);
    let answered = match api {
        Api::Apis => Ok(discovery::apis(request.headers())),
        Api::Group => Ok(document(discovery::group())),
        Api::Resources => Ok(document(discovery::resource_list())),
        Api::OpenApiV2 => openapi::v2(&shared.client).await.map(document),
        Api::OpenApiV3Index => openapi::v3_index(&shared.client).await.map(document),
        Api::OpenApiV3 => openapi::v3(&shared.client).await.map(document),
        Api::Storage(rest) => {
            let rest = rest.to_owned();
            storage::pass_through(&shared.client, &user, &rest, request).await
        }
        Api::Proxy { cluster, path } => {
            let (cluster, path) = (cluster_name(cluster), path.to_owned());
            shared.proxy.serve(&user, &cluster, &path, request).await
        }
    };
    answered.unwrap_or_else(RequestError::into_response)
}

/// The cluster a proxy path names, percent-decoded as kube's RequestInfo reads names from the decoded path:
/// kube-apiserver's aggregator passes `clusters/*/proxy` on as `clusters/%2A/proxy`. The proxied path itself is
/// passed on as it came, for the member to decode once.
fn cluster_name(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// `/readyz`: ready once the front-proxy settings are read and the Clusters listed.
fn ready(shared: &Shared) -> Response {
    let checks = [
        ("front-proxy-authentication", shared.front_proxy.ready()),
        ("clusters-synced", shared.members.synced()),
    ];
    if checks.iter().all(|(_, ok)| *ok) {
        return (StatusCode::OK, "ok").into_response();
    }
    let mut text = String::new();
    for (name, ok) in checks {
        if ok {
            text.push_str(&format!("[+]{name} ok\n"));
        } else {
            text.push_str(&format!("[-]{name} failed: reason withheld\n"));
        }
    }
    text.push_str("readyz check failed\n");
    (StatusCode::INTERNAL_SERVER_ERROR, text).into_response()
}

/// `/version`: Flotilla's version in kube's `version.Info` shape.
fn version() -> serde_json::Value {
    json!({
        "major": "0",
        "minor": "0",
        "gitVersion": concat!("v", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_encoded_cluster_name_is_decoded() {
        assert_eq!(cluster_name("%2A"), "*");
        assert_eq!(cluster_name("member1"), "member1");
    }

    use super::*;

    #[test]
    fn paths_route_to_their_handlers() {
        let gv = "/apis/cluster.karmada.io/v1alpha1";
        for (path, expected) in [
            ("/healthz", Route::Public(Public::Live)),
            ("/livez", Route::Public(Public::Live)),
            ("/readyz", Route::Public(Public::Ready)),
            ("/version", Route::Public(Public::Version)),
            ("/apis", Route::Api(Api::Apis)),
            ("/apis/", Route::Api(Api::Apis)),
            ("/apis/cluster.karmada.io", Route::Api(Api::Group)),
            (gv, Route::Api(Api::Resources)),
            ("/openapi/v2", Route::Api(Api::OpenApiV2)),
            ("/openapi/v3", Route::Api(Api::OpenApiV3Index)),
            (
                "/openapi/v3/apis/cluster.karmada.io/v1alpha1",
                Route::Api(Api::OpenApiV3),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters",
                Route::Api(Api::Storage("clusters")),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/m1",
                Route::Api(Api::Storage("clusters/m1")),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/m1/status",
                Route::Api(Api::Storage("clusters/m1/status")),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/watch/clusters",
                Route::Api(Api::Storage("watch/clusters")),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/watch/clusters/m1",
                Route::Api(Api::Storage("watch/clusters/m1")),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy",
                Route::Api(Api::Proxy {
                    cluster: "m1",
                    path: "",
                }),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/",
                Route::Api(Api::Proxy {
                    cluster: "m1",
                    path: "/",
                }),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/*/proxy/api/v1/pods/",
                Route::Api(Api::Proxy {
                    cluster: "*",
                    path: "/api/v1/pods/",
                }),
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxyx",
                Route::NotFound,
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/clusters/m1/scale",
                Route::NotFound,
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/watch/clusters/m1/status",
                Route::NotFound,
            ),
            (
                "/apis/cluster.karmada.io/v1alpha1/namespaces/x/clusters",
                Route::NotFound,
            ),
            ("/apis/cluster.karmada.io/storage/clusters", Route::NotFound),
            ("/api/v1/pods", Route::NotFound),
            ("/", Route::NotFound),
        ] {
            assert_eq!(route(path), expected, "{path}");
        }
    }
}
