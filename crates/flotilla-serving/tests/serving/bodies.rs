//! Clients that stall a request (headers never finished, a body trickled or never sent, nothing sent at all):
//! each is freed within its timeout, while a probe is answered promptly.

use std::time::Duration;

use flotilla_serving::{Options, Transport};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::support::{probe, serve};

const TIMEOUT: Duration = Duration::from_millis(1_000);
const MARGIN: Duration = Duration::from_secs(1);

/// Sends `head` (and then, with `trickle`, one more byte every 100 ms), and returns what the server answered and
/// when it closed the connection.
async fn stall(
    addr: std::net::SocketAddr,
    head: &'static str,
    trickle: bool,
) -> (String, Duration) {
    let started = Instant::now();
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let (mut read, mut write) = tcp.into_split();
    write.write_all(head.as_bytes()).await.expect("write");
    let trickler = tokio::spawn(async move {
        if trickle {
            let mut ticks = tokio::time::interval(Duration::from_millis(100));
            // Until the server stops reading.
            while write.write_all(b"x").await.is_ok() {
                ticks.tick().await;
            }
        }
        // Holds the write half open until the server closes.
        std::future::pending::<()>().await;
    });
    let mut answer = Vec::new();
    let read = tokio::time::timeout(TIMEOUT * 10, read.read_to_end(&mut answer)).await;
    trickler.abort();
    assert!(read.is_ok(), "the server never closed a stalled connection");
    (
        String::from_utf8_lossy(&answer).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_requests_are_freed_within_their_timeouts() {
    let options = Options {
        handshake_timeout: TIMEOUT,
        header_read_timeout: TIMEOUT,
        body_timeout: TIMEOUT,
        ..Options::default()
    };
    let server = serve(Transport::Plain, options).await;
    let addr = server.addr;
    let body_head = "POST /body HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\n";
    let silent_body = tokio::spawn(stall(addr, body_head, false));
    let trickled_body = tokio::spawn(stall(addr, body_head, true));
    let half_head = tokio::spawn(stall(addr, "POST /body HTTP/1.1\r\nHost: te", false));
    let nothing = tokio::spawn(stall(addr, "", false));

    // Probes while the four stall.
    let mut worst = Duration::ZERO;
    let mut probes = 0;
    let mut pace = tokio::time::interval(Duration::from_millis(50));
    while !(silent_body.is_finished()
        && trickled_body.is_finished()
        && half_head.is_finished()
        && nothing.is_finished())
    {
        let (answer, took) = probe(addr, None).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "probe answered {answer:?}"
        );
        worst = worst.max(took);
        probes += 1;
        pace.tick().await;
    }
    let (silent_answer, silent) = silent_body.await.expect("silent body");
    let (trickled_answer, trickled) = trickled_body.await.expect("trickled body");
    let (_, half) = half_head.await.expect("half head");
    let (_, idle) = nothing.await.expect("nothing sent");
    eprintln!(
        "freed after: silent body {silent:?}, trickled body {trickled:?}, half a head {half:?}, nothing sent \
         {idle:?}; {probes} probes, slowest {worst:?}"
    );
    assert!(
        silent_answer.starts_with("HTTP/1.1 408"),
        "{silent_answer:?}"
    );
    assert!(
        trickled_answer.starts_with("HTTP/1.1 408"),
        "{trickled_answer:?}"
    );
    for (what, took) in [
        ("silent body", silent),
        ("trickled body", trickled),
        ("half a head", half),
        ("nothing sent", idle),
    ] {
        assert!(
            took >= TIMEOUT - Duration::from_millis(100),
            "{what} freed early: {took:?}"
        );
        assert!(took <= TIMEOUT + MARGIN, "{what} held for {took:?}");
    }
    assert!(worst <= Duration::from_secs(1), "a probe took {worst:?}");
    server.shutdown.cancel();
    server.task.await.expect("server task");
}
