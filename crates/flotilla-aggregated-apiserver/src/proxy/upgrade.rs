//! Upgrades through the proxy (`kubectl exec`, `attach` and `port-forward`, `karmadactl exec`): the caller's
//! HTTP/1.1 request to switch protocols goes to the member as the caller, and once the member has switched,
//! the two connections are joined, as Karmada's upgrade-aware handler does.
//!
//! - The request carries what [`super::forward`] sends (method, path and query; the caller's headers but
//!   hop-by-hop ones and every credential and identity header; the impersonation headers), plus
//!   `Connection: Upgrade` and the caller's `Upgrade`, with no body, over the member's HTTP/1.1 client.
//! - A member's `101 Switching Protocols` reaches the caller with the member's headers (the protocol it chose,
//!   `Sec-WebSocket-Accept`, `X-Stream-Protocol-Version`); then bytes flow both ways until either side
//!   closes or the server shuts down, and both connections are then closed, as Karmada closes both when one
//!   copy ends.
//! - A member that refuses (4xx, 5xx) has its answer passed to the caller: status, headers, body. Any other
//!   answer (2xx, 3xx) is Karmada's 500 `invalid upgrade response: status code N`.
//!
//! A caller whose connection cannot switch protocols (only HTTP/1.1 can) is refused before any member is
//! asked ([`super::Proxy::serve`]).

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::forward::{Target, passed_back, passed_on, send, without_hop_by_hop};
use crate::authn::FrontProxy;
use crate::error::RequestError;

/// How long closing the two connections (TLS `close_notify`, then FIN) may take once one side is done.
const CLOSE_PATIENCE: Duration = Duration::from_secs(5);

/// Sends the upgrade `request` to `target` and, when the member switches protocols, joins the caller's
/// connection to the member's until either closes or `shutdown` is cancelled.
///
/// # Errors
/// [`RequestError::NotUpgradable`] when the caller's connection cannot switch;
/// [`RequestError::MemberUnreachable`] when the member does not answer;
/// [`RequestError::InvalidUpgradeResponse`] when it answers neither 101 nor an error.
pub(crate) async fn upgrade(
    target: Target<'_>,
    front_proxy: &FrontProxy,
    shutdown: &CancellationToken,
    request: Request<Body>,
) -> Result<Response, RequestError> {
    let (mut parts, _) = request.into_parts();
    let Some(caller) = parts.extensions.remove::<OnUpgrade>() else {
        return Err(RequestError::NotUpgradable {
            cluster: target.cluster.to_owned(),
        });
    };
    let mut headers = passed_on(&parts.headers, front_proxy, &target.identity);
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    for protocol in parts.headers.get_all(header::UPGRADE) {
        headers.append(header::UPGRADE, protocol.clone());
    }
    let body = kube::client::Body::empty();
    let upgrades = &target.clients.upgrades;
    let mut answer = send(&target, upgrades, parts.method, headers, body).await?;
    let status = answer.status();
    if status == StatusCode::SWITCHING_PROTOCOLS {
        let member = hyper::upgrade::on(&mut answer);
        let cluster = target.cluster.to_owned();
        tokio::spawn(join(caller, member, shutdown.clone(), cluster));
        let mut switched = Response::new(Body::empty());
        *switched.status_mut() = status;
        *switched.headers_mut() = switching_headers(answer.into_parts().0.headers);
        return Ok(switched);
    }
    if status.is_client_error() || status.is_server_error() {
        return Ok(passed_back(answer));
    }
    Err(RequestError::InvalidUpgradeResponse {
        status: status.as_u16(),
    })
}

/// The member's 101 headers for the caller: the hop-by-hop ones dropped but `Connection` and `Upgrade`, which
/// say what the connection switched to.
fn switching_headers(headers: HeaderMap) -> HeaderMap {
    let connection: Vec<HeaderValue> = headers
        .get_all(header::CONNECTION)
        .iter()
        .cloned()
        .collect();
    let upgrade: Vec<HeaderValue> = headers.get_all(header::UPGRADE).iter().cloned().collect();
    let mut kept = without_hop_by_hop(headers);
    kept.remove(header::CONTENT_LENGTH);
    for value in connection {
        kept.append(header::CONNECTION, value);
    }
    for value in upgrade {
        kept.append(header::UPGRADE, value);
    }
    kept
}

/// Copies bytes between the caller's and the member's switched connections, each way, until one side closes
/// (or fails) or `shutdown` is cancelled; then closes both.
async fn join(caller: OnUpgrade, member: OnUpgrade, shutdown: CancellationToken, cluster: String) {
    let (caller, member) = match tokio::try_join!(caller, member) {
        Ok(both) => both,
        Err(error) => {
            tracing::debug!(%cluster, %error, "an upgraded connection through the proxy did not switch");
            return;
        }
    };
    let (mut from_caller, mut to_caller) = tokio::io::split(TokioIo::new(caller));
    let (mut from_member, mut to_member) = tokio::io::split(TokioIo::new(member));
    let ended = tokio::select! {
        copied = tokio::io::copy(&mut from_caller, &mut to_member) => format!("the caller closed: {copied:?}"),
        copied = tokio::io::copy(&mut from_member, &mut to_caller) => format!("the member closed: {copied:?}"),
        () = shutdown.cancelled() => "the server shut down".to_owned(),
    };
    tracing::debug!(%cluster, ended, "upgraded connection through the proxy ended");
    let close = async {
        let _ = tokio::join!(to_caller.shutdown(), to_member.shutdown());
    };
    let _ = tokio::time::timeout(CLOSE_PATIENCE, close).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_keeps_its_protocol_headers_only() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
        headers.insert(
            "x-stream-protocol-version",
            HeaderValue::from_static("v4.channel.k8s.io"),
        );
        headers.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        let kept = switching_headers(headers);
        let mut names: Vec<&str> = kept.keys().map(http::HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["connection", "upgrade", "x-stream-protocol-version"]
        );
        assert_eq!(kept[header::UPGRADE], "SPDY/3.1");
    }
}
