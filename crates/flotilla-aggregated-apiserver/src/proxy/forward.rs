//! Forwarding one request to a member (or the control plane) and streaming the answer back, as Karmada's
//! proxy handler does: the caller's headers pass but for hop-by-hop ones and every credential and identity
//! header, which are replaced by the impersonation headers given; the query string is kept; both bodies
//! stream. Upgrades go through [`super::upgrade`] instead, which sends the same headers.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use super::member::Clients;
use crate::authn::FrontProxy;
use crate::error::RequestError;
use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, Request, header};
use http_body::Body as _;
use http_body_util::BodyExt;

/// Hop-by-hop headers (RFC 9110 §7.6.1 and the ones Go's reverse proxy also drops) and `Host` (the
/// destination's own is set): never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Where a request goes and as whom.
pub(crate) struct Target<'a> {
    /// The clients reaching the destination (their base URL is prepended to `path`).
    pub(crate) clients: &'a Clients,
    /// The destination's path, starting with `/`, and the query.
    pub(crate) path_and_query: String,
    /// The identity headers to send instead of the caller's.
    pub(crate) identity: HeaderMap,
    /// The cluster named in errors.
    pub(crate) cluster: &'a str,
}

/// Whether a request asks to switch protocols (exec, attach, port-forward): its `Connection` header names
/// `upgrade`, as Go's `httpstream.IsUpgradeRequest` decides (an `Upgrade` header alone is dropped as
/// hop-by-hop, and the request forwarded as any other).
pub(crate) fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| {
            value
                .split(',')
                .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
        })
}

/// Sends `request` to `target` and streams the answer back.
///
/// # Errors
/// [`RequestError::MemberUnreachable`] when the destination does not answer.
pub(crate) async fn forward(
    target: Target<'_>,
    front_proxy: &FrontProxy,
    request: Request<Body>,
) -> Result<Response, RequestError> {
    let (parts, body) = request.into_parts();
    let headers = passed_on(&parts.headers, front_proxy, &target.identity);
    let body = if body.is_end_stream() {
        kube::client::Body::empty()
    } else {
        streaming(body).await
    };
    let answer = send(
        &target,
        &target.clients.requests,
        parts.method,
        headers,
        body,
    )
    .await?;
    Ok(passed_back(answer))
}

/// Sends `method` on the target's path with `headers` and `body` through `client` (one of the target's).
///
/// # Errors
/// [`RequestError::MemberUnreachable`] when the destination does not answer.
pub(super) async fn send(
    target: &Target<'_>,
    client: &kube::Client,
    method: http::Method,
    headers: HeaderMap,
    body: kube::client::Body,
) -> Result<http::Response<kube::client::Body>, RequestError> {
    let mut outgoing = Request::builder()
        .method(method)
        .uri(&target.path_and_query)
        .body(body)
        .map_err(RequestError::Response)?;
    *outgoing.headers_mut() = headers;
    client
        .send(outgoing)
        .await
        .map_err(|source| RequestError::MemberUnreachable {
            cluster: target.cluster.to_owned(),
            source,
        })
}

/// The caller's headers that may reach the destination, followed by `identity`.
pub(super) fn passed_on(
    headers: &HeaderMap,
    front_proxy: &FrontProxy,
    identity: &HeaderMap,
) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for (name, value) in headers {
        if !HOP_BY_HOP.contains(&name.as_str()) && !front_proxy.is_identity_header(name) {
            kept.append(name, value.clone());
        }
    }
    for (name, value) in identity {
        kept.append(name, value.clone());
    }
    kept
}

/// The destination's answer for the caller: status, headers but hop-by-hop ones, the body streamed.
pub(super) fn passed_back(answer: http::Response<kube::client::Body>) -> Response {
    let (parts, body) = answer.into_parts();
    let mut response = Response::new(Body::from_stream(body.into_data_stream()));
    *response.status_mut() = parts.status;
    *response.headers_mut() = without_hop_by_hop(parts.headers);
    response
}

/// `headers` without the hop-by-hop ones.
pub(crate) fn without_hop_by_hop(mut headers: HeaderMap) -> HeaderMap {
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
    headers
}

/// `body` as a kube request body that streams. kube's request body offers no public constructor for a
/// stream, but the response bodies a kube client hands out are streams: so the body is "answered" by a
/// client whose service returns it, and that answer's body is the stream. Nothing is buffered.
async fn streaming(body: Body) -> kube::client::Body {
    let slot = Arc::new(Mutex::new(Some(body)));
    let service = tower::service_fn(move |_: http::Request<kube::client::Body>| {
        let body = slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or_else(Body::empty);
        async move { Ok::<_, Infallible>(http::Response::new(body)) }
    });
    let loopback = kube::Client::new(service, "default");
    match loopback
        .send(Request::new(kube::client::Body::empty()))
        .await
    {
        Ok(answer) => answer.into_body(),
        // The service cannot fail; an empty body is the only other answer possible.
        Err(_) => kube::client::Body::empty(),
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use http::HeaderValue;

    use super::*;

    #[test]
    fn upgrades_are_recognised() {
        let mut headers = HeaderMap::new();
        assert!(!is_upgrade(&headers));
        headers.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, Upgrade"),
        );
        assert!(is_upgrade(&headers));
        let mut websocket = HeaderMap::new();
        websocket.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        assert!(
            !is_upgrade(&websocket),
            "an Upgrade without Connection: upgrade"
        );
        websocket.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        assert!(is_upgrade(&websocket));
    }

    #[tokio::test]
    async fn a_streamed_body_arrives_chunk_by_chunk() {
        let (sender, receiver) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, Infallible>>(1);
        let body = Body::from_stream(tokio_stream_from(receiver));
        let kube_body = streaming(body).await;
        let mut frames = kube_body.into_data_stream();
        sender.send(Ok("first".into())).await.expect("sent");
        // The first chunk is readable before the second is even written.
        let first = frames.next().await.and_then(Result::ok);
        assert_eq!(first.as_deref(), Some(&b"first"[..]));
        sender.send(Ok("second".into())).await.expect("sent");
        drop(sender);
        let second = frames.next().await.and_then(Result::ok);
        assert_eq!(second.as_deref(), Some(&b"second"[..]));
        assert!(frames.next().await.is_none());
    }

    fn tokio_stream_from<T: Send + 'static>(
        mut receiver: tokio::sync::mpsc::Receiver<T>,
    ) -> impl futures::Stream<Item = T> + Send {
        futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
    }
}
