//! A server whose process runs out of file descriptors: the accept loop pauses instead of spinning, and serves
//! again once descriptors are free. In a test binary of its own: it lowers the open-file limit of its process.

#[path = "support/mod.rs"]
mod support;

use std::time::Duration;

use flotilla_serving::{Options, Transport};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use rustix::time::{ClockId, clock_gettime};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use support::{probe, serve};

/// How long the process stays out of descriptors while the test watches the accept loop.
const WINDOW: Duration = Duration::from_secs(2);

fn cpu_time() -> Duration {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_the_loop_pauses_and_then_recovers() {
    let server = serve(Transport::Plain, Options::default()).await;
    let (answer, _) = probe(server.addr, None).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");

    // A low limit, filled up with open files but for one descriptor, which the client's socket takes.
    let limit = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(256),
            maximum: limit.maximum,
        },
    )
    .expect("lower the open-file limit");
    let mut hog = Vec::new();
    while let Ok(file) = std::fs::File::open("/dev/null") {
        hog.push(file);
    }
    hog.pop();
    let mut client = TcpStream::connect(server.addr)
        .await
        .expect("connect into the backlog");
    client
        .write_all(b"GET /probe HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .expect("request into the backlog");

    // The server cannot accept it: every attempt fails with EMFILE.
    support::eventually(support::PATIENCE, "a failed accept", || {
        let failed = server.stats.failed_accepts();
        async move { (failed >= 1).then_some(()) }
    })
    .await;
    let (failed_before, cpu_before, started) =
        (server.stats.failed_accepts(), cpu_time(), Instant::now());
    tokio::time::sleep(WINDOW).await;
    let attempts = server.stats.failed_accepts() - failed_before;
    let cpu = cpu_time().saturating_sub(cpu_before);
    let window = started.elapsed();
    eprintln!("out of descriptors for {window:?}: {attempts} accept attempts, {cpu:?} CPU");
    // 5 ms doubling to 1 s: a dozen attempts at most in two seconds; a spinning loop makes millions.
    assert!(attempts <= 20, "{attempts} accept attempts in {window:?}");
    assert!(cpu < window / 4, "{cpu:?} CPU in {window:?}");

    drop(hog);
    setrlimit(Resource::Nofile, limit).expect("restore the open-file limit");
    let recovered = Instant::now();
    let mut answer = Vec::new();
    tokio::time::timeout(support::PATIENCE, client.read_to_end(&mut answer))
        .await
        .expect("the waiting client is served")
        .expect("read the answer");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    eprintln!(
        "the waiting client was served {:?} after descriptors were freed",
        recovered.elapsed()
    );
    let (answer, took) = probe(server.addr, None).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(took <= Duration::from_secs(1), "a probe took {took:?}");
    server.shutdown.cancel();
    server.task.await.expect("server task");
}
