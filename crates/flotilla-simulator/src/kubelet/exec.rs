//! `GET /exec/<namespace>/<pod>/<container>?command=...&stdin=1&stdout=1&stderr=1&tty=1`: a command run in a
//! simulated container ([`super::commands`]) over WebSocket ([`super::channels`]).
//!
//! As a kubelet checks it first: at least one of `stdin`, `stdout`, `stderr` (`400 you must specify at least 1 of
//! stdin, stdout, stderr`; with `tty`, standard error goes to standard output), a pod the kubelet runs (`404 pod does
//! not exist`), a container of it that is running (`500 container not found ("<c>")`), and an upgrade (`500
//! Upgrade request required`). The WebSocket upgrade chooses `v5.channel.k8s.io` over `v4.channel.k8s.io`; other
//! protocols, SPDY among them, are refused with `400`.
//!
//! A session then goes as a kubelet's: an empty message on the first channel the client reads (standard output,
//! else standard error, else the error channel) to say the streams are ready; the command's output; its outcome on
//! the error channel; and a normal close (1000). `cat` reads standard input until v5's close of channel 0, or
//! until the client goes; a client that goes earlier ends the session without an outcome. Resizes are read and
//! ignored.

use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::core::v1::{Container, Pod};
use tokio_util::sync::CancellationToken;

use super::channels::{self, ERROR, Incoming, Outcome, STDERR, STDOUT, V4, V5};
use super::commands::{self, Context, Run};
use super::text;
use crate::common::fnv32;

/// How long a session waits for the client to answer its close before it lets go.
const CLOSE_PATIENCE: Duration = Duration::from_secs(5);

/// The streams a session carries, as the kubelet reads them (only `1` switches one on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Streams {
    /// The client sends standard input.
    pub stdin: bool,
    /// The client reads standard output.
    pub stdout: bool,
    /// The client reads standard error (never with a terminal).
    pub stderr: bool,
    /// The command runs in a terminal.
    pub tty: bool,
}

impl Streams {
    /// The streams of a query, or the kubelet's refusal when it asks for none.
    pub(crate) fn of(query: &[(String, String)]) -> Result<Self, &'static str> {
        let on = |key: &str| query.iter().any(|(k, v)| k == key && v == "1");
        let tty = on("tty");
        let streams = Self {
            stdin: on("stdin"),
            stdout: on("stdout"),
            stderr: on("stderr") && !tty,
            tty,
        };
        if streams.stdin || streams.stdout || streams.stderr {
            Ok(streams)
        } else {
            Err("you must specify at least 1 of stdin, stdout, stderr")
        }
    }
}

/// The container `name` of `pod` when it is running.
fn running_container(pod: &Pod, name: &str) -> Option<Container> {
    let running = pod
        .status
        .as_ref()?
        .container_statuses
        .iter()
        .flatten()
        .any(|s| s.name == name && s.state.as_ref().is_some_and(|st| st.running.is_some()));
    if !running {
        return None;
    }
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == name)
        .cloned()
}

/// A 64-hex-digit exec id, as container runtimes name execs.
fn exec_id(pod: &Pod, container: &str, argv: &[String]) -> String {
    let seed = format!(
        "{}/{container}/{}/{}",
        pod.metadata.uid.as_deref().unwrap_or_default(),
        argv.join(" "),
        jiff::Timestamp::now().as_nanosecond()
    );
    (0_u8..8)
        .map(|salt| format!("{:08x}", fnv32(format!("{salt}{seed}").as_bytes())))
        .collect()
}

/// Serves one exec request.
pub(crate) async fn serve(
    State(state): State<super::State>,
    Path((namespace, pod_name, container)): Path<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let query: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let streams = match Streams::of(&query) {
        Ok(streams) => streams,
        Err(why) => return text(StatusCode::BAD_REQUEST, why),
    };
    let Some(pod) = state.pods.running(&namespace, &pod_name) else {
        return text(StatusCode::NOT_FOUND, "pod does not exist");
    };
    let Some(spec) = running_container(&pod, &container) else {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("container not found (\"{container}\")"),
        );
    };
    if !headers.contains_key(header::UPGRADE) {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Upgrade request required",
        );
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade.protocols([V5, V4]),
        Err(_) => {
            return text(
                StatusCode::BAD_REQUEST,
                format!("the simulated kubelet serves exec over WebSocket ({V5}, {V4}) only"),
            );
        }
    };
    let Some(protocol) = upgrade
        .selected_protocol()
        .and_then(|p| p.to_str().ok())
        .map(str::to_string)
    else {
        let requested: Vec<String> = upgrade
            .requested_protocols()
            .filter_map(|p| p.to_str().ok())
            .map(str::to_string)
            .collect();
        return text(
            StatusCode::BAD_REQUEST,
            format!(
                "requested protocol(s) are not supported: [{}]; supports [{V5} {V4}]",
                requested.join(" ")
            ),
        );
    };
    let argv: Vec<String> = query
        .iter()
        .filter(|(k, _)| k == "command")
        .map(|(_, v)| v.clone())
        .collect();
    let run = commands::run(
        &argv,
        &Context::of(&pod, &spec),
        &exec_id(&pod, &container, &argv),
    );
    let cancel = state.cancel.clone();
    upgrade.on_upgrade(move |socket| session(socket, protocol, streams, argv, run, cancel))
}

/// Sends `channel`'s `data`; false when the client has gone.
async fn send(socket: &mut WebSocket, channel: u8, data: &[u8]) -> bool {
    socket
        .send(Message::Binary(Bytes::from(channels::frame(channel, data))))
        .await
        .is_ok()
}

/// One exec session on an upgraded connection: see the module documentation.
async fn session(
    mut socket: WebSocket,
    protocol: String,
    streams: Streams,
    argv: Vec<String>,
    run: Run,
    cancel: CancellationToken,
) {
    let ready = if streams.stdout {
        STDOUT
    } else if streams.stderr {
        STDERR
    } else {
        ERROR
    };
    if !send(&mut socket, ready, &[]).await {
        return;
    }
    let outcome = match run {
        Run::Done {
            stdout,
            stderr,
            code,
        } => {
            if streams.stdout && !stdout.is_empty() && !send(&mut socket, STDOUT, &stdout).await {
                return;
            }
            // A terminal has one output: standard error goes with standard output.
            let stderr_channel = if streams.tty && streams.stdout {
                Some(STDOUT)
            } else if streams.stderr {
                Some(STDERR)
            } else {
                None
            };
            if let Some(channel) = stderr_channel.filter(|_| !stderr.is_empty())
                && !send(&mut socket, channel, &stderr).await
            {
                return;
            }
            Outcome::Exited(code)
        }
        Run::Cat if !streams.stdin => Outcome::Exited(0),
        Run::Cat => {
            let Some(outcome) = cat(&mut socket, &protocol, streams, &cancel).await else {
                return;
            };
            outcome
        }
        Run::Missing(why) => Outcome::Failed(why),
    };
    if !send(&mut socket, ERROR, &channels::status(&argv, &outcome)).await {
        return;
    }
    let close = CloseFrame {
        code: 1000,
        reason: "".into(),
    };
    if socket.send(Message::Close(Some(close))).await.is_err() {
        return;
    }
    // The client answers the close; then the connection ends.
    let _ = tokio::time::timeout(CLOSE_PATIENCE, async {
        while let Some(Ok(_)) = socket.recv().await {}
    })
    .await;
}

/// `cat`: standard input to standard output until it closes; `None` when the client went first.
async fn cat(
    socket: &mut WebSocket,
    protocol: &str,
    streams: Streams,
    cancel: &CancellationToken,
) -> Option<Outcome> {
    loop {
        let message = tokio::select! {
            () = cancel.cancelled() => return Some(Outcome::Failed("the simulated kubelet stopped".into())),
            message = socket.recv() => message,
        };
        let data = match message {
            Some(Ok(Message::Binary(data))) => data,
            Some(Ok(Message::Close(_)) | Err(_)) | None => return None,
            Some(Ok(_)) => continue,
        };
        match channels::read(&data, protocol) {
            Incoming::Stdin(input) => {
                if streams.stdout && !input.is_empty() && !send(socket, STDOUT, input).await {
                    return None;
                }
            }
            Incoming::StdinClosed => return Some(Outcome::Exited(0)),
            Incoming::Resize | Incoming::Other => {}
        }
    }
}
