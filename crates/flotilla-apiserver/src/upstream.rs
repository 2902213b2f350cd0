//! Forwarding a caller's request to a backend over HTTPS, as kube's upgrade-aware proxy does, for both places the
//! server proxies: APIServices' services (`crate::aggregator::proxy`) and kubelets (`crate::handlers::connect`).
//!
//! The caller's request goes on with its method, headers and body streamed, less what a proxy must not pass on:
//! hop-by-hop headers (RFC 7230, and those its `Connection` names), the caller's credentials (`Authorization`,
//! consumed by authentication) and impersonation headers (consumed by impersonation), with the caller's address
//! appended to `X-Forwarded-For` ([`outgoing`]). An HTTP/1.1 upgrade (exec, attach, port-forward) keeps its
//! `Connection` and `Upgrade` headers and goes without a body; once the backend answers `101 Switching
//! Protocols`, the two connections are joined until both sides are done ([`answer`]). Other answers stream back
//! with their hop-by-hop headers removed.
//!
//! The query is re-encoded as Go's `url.Values.Encode` writes it ([`encode_query`], [`encode_pairs`]), and
//! transport failures are worded as Go's `net/http` words them ([`describe`]), as the backend's callers see them
//! from a real kube-apiserver.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::upgrade::OnUpgrade;
use hyper_rustls::{FixedServerNameResolver, HttpsConnector};
use hyper_util::client::legacy::{Client, connect::HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rustls::DigitallySignedStruct;
use rustls::SignatureScheme;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

use crate::authn::impersonation::is_impersonation_header;

/// A boxed error of a streamed body.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The body of a request sent to a backend.
pub(crate) type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// A pooled client of backends.
pub(crate) type BackendClient = Client<HttpsConnector<HttpConnector>, ProxyBody>;

/// The pooled client both proxies reach their backends with, over `tls`: HTTPS only, HTTP/1.1 (which upgrades
/// need), Go's 30 s dial timeout and 90 s idle connections; the backend's certificate is checked against
/// `server_name` when given (an APIService's service), else against the URL's host.
pub(crate) fn https_client(
    tls: rustls::ClientConfig,
    server_name: Option<ServerName<'static>>,
) -> BackendClient {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(Duration::from_secs(30)));
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only();
    let builder = match server_name {
        Some(name) => builder.with_server_name_resolver(FixedServerNameResolver::new(name)),
        None => builder,
    };
    let https = builder.enable_http1().wrap_connector(http);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .build(https)
}

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

/// What Go's `url.QueryEscape` leaves alone.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The query as Go's `url.Values.Encode` writes it (kube-aggregator re-encodes `req.URL.Query()` so): pairs sorted
/// by key.
pub(crate) fn encode_query(raw: Option<&str>) -> String {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    encode_pairs(&pairs)
}

/// `pairs` encoded as Go's `url.Values.Encode` writes them: sorted by key (values of one key in their order), each
/// escaped as `url.QueryEscape` escapes.
pub(crate) fn encode_pairs(pairs: &[(String, String)]) -> String {
    let mut pairs: Vec<&(String, String)> = pairs.iter().collect();
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

/// Whether the request asks to switch protocols.
pub(crate) fn is_upgrade(headers: &HeaderMap) -> bool {
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

/// A caller's request made ready for a backend; its URI is still the caller's (path and query), for the caller
/// to point at the backend.
pub(crate) struct Outgoing {
    /// The request to send.
    pub request: Request<ProxyBody>,
    /// The caller's side of an upgrade it asked for and its connection can make (HTTP/1.1 only), to join to the
    /// backend's once that switches.
    pub upgrade: Option<OnUpgrade>,
}

/// The caller's request (`parts`, `body`) as it goes to a backend: see the module documentation.
pub(crate) fn outgoing<B>(mut parts: http::request::Parts, body: B) -> Outgoing
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let upgrade = is_upgrade(&parts.headers)
        .then(|| parts.extensions.remove::<OnUpgrade>())
        .flatten();
    let mut headers = std::mem::take(&mut parts.headers);
    strip_hop_by_hop(&mut headers, upgrade.is_some());
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
    let body: ProxyBody = if upgrade.is_some() {
        Empty::new().map_err(|e| match e {}).boxed_unsync()
    } else {
        body.map_err(Into::into).boxed_unsync()
    };
    let mut request = Request::new(body);
    *request.method_mut() = parts.method;
    *request.uri_mut() = parts.uri;
    *request.headers_mut() = headers;
    Outgoing { request, upgrade }
}

/// The backend's `response` as the caller gets it: a switch of protocols joins the caller's connection (`upgrade`)
/// to the backend's on a task of its own and answers the `101` with the backend's headers; anything else streams
/// back without its hop-by-hop headers.
pub(crate) fn answer(
    mut response: http::Response<Incoming>,
    upgrade: Option<OnUpgrade>,
) -> Response {
    if response.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(caller) = upgrade
    {
        let backend = hyper::upgrade::on(&mut response);
        tokio::spawn(async move {
            if let (Ok(caller), Ok(backend)) = (caller.await, backend.await) {
                let (mut caller, mut backend) = (TokioIo::new(caller), TokioIo::new(backend));
                let _ = tokio::io::copy_bidirectional(&mut caller, &mut backend).await;
            }
        });
        let (parts, _) = response.into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    let (mut parts, body) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers, false);
    Response::from_parts(parts, Body::new(body))
}

/// A transport error as Go's `net/http` words the common ones (`dial tcp <addr>: connect: connection refused`),
/// the error chain otherwise: what kube-aggregator's 503 answers, `FailedDiscoveryCheck` messages and kube's
/// `error dialing backend` carry.
pub(crate) fn describe(err: &(dyn std::error::Error + 'static), addr: &str) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut chain = Vec::new();
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return format!("dial tcp {addr}: connect: connection refused");
                }
                std::io::ErrorKind::TimedOut => return format!("dial tcp {addr}: i/o timeout"),
                _ => {}
            }
        }
        let text = e.to_string();
        if !text.is_empty() && chain.last() != Some(&text) {
            chain.push(text);
        }
        source = e.source();
    }
    chain.join(": ")
}

/// A backend whose certificate is not checked (an APIService's `insecureSkipTLSVerify`, a kubelet when no kubelet
/// CA is configured): any certificate is accepted; the handshake's signatures are still verified.
#[derive(Debug)]
pub(crate) struct NoVerification(pub(crate) Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
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
        let pairs = [
            ("stdout".to_string(), "1".to_string()),
            ("command".to_string(), "echo".to_string()),
            ("command".to_string(), "hello world".to_string()),
        ];
        assert_eq!(
            encode_pairs(&pairs),
            "command=echo&command=hello+world&stdout=1"
        );
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
    fn credentials_and_impersonation_stay_with_the_proxy() {
        let request = Request::builder()
            .uri("/api/v1/namespaces/ns/pods/p/exec?command=true")
            .header(header::AUTHORIZATION, "Bearer secret")
            .header("impersonate-user", "jane")
            .header(header::HOST, "127.0.0.1:6443")
            .header(header::ACCEPT, "*/*")
            .header(header::CONNECTION, "Upgrade")
            .header(header::UPGRADE, "websocket")
            .body(Body::empty())
            .expect("request");
        let (mut parts, body) = request.into_parts();
        parts
            .extensions
            .insert(crate::authn::ClientAddr(([10, 0, 0, 7], 5000).into()));
        let out = outgoing(parts, body);
        assert!(
            out.upgrade.is_none(),
            "a request built here has no connection to switch"
        );
        let headers = out.request.headers();
        assert!(headers.get(header::AUTHORIZATION).is_none());
        assert!(headers.get("impersonate-user").is_none());
        assert!(headers.get(header::HOST).is_none());
        assert!(
            headers.get(header::UPGRADE).is_none(),
            "no upgrade without a connection to switch"
        );
        assert_eq!(headers["x-forwarded-for"], "10.0.0.7");
        assert_eq!(headers[header::ACCEPT], "*/*");
        assert_eq!(out.request.uri().query(), Some("command=true"));
    }
}
