//! The control endpoint of a running `flotilla up`: a Unix socket `DIR/control.sock` in its data dir, through
//! which `flotilla member stop|start NAME` takes a member away and brings it back. Being a file of the data dir,
//! it is found the way everything else of that `up` is, and only who may write there may use it.
//!
//! One request per connection, one line each way: `stop NAME` or `start NAME`, answered `ok: <what happened>`
//! or `error: <why>`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use super::member::{self, MemberServer};

/// The socket's file in the data dir.
pub const CONTROL_SOCKET: &str = "control.sock";

/// How long a client waits for an answer (a start may wait for the old store to be released).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest request line accepted.
const MAX_LINE: u64 = 1024;

/// The endpoint while it serves.
pub struct ControlEndpoint {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

/// Serves the control endpoint of the data dir `dir` for `members`. A socket file left by an `up` that did
/// not stop cleanly is replaced (the data dir's store lock already shows no other `up` uses `dir`).
///
/// # Errors
/// When the socket cannot be bound (e.g. the data dir's path is too long for a Unix socket).
pub fn serve(dir: &Path, members: Vec<Arc<MemberServer>>) -> anyhow::Result<ControlEndpoint> {
    let path = dir.join(CONTROL_SOCKET);
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)
        .with_context(|| format!("failed to serve the control socket {}", path.display()))?;
    let members = Arc::new(members);
    let task = tokio::spawn(async move {
        // Accepting fails on end of descriptors while the socket stays readable: pausing keeps it from spinning.
        let mut backoff = flotilla_serving::AcceptBackoff::default();
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => {
                    backoff.succeeded();
                    stream
                }
                Err(e) => {
                    backoff.failed(&e).await;
                    continue;
                }
            };
            let members = members.clone();
            tokio::spawn(async move {
                if let Err(e) = answer(stream, &members).await {
                    tracing::warn!(error = %e, "control socket: request failed");
                }
            });
        }
    });
    Ok(ControlEndpoint { path, task })
}

impl ControlEndpoint {
    /// Stops serving and removes the socket file.
    pub async fn shutdown(self) {
        self.task.abort();
        let _ = self.task.await;
        let _ = std::fs::remove_file(&self.path);
    }
}

async fn answer(stream: UnixStream, members: &[Arc<MemberServer>]) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    BufReader::new(read.take(MAX_LINE)).read_line(&mut line).await?;
    let reply = match execute(line.trim(), members).await {
        Ok(done) => format!("ok: {done}\n"),
        Err(e) => format!("error: {e:#}\n"),
    };
    write.write_all(reply.as_bytes()).await?;
    write.shutdown().await
}

/// Runs one request line.
async fn execute(line: &str, members: &[Arc<MemberServer>]) -> anyhow::Result<String> {
    let mut words = line.split_whitespace();
    let (Some(verb), Some(name), None) = (words.next(), words.next(), words.next()) else {
        bail!("malformed request {line:?}: expected `stop NAME` or `start NAME`");
    };
    if verb != "stop" && verb != "start" {
        bail!("unknown request {verb:?}: expected stop or start");
    }
    let member = member::find(members, name)?;
    if verb == "stop" {
        member.stop().await?;
        Ok(format!(
            "member {name} stopped: {} refuses connections",
            member.url()
        ))
    } else {
        member.start_again().await?;
        Ok(format!("member {name} serving again on {}", member.url()))
    }
}

/// Sends `request` to the `flotilla up` running with data dir `dir` and returns what it did.
///
/// # Errors
/// When no `up` runs there, or it refused the request (its reason).
pub async fn request(dir: &Path, request: &str) -> anyhow::Result<String> {
    let path = dir.join(CONTROL_SOCKET);
    let not_running = || {
        format!(
            "no flotilla up is running with data dir {} (start one with `flotilla up --data-dir {}`)",
            dir.display(),
            dir.display()
        )
    };
    if !path.exists() {
        bail!("{}", not_running());
    }
    let stream = UnixStream::connect(&path)
        .await
        .with_context(not_running)?;
    let exchange = async {
        let (read, mut write) = stream.into_split();
        write.write_all(format!("{request}\n").as_bytes()).await?;
        write.shutdown().await?;
        let mut reply = String::new();
        BufReader::new(read).read_line(&mut reply).await?;
        Ok::<_, std::io::Error>(reply)
    };
    let reply = tokio::time::timeout(ANSWER_TIMEOUT, exchange)
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "flotilla up at {} did not answer within {}s",
                dir.display(),
                ANSWER_TIMEOUT.as_secs()
            )
        })?
        .with_context(|| format!("failed to talk to flotilla up through {}", path.display()))?;
    let reply = reply.trim();
    if let Some(done) = reply.strip_prefix("ok: ") {
        Ok(done.to_string())
    } else if let Some(why) = reply.strip_prefix("error: ") {
        bail!("{why}")
    } else {
        bail!("unexpected answer from flotilla up at {}: {reply:?}", dir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_other_than_stop_or_start_of_a_known_member_are_refused() {
        let cases = [
            ("", "malformed request \"\": expected `stop NAME` or `start NAME`"),
            ("stop", "malformed request \"stop\": expected `stop NAME` or `start NAME`"),
            (
                "stop member1 member2",
                "malformed request \"stop member1 member2\": expected `stop NAME` or `start NAME`",
            ),
            ("restart member1", "unknown request \"restart\": expected stop or start"),
            ("stop member1", "no member named member1 (members: )"),
        ];
        for (line, expected) in cases {
            let err = execute(line, &[]).await.unwrap_err();
            assert_eq!(format!("{err:#}"), expected, "{line:?}");
        }
    }

    #[tokio::test]
    async fn a_data_dir_without_a_running_up_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = request(dir.path(), "stop member1").await.unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "no flotilla up is running with data dir {}",
                dir.path().display()
            )),
            "{err}"
        );
        // A socket file left by an `up` that was killed: nobody answers.
        let stale = std::os::unix::net::UnixListener::bind(dir.path().join(CONTROL_SOCKET)).unwrap();
        drop(stale);
        let err = request(dir.path(), "stop member1").await.unwrap_err();
        assert!(err.to_string().starts_with("no flotilla up is running"), "{err}");
    }
}

