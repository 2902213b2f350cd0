//! Connections that never start their TLS handshake: closed within the handshake timeout, while other clients
//! are answered promptly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use flotilla_serving::certificate::Reloading;
use flotilla_serving::{Options, Transport};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::support::{Authority, probe, raise_open_files, serve, server_config};

const IDLE: usize = 2_000;
const HANDSHAKE_TIMEOUT: Duration = Duration::from_millis(1_500);
/// What a busy two-core machine may add to the timeout before a close is seen.
const MARGIN: Duration = Duration::from_secs(1);
const PROBE_LATENCY: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_handshakes_are_closed_in_time_and_probes_are_answered_throughout() {
    raise_open_files(4 * IDLE as u64 + 1_024);
    let authority = Authority::new();
    let leaf = authority.leaf("server");
    let resolver = Reloading::from_pem(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes())
        .expect("certificate");
    let options = Options {
        handshake_timeout: HANDSHAKE_TIMEOUT,
        ..Options::default()
    };
    let server = serve(Transport::Tls(server_config(resolver)), options).await;
    let client = authority.client();

    // Probes run from before the first idle connection until the last is closed.
    let done = Arc::new(AtomicBool::new(false));
    let prober = tokio::spawn({
        let (done, client, addr) = (done.clone(), client.clone(), server.addr);
        async move {
            let mut latencies = Vec::new();
            let mut pace = tokio::time::interval(Duration::from_millis(50));
            while !done.load(Ordering::Relaxed) {
                pace.tick().await;
                let (answer, took) = probe(addr, Some(&client)).await;
                assert!(
                    answer.starts_with("HTTP/1.1 200"),
                    "probe answered {answer:?}"
                );
                latencies.push(took);
            }
            latencies
        }
    });

    let mut idle = JoinSet::new();
    for _ in 0..IDLE {
        // Before the connect: the server may accept before this task sees the connect done, and the lifetime
        // measured must not be shorter than the one the server gave.
        let opened = Instant::now();
        let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
        idle.spawn(async move {
            let mut byte = [0u8; 1];
            // End of stream or a reset: either way the server closed it.
            let read = tokio::time::timeout(HANDSHAKE_TIMEOUT * 10, tcp.read(&mut byte)).await;
            assert!(
                matches!(read, Ok(Ok(0)) | Ok(Err(_))),
                "an idle connection was not closed: {read:?}"
            );
            opened.elapsed()
        });
    }
    let mut lifetimes = Vec::with_capacity(IDLE);
    while let Some(lifetime) = idle.join_next().await {
        lifetimes.push(lifetime.expect("idle connection task"));
    }
    done.store(true, Ordering::Relaxed);
    let latencies = prober.await.expect("prober");

    let shortest = lifetimes.iter().min().copied().unwrap_or_default();
    let longest = lifetimes.iter().max().copied().unwrap_or_default();
    let worst_probe = latencies.iter().max().copied().unwrap_or_default();
    eprintln!(
        "{IDLE} idle connections: closed after {shortest:?}..{longest:?} (timeout {HANDSHAKE_TIMEOUT:?}); \
         {} probes, slowest {worst_probe:?}",
        latencies.len()
    );
    assert!(server.stats.accepted() >= IDLE as u64);
    assert!(
        shortest >= HANDSHAKE_TIMEOUT - Duration::from_millis(100),
        "an idle connection was closed before the handshake timeout: {shortest:?}"
    );
    assert!(
        longest <= HANDSHAKE_TIMEOUT + MARGIN,
        "an idle connection outlived the handshake timeout: {longest:?}"
    );
    assert!(latencies.len() >= 3, "too few probes: {}", latencies.len());
    assert!(
        worst_probe <= PROBE_LATENCY,
        "a probe took {worst_probe:?} with idle connections open"
    );
    server.shutdown.cancel();
    server.task.await.expect("server task");
}
