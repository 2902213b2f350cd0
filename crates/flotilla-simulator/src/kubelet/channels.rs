//! The framing of Kubernetes' remote command protocol over WebSocket, `v4.channel.k8s.io` and
//! `v5.channel.k8s.io`: every binary message starts with its channel's number and carries that channel's bytes.
//!
//! | channel | direction | carries |
//! |---|---|---|
//! | 0 | client → container | standard input |
//! | 1 | container → client | standard output |
//! | 2 | container → client | standard error |
//! | 3 | container → client | the outcome, a Status as JSON, once, at the end |
//! | 4 | client → container | terminal resizes, `{"Width": w, "Height": h}` |
//! | 255 | client → container | (v5 only) the client closed a channel: the next byte names it |
//!
//! The outcome is written as Kubernetes' remote command server writes it: `{"status":"Success"}`; for a command that
//! exited non-zero `Failure` with reason `NonZeroExitCode` and the exit code as the message of an `ExitCode`
//! cause; for a command that could not run `Failure`, `InternalError`, code 500.

use serde::Serialize;

/// Standard input.
pub(crate) const STDIN: u8 = 0;
/// Standard output.
pub(crate) const STDOUT: u8 = 1;
/// Standard error.
pub(crate) const STDERR: u8 = 2;
/// The outcome.
pub(crate) const ERROR: u8 = 3;
/// Terminal resizes.
pub(crate) const RESIZE: u8 = 4;
/// (v5) A channel closed by the client.
pub(crate) const CLOSE: u8 = 255;

/// `v5.channel.k8s.io`: v4 and the close signal (kubectl 1.30 and later speak it first).
pub(crate) const V5: &str = "v5.channel.k8s.io";
/// `v4.channel.k8s.io`: a JSON Status on the error channel (the Python client's, and older kubectl's over SPDY).
pub(crate) const V4: &str = "v4.channel.k8s.io";

/// A message for `channel` carrying `data`.
pub(crate) fn frame(channel: u8, data: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(data.len() + 1);
    message.push(channel);
    message.extend_from_slice(data);
    message
}

/// What a client sent, read from one binary message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Incoming<'a> {
    /// Bytes of standard input.
    Stdin(&'a [u8]),
    /// The client will send no more standard input (v5's close of channel 0).
    StdinClosed,
    /// A terminal resize (ignored: simulated commands draw nothing).
    Resize,
    /// An empty message, a close of another channel, or an unknown channel: nothing to do.
    Other,
}

/// Reads one binary message of a client speaking `protocol`.
pub(crate) fn read<'a>(message: &'a [u8], protocol: &str) -> Incoming<'a> {
    match message {
        [STDIN, data @ ..] => Incoming::Stdin(data),
        [RESIZE, ..] => Incoming::Resize,
        [CLOSE, STDIN, ..] if protocol == V5 => Incoming::StdinClosed,
        _ => Incoming::Other,
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It exited with this code.
    Exited(i32),
    /// It could not be run, for this reason (a container runtime's words).
    Failed(String),
}

#[derive(Serialize)]
struct Status {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Details>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
}

#[derive(Serialize)]
struct Details {
    causes: Vec<Cause>,
}

#[derive(Serialize)]
struct Cause {
    reason: &'static str,
    message: String,
}

/// The outcome of `command` as the error channel carries it (Go's field order: status, message, reason, details,
/// code).
pub(crate) fn status(command: &[String], outcome: &Outcome) -> Vec<u8> {
    let status = match outcome {
        Outcome::Exited(0) => Status {
            status: "Success",
            message: None,
            reason: None,
            details: None,
            code: None,
        },
        Outcome::Exited(code) => Status {
            status: "Failure",
            // The container runtime's error, as the kubelet passes it on.
            message: Some(format!(
                "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
                command.join(" ")
            )),
            reason: Some("NonZeroExitCode"),
            details: Some(Details {
                causes: vec![Cause {
                    reason: "ExitCode",
                    message: code.to_string(),
                }],
            }),
            code: None,
        },
        Outcome::Failed(why) => Status {
            status: "Failure",
            message: Some(format!(
                "Internal error occurred: error executing command in container: {why}"
            )),
            reason: Some("InternalError"),
            details: None,
            code: Some(500),
        },
    };
    // A struct of strings, numbers and lists always serialises.
    serde_json::to_vec(&status).unwrap_or_default()
}
