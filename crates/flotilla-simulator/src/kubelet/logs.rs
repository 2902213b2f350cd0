//! `GET /containerLogs/<namespace>/<pod>/<container>`: a simulated container's log, as a kubelet serves it.
//!
//! A simulated container writes a few lines when it starts ([`lines`]): that it started, on which Node and in which
//! pod, its image, its command, and the ports it listens on; each line is stamped from the container's
//! `startedAt`, a millisecond apart. The kubelet's options apply as a kubelet applies them: `sinceSeconds` or
//! `sinceTime` keep the lines from then on, `tailLines` the last ones, `timestamps` prefixes each line with its
//! time (RFC 3339 with nanoseconds, as Go's `RFC3339Nano` prints it), `limitBytes` cuts the output, and `follow`
//! keeps the answer open after the last line while the container runs, ending when the pod goes (deleted,
//! finished, or bound anew) or the client leaves. No simulated container has restarted, so `previous` is always
//! the kubelet's "previous terminated container ... not found".
//!
//! Errors, in a kubelet's words and codes: options that do not parse (`400 {"message": "Unable to decode
//! query."}`) or are invalid (`422 {"message": "Invalid request."}`), a pod the kubelet does not run (`404 pod
//! "<pod>" does not exist`), a container the pod does not have (`404 container "<c>" not found in pod "<pod>"`), one
//! with no log yet (`400 container "<c>" in pod "<pod>" is waiting to start: trying and failing to pull image`, or
//! `... is not available` before its first status).

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};

use super::{Pods, text};

/// The log options a kubelet takes (`PodLogOptions` from its query).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Options {
    /// `follow`.
    pub follow: bool,
    /// `previous`.
    pub previous: bool,
    /// `timestamps`.
    pub timestamps: bool,
    /// `sinceSeconds`, or `sinceTime` (the later of the two when both came).
    pub since: Option<Timestamp>,
    /// `tailLines`.
    pub tail_lines: Option<i64>,
    /// `limitBytes`.
    pub limit_bytes: Option<i64>,
}

/// Why a query cannot be served: it does not parse, or its options are invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadOptions {
    /// A value does not parse (`400`).
    Decode,
    /// A value is out of range (`422`).
    Invalid,
}

impl Options {
    /// The options of `query` (pairs, decoded), `now` the time `sinceSeconds` counts back from.
    ///
    /// # Errors
    /// See [`BadOptions`].
    pub(crate) fn parse(query: &[(String, String)], now: Timestamp) -> Result<Self, BadOptions> {
        let first = |key: &str| {
            query
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let flag =
            |key: &str| first(key).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
        let integer = |key: &str| -> Result<Option<i64>, BadOptions> {
            first(key)
                .map(|v| v.parse::<i64>().map_err(|_| BadOptions::Decode))
                .transpose()
        };
        // The kubelet still takes the old `tail` parameter, `all` meaning no limit.
        let tail_lines = match first("tail") {
            Some("all") => None,
            Some(tail) if !tail.is_empty() => {
                Some(tail.parse::<i64>().map_err(|_| BadOptions::Decode)?)
            }
            _ => integer("tailLines")?,
        };
        let since_seconds = integer("sinceSeconds")?;
        let since_time = match first("sinceTime") {
            None | Some("" | "null") => None,
            Some(raw) => Some(raw.parse::<Timestamp>().map_err(|_| BadOptions::Decode)?),
        };
        let limit_bytes = integer("limitBytes")?;
        let invalid = tail_lines.is_some_and(|t| t < 0)
            || limit_bytes.is_some_and(|l| l < 1)
            || (since_seconds.is_some() && since_time.is_some())
            || since_seconds.is_some_and(|s| s < 1);
        if invalid {
            return Err(BadOptions::Invalid);
        }
        let since = since_time.or_else(|| {
            since_seconds.and_then(|s| now.checked_sub(SignedDuration::from_secs(s)).ok())
        });
        Ok(Self {
            follow: flag("follow"),
            previous: flag("previous"),
            timestamps: flag("timestamps"),
            since,
            tail_lines,
            limit_bytes,
        })
    }
}

/// A time as Go's `time.RFC3339Nano` prints it in UTC: nanoseconds with trailing zeros cut, none when whole.
pub(crate) fn rfc3339_nano(at: Timestamp) -> String {
    let whole = at.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = at.subsec_nanosecond();
    if nanos == 0 {
        return format!("{whole}Z");
    }
    let fraction = format!("{nanos:09}");
    format!("{whole}.{}Z", fraction.trim_end_matches('0'))
}

/// The lines a simulated `container` of `pod` wrote when it started at `started`, with their times.
pub(crate) fn lines(
    pod: &Pod,
    container: &Container,
    started: Timestamp,
) -> Vec<(Timestamp, String)> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default();
    let image = container.image.as_deref().unwrap_or_default();
    let mut out = vec![
        format!(
            "flotilla simulated container {} started on node {node} in pod {namespace}/{name}",
            container.name
        ),
        format!("image: {image}"),
    ];
    let argv: Vec<&str> = container
        .command
        .iter()
        .flatten()
        .chain(container.args.iter().flatten())
        .map(String::as_str)
        .collect();
    out.push(if argv.is_empty() {
        "command: the image's default".to_string()
    } else {
        format!("command: {}", argv.join(" "))
    });
    for port in container.ports.iter().flatten() {
        let protocol = port.protocol.as_deref().unwrap_or("TCP");
        let named = port
            .name
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        out.push(format!(
            "listening on port {}/{protocol}{named}",
            port.container_port
        ));
    }
    out.push("ready".to_string());
    out.into_iter()
        .zip(0_i64..)
        .map(|(line, i)| {
            let at = started
                .checked_add(SignedDuration::from_millis(i))
                .unwrap_or(started);
            (at, line)
        })
        .collect()
}

/// The answer's body for `lines` under `opts`: the lines since `since`, the last `tailLines` of them, each with its
/// time when asked, cut at `limitBytes`; and whether the limit was reached (a follow then ends).
pub(crate) fn render(lines: &[(Timestamp, String)], opts: &Options) -> (Vec<u8>, bool) {
    let kept: Vec<&(Timestamp, String)> = lines
        .iter()
        .filter(|(at, _)| opts.since.is_none_or(|since| *at >= since))
        .collect();
    let skip = match opts.tail_lines {
        Some(tail) => kept
            .len()
            .saturating_sub(usize::try_from(tail).unwrap_or(usize::MAX)),
        None => 0,
    };
    let mut out = Vec::new();
    for (at, line) in &kept[skip..] {
        if opts.timestamps {
            out.extend_from_slice(rfc3339_nano(*at).as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    match opts
        .limit_bytes
        .and_then(|l| usize::try_from(l).ok())
        .filter(|l| out.len() >= *l)
    {
        Some(limit) => {
            out.truncate(limit);
            (out, true)
        }
        None => (out, false),
    }
}

/// The container's spec among the pod's containers, init and ephemeral ones included.
fn spec_of(pod: &Pod, name: &str) -> Option<Container> {
    let spec = pod.spec.as_ref()?;
    spec.init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .find(|c| c.name == name)
        .cloned()
        .or_else(|| {
            spec.ephemeral_containers
                .iter()
                .flatten()
                .find(|c| c.name == name)
                .map(|c| Container {
                    name: c.name.clone(),
                    image: c.image.clone(),
                    command: c.command.clone(),
                    args: c.args.clone(),
                    ..Container::default()
                })
        })
}

fn status_of<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    status
        .container_statuses
        .iter()
        .flatten()
        .chain(status.init_container_statuses.iter().flatten())
        .chain(status.ephemeral_container_statuses.iter().flatten())
        .find(|s| s.name == name)
}

/// When the container started, or the kubelet's reason it has no log to give (its `validateContainerLogStatus`).
pub(crate) fn started(pod: &Pod, container: &str, previous: bool) -> Result<Timestamp, String> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let Some(status) = status_of(pod, container) else {
        return Err(format!(
            "container \"{container}\" in pod \"{name}\" is not available"
        ));
    };
    if previous {
        // Simulated containers never restart: there is no previous instance.
        return Err(format!(
            "previous terminated container \"{container}\" in pod \"{name}\" not found"
        ));
    }
    let state = status.state.clone().unwrap_or_default();
    if let Some(running) = state.running {
        return Ok(running.started_at.map_or(Timestamp::UNIX_EPOCH, |t| t.0));
    }
    if let Some(terminated) = state.terminated {
        return Ok(terminated.started_at.map_or(Timestamp::UNIX_EPOCH, |t| t.0));
    }
    match state.waiting.and_then(|w| w.reason) {
        Some(reason) if reason == "ErrImagePull" => Err(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: image can't be pulled"
        )),
        Some(reason) if reason == "ImagePullBackOff" => Err(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: trying and failing to pull image"
        )),
        Some(reason) => Err(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: {reason}"
        )),
        None => Err(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start - no logs yet"
        )),
    }
}

/// Whether the pod a follow streams is gone: deleted, being deleted, finished, or replaced by another of its name.
fn gone(pods: &Pods, ns: &str, name: &str, uid: Option<&str>) -> bool {
    pods.running(ns, name).is_none_or(|pod| {
        pod.metadata.uid.as_deref() != uid
            || pod.metadata.deletion_timestamp.is_some()
            || pod
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|p| p == "Succeeded" || p == "Failed")
    })
}

/// Serves one log request.
pub(crate) async fn serve(
    State(state): State<super::State>,
    Path((namespace, pod_name, container)): Path<(String, String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let query: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let opts = match Options::parse(&query, Timestamp::now()) {
        Ok(opts) => opts,
        Err(BadOptions::Decode) => {
            return text(
                StatusCode::BAD_REQUEST,
                r#"{"message": "Unable to decode query."}"#,
            );
        }
        Err(BadOptions::Invalid) => {
            return text(
                StatusCode::UNPROCESSABLE_ENTITY,
                r#"{"message": "Invalid request."}"#,
            );
        }
    };
    let Some(pod) = state.pods.running(&namespace, &pod_name) else {
        return text(
            StatusCode::NOT_FOUND,
            format!("pod \"{pod_name}\" does not exist"),
        );
    };
    let Some(spec) = spec_of(&pod, &container) else {
        return text(
            StatusCode::NOT_FOUND,
            format!("container \"{container}\" not found in pod \"{pod_name}\""),
        );
    };
    let started = match started(&pod, &container, opts.previous) {
        Ok(at) => at,
        Err(why) => return text(StatusCode::BAD_REQUEST, why),
    };
    let (out, limited) = render(&lines(&pod, &spec, started), &opts);
    let head = futures::stream::once(async move { Ok::<_, Infallible>(Bytes::from(out)) });
    if !opts.follow || limited {
        return Response::new(Body::from_stream(head));
    }
    let (pods, cancel) = (state.pods.clone(), state.cancel.clone());
    let uid = pod.metadata.uid.clone();
    let follow = futures::stream::once(async move {
        follow_until_gone(pods, namespace, pod_name, uid, cancel).await;
    })
    .filter_map(|()| futures::future::ready(None::<Result<Bytes, Infallible>>));
    Response::new(Body::from_stream(head.chain(follow)))
}

/// Waits until the followed pod is gone or the simulator stops (the client leaving drops this wait).
async fn follow_until_gone(
    pods: Pods,
    namespace: String,
    name: String,
    uid: Option<String>,
    cancel: tokio_util::sync::CancellationToken,
) {
    let mut changed = pods.changed.clone();
    loop {
        if gone(&pods, &namespace, &name, uid.as_deref()) {
            return;
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            seen = changed.changed() => {
                if seen.is_err() {
                    return;
                }
            }
        }
    }
}
