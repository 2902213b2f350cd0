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

/// A TCP port on loopback that was free a moment ago, for a process started later to listen on.
///
/// Chosen at random from below the kernel's ephemeral range rather than by binding port 0: a port from that
/// range can be taken as the source port of any outgoing connection before the process listens on it
/// (hack/free-ports.py does the same for the scripts).
pub fn free_port() -> u16 {
    use std::hash::BuildHasher;
    let high = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768)
        .saturating_sub(1);
    let low = if high > 12000 { 10000 } else { 1024 };
    for attempt in 0..10_000u32 {
        let random = std::collections::hash_map::RandomState::new().hash_one(attempt);
        let port = low + u16::try_from(random % u64::from(high - low + 1)).unwrap_or(0);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port between {low} and {high}");
}
