//! Processes a test starts, stopped when the test ends however it ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child process killed and reaped when dropped, so a failing test leaves nothing running.
#[derive(Debug)]
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        // Already exited is fine: nothing else to clean up.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` with stdout piped and waits up to `patience` for its first line, which must start with
/// `ready` (the `ready:` line Flotilla's serving commands print); returns the process and that line.
/// Later stdout is drained on a thread of its own, so the process never blocks on a full pipe.
pub fn start_ready(mut command: Command, ready: &str, patience: Duration) -> (Proc, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
    let stdout = child.stdout.take().expect("stdout is piped");
    let proc = Proc(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // The receiver only wants the first line; the rest is read so the pipe never fills.
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(patience)
        .unwrap_or_else(|e| panic!("{command:?} printed no line within {patience:?}: {e}"));
    assert!(
        line.starts_with(ready),
        "{command:?} printed {line:?}, not {ready:?}..."
    );
    (proc, line)
}

/// A TCP port on loopback that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}
