//! Forwarding a request to an APIService's service, as kube-aggregator's proxy handler does.
//!
//! Method, path, query (re-encoded as Go's `url.Values.Encode` writes it: keys sorted) and body go to the
//! service as they came, streamed both ways (a watch streams, a large body is never buffered). The caller's
//! credentials (`Authorization`), impersonation headers and any `X-Remote-User`, `X-Remote-Uid`,
//! `X-Remote-Group` and `X-Remote-Extra-*` headers are dropped; the identity the server authenticated (after
//! impersonation) is sent in those `X-Remote-*` headers instead, over TLS with the front-proxy client
//! certificate, with `X-Forwarded-For` (the client appended), `X-Forwarded-Host`, `X-Forwarded-Proto` and
//! `X-Forwarded-Uri` as kube's proxy transport sets them; CORS headers of the answer are dropped. HTTP/1.1
//! upgrades (exec, attach, port-forward) are passed through once the backend answers 101.
//!
//! Failures are answered as kube-aggregator answers them: plain text, not Status JSON. An APIService whose
//! `Available` condition is not `True`, or whose service cannot be resolved, is `503 service unavailable`; a
//! client that cannot be built is 500 with the reason; a backend that cannot be reached is 503 `error trying to
//! reach service: <error>`.

use super::Aggregator;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, StatusCode, Uri};
use hyper::body::Incoming;

use super::Registered;
use crate::upstream::{self, BoxError, Outgoing, ProxyBody, describe, encode_query};
use flotilla_registry::auth::UserInfo;

/// How long a discovery request (`/apis/<group>/<version>`) may take, as kube-aggregator allows.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Response headers kube's proxy drops (`removeCORSHeaders`).
const CORS: [&str; 4] = [
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
];

/// Why a request did not reach the backend.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Not available, or no address: `503 service unavailable`.
    Unavailable,
    /// The APIService's client could not be built: 500 with the reason.
    Transport(String),
    /// The backend could not be reached or did not answer in time: 503 with the error (`error trying to reach
    /// service: ...`).
    Backend(String),
}

impl Failure {
    /// The plain-text answer kube-aggregator gives (Go's `http.Error`).
    pub(crate) fn into_response(self) -> Response {
        match self {
            Failure::Unavailable => text(StatusCode::SERVICE_UNAVAILABLE, "service unavailable"),
            Failure::Transport(msg) => text(StatusCode::INTERNAL_SERVER_ERROR, &msg),
            Failure::Backend(msg) => text(StatusCode::SERVICE_UNAVAILABLE, &msg),
        }
    }

    /// A one-line description for logs and discovery errors.
    pub(crate) fn message(&self) -> &str {
        match self {
            Failure::Unavailable => "service unavailable",
            Failure::Transport(m) | Failure::Backend(m) => m,
        }
    }
}

/// A response as Go's `http.Error` writes one.
pub(crate) fn text(code: StatusCode, msg: &str) -> Response {
    let mut r = Response::new(Body::from(format!("{msg}\n")));
    *r.status_mut() = code;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// `key` escaped as client-go escapes an extra key into a header name (`%XX` for every byte that is not an
/// HTTP token character, and for `%`).
pub(crate) fn escape_extra_key(key: &str) -> String {
    let mut out = String::new();
    for b in key.bytes() {
        let token = b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
        if token {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Replaces whatever identity headers a request carries with `user`'s `X-Remote-*` headers (client-go's
/// `SetAuthProxyHeaders`, which kube-aggregator uses).
pub(crate) fn set_identity(headers: &mut HeaderMap, user: &UserInfo) {
    let stale: Vec<HeaderName> = headers
        .keys()
        .filter(|k| {
            let k = k.as_str();
            k == "x-remote-user"
                || k == "x-remote-uid"
                || k == "x-remote-group"
                || k.starts_with("x-remote-extra-")
        })
        .cloned()
        .collect();
    for k in stale {
        headers.remove(k);
    }
    let mut add = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(n, v);
        }
    };
    add("X-Remote-User", &user.username);
    if !user.uid.is_empty() {
        add("X-Remote-Uid", &user.uid);
    }
    for g in &user.groups {
        add("X-Remote-Group", g);
    }
    for (k, values) in &user.extra {
        for v in values {
            add(&format!("X-Remote-Extra-{}", escape_extra_key(k)), v);
        }
    }
}

/// Sends `req` (whose URI holds path and query only) to the APIService's service as `user`.
///
/// # Errors
/// The [`Failure`] kube-aggregator would answer with.
pub(crate) async fn send(
    agg: &Aggregator,
    target: &Registered,
    mut req: Request<ProxyBody>,
    user: &UserInfo,
    timeout: Option<Duration>,
) -> Result<http::Response<Incoming>, Failure> {
    if !target.available {
        return Err(Failure::Unavailable);
    }
    let transport = target
        .transport
        .as_ref()
        .map_err(|e| Failure::Transport(e.clone()))?;
    let Some(service) = target.spec.service.as_ref() else {
        return Err(Failure::Unavailable);
    };
    let host = match super::resolve::resolve(&agg.registry.store, service) {
        Ok(host) => host,
        Err(e) => {
            tracing::warn!(apiservice = %target.spec.name, error = %e, "failed to resolve the service");
            return Err(Failure::Unavailable);
        }
    };
    let path = req.uri().path().to_string();
    let query = encode_query(req.uri().query());
    let forwarded = [
        ("x-forwarded-uri", path.as_str()),
        ("x-forwarded-host", host.as_str()),
        ("x-forwarded-proto", "https"),
    ];
    for (name, value) in forwarded {
        if let Ok(v) = HeaderValue::from_str(value) {
            req.headers_mut().insert(name, v);
        }
    }
    let uri = if query.is_empty() {
        format!("https://{host}{path}")
    } else {
        format!("https://{host}{path}?{query}")
    };
    *req.uri_mut() = uri
        .parse::<Uri>()
        .map_err(|e| Failure::Backend(e.to_string()))?;
    set_identity(req.headers_mut(), user);
    let call = transport.client().request(req);
    let result = match timeout {
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(r) => r,
            Err(_) => {
                return Err(Failure::Backend(
                    "error trying to reach service: context deadline exceeded".into(),
                ));
            }
        },
        None => call.await,
    };
    let mut response = result.map_err(|e| {
        Failure::Backend(format!(
            "error trying to reach service: {}",
            describe(&e, &host)
        ))
    })?;
    for name in CORS {
        response.headers_mut().remove(name);
    }
    Ok(response)
}

/// Forwards one client request to the APIService it belongs to and streams the answer back (an upgrade is
/// joined once the backend switches, `crate::upstream`).
pub(crate) async fn forward<B>(
    agg: &Arc<Aggregator>,
    target: Arc<Registered>,
    parts: http::request::Parts,
    body: B,
    user: &UserInfo,
) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let discovery = parts.uri.path().trim_end_matches('/') == target.spec.path();
    let timeout = discovery.then_some(DISCOVERY_TIMEOUT);
    let Outgoing { request, upgrade } = upstream::outgoing(parts, body);
    match send(agg, &target, request, user, timeout).await {
        Ok(response) => upstream::answer(response, upgrade),
        Err(f) => f.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_headers_are_replaced_with_the_users() {
        let mut h = HeaderMap::new();
        h.insert("x-remote-user", HeaderValue::from_static("mallory"));
        h.append("x-remote-group", HeaderValue::from_static("system:masters"));
        h.insert("x-remote-extra-evil", HeaderValue::from_static("1"));
        h.insert("x-remote-uid", HeaderValue::from_static("0"));
        let mut user = UserInfo {
            username: "jane".into(),
            uid: String::new(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            ..UserInfo::default()
        };
        user.extra
            .insert("example.com/Team%".into(), vec!["a".into(), "b".into()]);
        set_identity(&mut h, &user);
        fn all<'a>(h: &'a HeaderMap, k: &str) -> Vec<&'a str> {
            h.get_all(k)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect()
        }
        assert_eq!(all(&h, "x-remote-user"), ["jane"]);
        assert!(all(&h, "x-remote-uid").is_empty(), "no uid, no header");
        assert_eq!(all(&h, "x-remote-group"), ["dev", "system:authenticated"]);
        assert!(all(&h, "x-remote-extra-evil").is_empty());
        assert_eq!(all(&h, "x-remote-extra-example.com%2FTeam%25"), ["a", "b"]);
        user.uid = "u-1".into();
        set_identity(&mut h, &user);
        assert_eq!(all(&h, "x-remote-uid"), ["u-1"]);
        assert_eq!(all(&h, "x-remote-group"), ["dev", "system:authenticated"]);
    }

    #[test]
    fn failures_are_plain_text_as_kube_aggregator_writes_them() {
        let r = Failure::Unavailable.into_response();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            r.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert_eq!(r.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}
