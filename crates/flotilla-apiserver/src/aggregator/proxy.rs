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
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::Registered;
use super::transport::{BoxError, ProxyBody, describe};
use crate::authn::impersonation::is_impersonation_header;
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

/// Headers a proxy never forwards (RFC 7230 hop-by-hop, as Go's reverse proxy removes them).
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
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

/// What Go's `url.QueryEscape` leaves alone.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The query as kube-aggregator re-encodes it (`req.URL.Query().Encode()`): pairs sorted by key.
pub(crate) fn encode_query(raw: Option<&str>) -> String {
    let mut pairs: Vec<(String, String)> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let escape = |s: &str| {
        utf8_percent_encode(s, QUERY)
            .to_string()
            .replace("%20", "+")
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
        .collect::<Vec<_>>()
        .join("&")
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

/// Whether the request asks to switch protocols (and may: HTTP/1.1 with hyper's upgrade handle).
fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}

/// Removes hop-by-hop headers, and those the `Connection` header names; `keep_upgrade` keeps `Connection`
/// and `Upgrade` for a protocol switch.
fn strip_hop_by_hop(headers: &mut HeaderMap, keep_upgrade: bool) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|t| t.trim().to_ascii_lowercase()))
        .filter(|t| !(t.is_empty() || (keep_upgrade && t == "upgrade")))
        .collect();
    for name in named {
        headers.remove(name.as_str());
    }
    for name in HOP_BY_HOP {
        if keep_upgrade && (name == "connection" || name == "upgrade") {
            continue;
        }
        headers.remove(name);
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

/// Forwards one client request to the APIService it belongs to and streams the answer back.
pub(crate) async fn forward<B>(
    agg: &Arc<Aggregator>,
    target: Arc<Registered>,
    mut parts: http::request::Parts,
    body: B,
    user: &UserInfo,
) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let upgrade = is_upgrade(&parts.headers);
    let on_upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let mut headers = std::mem::take(&mut parts.headers);
    strip_hop_by_hop(&mut headers, upgrade && on_upgrade.is_some());
    headers.remove(header::AUTHORIZATION);
    headers.remove(header::HOST);
    let impersonation: Vec<HeaderName> = headers
        .keys()
        .filter(|k| is_impersonation_header(k.as_str()))
        .cloned()
        .collect();
    for k in impersonation {
        headers.remove(k);
    }
    if let Some(peer) = parts.extensions.get::<crate::authn::ClientAddr>() {
        append_forwarded_for(&mut headers, peer.0);
    }
    let body: ProxyBody = if upgrade && on_upgrade.is_some() {
        Empty::new().map_err(|e| match e {}).boxed_unsync()
    } else {
        body.map_err(Into::into).boxed_unsync()
    };
    let mut req = Request::new(body);
    *req.method_mut() = parts.method.clone();
    *req.uri_mut() = parts.uri.clone();
    *req.headers_mut() = headers;
    let discovery = parts.uri.path().trim_end_matches('/') == target.spec.path();
    let timeout = discovery.then_some(DISCOVERY_TIMEOUT);
    let mut response = match send(agg, &target, req, user, timeout).await {
        Ok(r) => r,
        Err(f) => return f.into_response(),
    };
    if response.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(client) = on_upgrade
    {
        let backend = hyper::upgrade::on(&mut response);
        tokio::spawn(async move {
            if let (Ok(client), Ok(backend)) = (client.await, backend.await) {
                let (mut client, mut backend) = (TokioIo::new(client), TokioIo::new(backend));
                let _ = tokio::io::copy_bidirectional(&mut client, &mut backend).await;
            }
        });
        let (parts, _) = response.into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    let (mut parts, body) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers, false);
    Response::from_parts(parts, Body::new(body))
}

/// Adds the client's address to `X-Forwarded-For`, as Go's reverse proxy does.
fn append_forwarded_for(headers: &mut HeaderMap, peer: SocketAddr) {
    let ip = peer.ip().to_string();
    let value = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(prior) => format!("{prior}, {ip}"),
        None => ip,
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert("x-forwarded-for", v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_reencoded_with_sorted_keys_as_go_does() {
        assert_eq!(
            encode_query(Some(
                "watch=1&labelSelector=a+in+(x,y)&allowWatchBookmarks=true"
            )),
            "allowWatchBookmarks=true&labelSelector=a+in+%28x%2Cy%29&watch=1"
        );
        assert_eq!(encode_query(Some("")), "");
        assert_eq!(encode_query(None), "");
        assert_eq!(encode_query(Some("b=2&a=1&b=1")), "a=1&b=2&b=1");
        assert_eq!(encode_query(Some("x=%7E*")), "x=~%2A");
    }

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
    fn hop_by_hop_headers_go_but_an_upgrade_keeps_its_own() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("Upgrade, X-Hop"),
        );
        h.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(is_upgrade(&h));
        let mut kept = h.clone();
        strip_hop_by_hop(&mut kept, true);
        assert!(kept.contains_key(header::UPGRADE) && kept.contains_key(header::CONNECTION));
        assert!(!kept.contains_key("x-hop") && !kept.contains_key(header::TRANSFER_ENCODING));
        strip_hop_by_hop(&mut h, false);
        assert_eq!(h.len(), 1, "{h:?}");
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
