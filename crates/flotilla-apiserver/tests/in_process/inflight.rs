//! `--max-requests-inflight` and `--max-mutating-requests-inflight`: with both at 1 and a request of each kind
//! held in flight (its body never sent), a burst is answered 429 with `Retry-After: 1` and kube-apiserver's
//! Status at once, while `system:masters` and watches pass; the held requests gone, requests pass again.

use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::ServerName;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::common;

/// A request whose body never comes: it holds its place in flight until the connection is dropped.
async fn hold(
    server: &flotilla_apiserver::RunningServer,
    method: &str,
    path: &str,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let tls = super::http2::tls(server, &[b"http/1.1"]);
    let tcp = TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let name = ServerName::try_from("127.0.0.1").expect("name");
    let mut stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
        .connect(name, tcp)
        .await
        .expect("TLS");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\nImpersonate-User: alice\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n",
        server.admin_token()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream
}

#[tokio::test]
async fn a_burst_beyond_the_inflight_limits_is_refused_with_429_and_retry_after() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, client) =
        common::start_with(dir.path(), "127.0.0.1:0".parse().expect("addr"), |config| {
            config.max_requests_inflight = 1;
            config.max_mutating_requests_inflight = 1;
        })
        .await;
    // alice may write ConfigMaps, so her requests reach their handlers (and wait there for their bodies).
    common::grant(&client, "default", "alice", &["configmaps"]).await;
    let http = super::http2::client(&server, &[b"http/1.1"]);
    let url = format!("{}/api/v1/namespaces/default/configmaps", server.url());
    let token = server.admin_token().to_owned();
    let as_alice = |request: reqwest::RequestBuilder| {
        request
            .bearer_auth(&token)
            .header("Impersonate-User", "alice")
            .timeout(Duration::from_secs(10))
    };
    let post = || {
        as_alice(http.post(&url))
            .header("Content-Type", "application/json")
            .body("{}")
    };
    let get = || as_alice(http.get(&url));

    let held = [
        hold(&server, "POST", "/api/v1/namespaces/default/configmaps").await,
        hold(&server, "GET", "/api/v1/namespaces/default/configmaps").await,
    ];
    common::eventually("both held requests are in flight", || async {
        let write = post().send().await.map(|r| r.status().as_u16());
        let read = get().send().await.map(|r| r.status().as_u16());
        matches!((write, read), (Ok(429), Ok(429)))
    })
    .await;

    let burst = (0..20).map(|i| if i % 2 == 0 { post() } else { get() }.send());
    let started = tokio::time::Instant::now();
    for response in futures::future::join_all(burst).await {
        let response = response.expect("answered");
        assert_eq!(response.status().as_u16(), 429);
        let retry_after = response
            .headers()
            .get("Retry-After")
            .map(|v| v.as_bytes().to_vec());
        assert_eq!(retry_after.as_deref(), Some(&b"1"[..]));
        let status: Value = response.json().await.expect("a Status");
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["code"], 429);
        assert_eq!(status["reason"], "TooManyRequests");
        assert_eq!(
            status["message"],
            "Too many requests, please try again later."
        );
        assert_eq!(status["details"]["retryAfterSeconds"], 1);
    }
    let took = started.elapsed();
    eprintln!("a burst of 20 over the limits answered 429 in {took:?}");
    assert!(took < Duration::from_secs(5), "the burst took {took:?}");

    // Exempt: system:masters, and long-running requests.
    let admin = http
        .get(&url)
        .bearer_auth(&token)
        .send()
        .await
        .expect("admin");
    assert_eq!(admin.status().as_u16(), 200);
    let watch = as_alice(http.get(format!("{url}?watch=true")))
        .send()
        .await
        .expect("watch");
    assert_ne!(watch.status().as_u16(), 429);

    drop(held);
    common::eventually("requests pass once the held ones are gone", || async {
        let write = post().send().await.map(|r| r.status().as_u16());
        let read = get().send().await.map(|r| r.status().as_u16());
        matches!((write, read), (Ok(w), Ok(r)) if w != 429 && r != 429)
    })
    .await;
    server.shutdown().await;
}
