//! The connect subresources `pods/log` (GET) and `pods/exec` (GET and POST, an upgrade): checked and located by the
//! registry (`flotilla_registry::connect`), then proxied to the kubelet of the pod's Node with kube-apiserver's
//! kubelet client (`crate::kubelet`), as kube-apiserver's `LogREST` and `ExecREST` do.
//!
//! - Logs: the kubelet is asked `GET /containerLogs/<ns>/<pod>/<container>?<options>` afresh (none of the caller's
//!   headers go along) and its answer streams back as `text/plain`; a pod no scheduler has bound has no logs yet
//!   (`204`). A kubelet's refusal becomes a Status as kube's response checker makes one: its 400 a `BadRequest`
//!   and its 500 an `InternalError` carrying the kubelet's text, anything else the generic Status of its code
//!   naming `pods/log`; a kubelet that cannot be reached is a `500` naming the URL, as Go's client words it.
//! - Exec: the caller's upgrade (kubectl's WebSocket `v5.channel.k8s.io`, or SPDY) goes to
//!   `/exec/<ns>/<pod>/<container>?<options>` with the caller's headers (`crate::upstream`) and, once the kubelet
//!   switches protocols, the two connections are joined: the server does not translate between protocols, as
//!   kube-apiserver does not for a kubelet that speaks WebSocket itself. A request that is not an upgrade is `400
//!   Upgrade request required`; a kubelet that cannot be reached is `500 error dialing backend: ...`; a refusal
//!   (4xx, 5xx) reaches the caller as the kubelet gave it, and any other answer is `500 invalid upgrade response:
//!   status code <N>`, as kube's upgrade-aware proxy has them.

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Empty, Limited};
use serde_json::{Map, json};

use crate::context::Ctx;
use crate::route::{Query, ResourcePath};
use crate::upstream::{self, BoxError, Outgoing, describe, encode_pairs};
use crate::wire::error_response;
use flotilla_registry::connect::{self, ExecOptions, Location, LogOptions};
use flotilla_registry::status::{ApiError, ApiResult};

/// How much of a kubelet's refusal is read into the Status (kube's response checker reads as much).
const MAX_REFUSAL: usize = 50 * 1024;

/// Serves a request for a connect subresource (`ResourcePath::is_connect`).
pub(crate) async fn serve<B>(
    ctx: &Arc<Ctx>,
    parts: http::request::Parts,
    body: B,
    rp: &ResourcePath,
) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (ns, name) = (
        rp.namespace.as_deref().unwrap_or_default(),
        rp.name.as_deref().unwrap_or_default(),
    );
    let answered = match rp.sub.as_deref() {
        Some("log") => logs(ctx, &parts, ns, name).await,
        _ => exec(ctx, parts, body, ns, name).await,
    };
    answered.unwrap_or_else(|e| error_response(&e))
}

/// The generic answer to a method a subresource does not serve.
fn method_not_allowed() -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    .with_details(Map::new())
}

fn query_pairs(uri: &Uri) -> Vec<(String, String)> {
    Query::parse(uri.query()).pairs().to_vec()
}

fn url(location: &Location) -> String {
    let query = encode_pairs(&location.query);
    if query.is_empty() {
        format!("https://{}{}", location.authority(), location.path)
    } else {
        format!("https://{}{}?{query}", location.authority(), location.path)
    }
}

async fn logs(
    ctx: &Arc<Ctx>,
    parts: &http::request::Parts,
    ns: &str,
    name: &str,
) -> ApiResult<Response> {
    if parts.method != Method::GET {
        return Err(method_not_allowed());
    }
    let opts = LogOptions::from_query(&query_pairs(&parts.uri))?;
    opts.validate(name)?;
    let Some(location) = connect::log_location(&ctx.registry, ns, name, &opts)? else {
        let mut empty = Response::new(Body::empty());
        *empty.status_mut() = StatusCode::NO_CONTENT;
        return Ok(empty);
    };
    let url = url(&location);
    let uri: Uri = url
        .parse()
        .map_err(|e| ApiError::new(500, "", format!("parse \"{url}\": {e}")))?;
    let request = Request::get(uri)
        .body(Empty::new().map_err(|e| match e {}).boxed_unsync())
        .map_err(ApiError::internal)?;
    let response = ctx.kubelets.client().request(request).await.map_err(|e| {
        ApiError::new(
            500,
            "",
            format!("Get \"{url}\": {}", describe(&e, &location.authority())),
        )
    })?;
    let status = response.status().as_u16();
    if !(200..=206).contains(&status) {
        let text = match Limited::new(response.into_body(), MAX_REFUSAL)
            .collect()
            .await
        {
            Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
            Err(e) => return Err(ApiError::internal(e)),
        };
        return Err(refusal(status, text, name));
    }
    let (mut head, body) = response.into_parts();
    head.headers.clear();
    head.headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    Ok(Response::from_parts(head, Body::new(body)))
}

/// A kubelet's refusal of a log request as kube's generic response checker turns it into a Status.
fn refusal(code: u16, text: String, name: &str) -> ApiError {
    match code {
        500 => ApiError::internal(&text).with_details({
            let mut details = Map::new();
            details.insert("causes".into(), json!([{"message": text}]));
            details
        }),
        400 => ApiError::bad_request(text),
        _ => {
            let (reason, message) = match code {
                404 => (
                    "NotFound",
                    "the server could not find the requested resource",
                ),
                401 => (
                    "Unauthorized",
                    "the server has asked for the client to provide credentials",
                ),
                403 => ("Forbidden", text.as_str()),
                409 => ("Conflict", "the server reported a conflict"),
                422 => (
                    "Invalid",
                    "the server rejected our request due to an error in our request",
                ),
                503 => (
                    "ServiceUnavailable",
                    "the server is currently unable to handle the request",
                ),
                _ => ("", ""),
            };
            let message = if reason.is_empty() && code >= 500 {
                format!(
                    "an error on the server ({text:?}) has prevented the request from succeeding"
                )
            } else if reason.is_empty() {
                format!(
                    "the server responded with the status code {code} but did not return more information"
                )
            } else {
                message.to_string()
            };
            let reason = if reason.is_empty() && code >= 500 {
                "InternalError"
            } else {
                reason
            };
            let mut details = Map::new();
            details.insert("name".into(), json!(name));
            details.insert("kind".into(), json!("pods/log"));
            // kube leaves the verb out here, which leaves its message two spaces apart.
            ApiError::new(code, reason, format!("{message} ( pods/log {name})"))
                .with_details(details)
        }
    }
}

async fn exec<B>(
    ctx: &Arc<Ctx>,
    parts: http::request::Parts,
    body: B,
    ns: &str,
    name: &str,
) -> ApiResult<Response>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    if parts.method != Method::GET && parts.method != Method::POST {
        return Err(method_not_allowed());
    }
    let opts = ExecOptions::from_query(&query_pairs(&parts.uri));
    let location = connect::exec_location(&ctx.registry, ns, name, &opts)?;
    let Outgoing {
        mut request,
        upgrade,
    } = upstream::outgoing(parts, body);
    if upgrade.is_none() {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    let url = url(&location);
    *request.uri_mut() = url
        .parse()
        .map_err(|e| ApiError::new(500, "", format!("parse \"{url}\": {e}")))?;
    let response = ctx.kubelets.client().request(request).await.map_err(|e| {
        ApiError::new(
            500,
            "",
            format!(
                "error dialing backend: {}",
                describe(&e, &location.authority())
            ),
        )
    })?;
    let status = response.status();
    if status != StatusCode::SWITCHING_PROTOCOLS && status.as_u16() < 400 {
        return Err(ApiError::new(
            500,
            "",
            format!("invalid upgrade response: status code {}", status.as_u16()),
        ));
    }
    Ok(upstream::answer(response, upgrade))
}

#[cfg(test)]
mod tests;
