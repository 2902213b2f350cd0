//! The controllers' client against an API server that offers HTTP/2 (the embedded one does, by ALPN, as
//! kube-apiserver does): requests and watches go over HTTP/2, and the client-side rate limit holds requests
//! to its rate.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use std::time::{Duration, Instant};

use flotilla_client::{self as kube_client, RateLimit};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, PostParams, WatchEvent, WatchParams};

fn version_request() -> http::Request<kube::client::Body> {
    http::Request::get("/version")
        .body(kube::client::Body::empty())
        .unwrap()
}

#[tokio::test]
async fn requests_and_watches_use_http2_when_the_server_offers_it() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    let client =
        kube_client::client(support::server_config(&server).await, RateLimit::default()).unwrap();

    let response = client.send(version_request()).await.unwrap();
    assert_eq!(response.version(), http::Version::HTTP_2);
    // kube's own builder, for contrast, stays on HTTP/1.1: the reason this module exists.
    let plain = kube::Client::try_from(support::server_config(&server).await).unwrap();
    let response = plain.send(version_request()).await.unwrap();
    assert_eq!(response.version(), http::Version::HTTP_11);

    // A watch and writes share the client; the watch sees the writes.
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut events = api
        .watch(&WatchParams::default().timeout(10), "0")
        .await
        .unwrap()
        .boxed();
    for i in 0..3 {
        let map = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("over-h2-{i}")),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &map).await.unwrap();
    }
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(10), events.try_next()).await {
            Ok(Ok(Some(WatchEvent::Added(map)))) => {
                let name = map.metadata.name.unwrap();
                // The namespace's own ConfigMaps (kube-root-ca.crt) come first.
                if name.starts_with("over-h2-") {
                    seen.push(name);
                }
            }
            Ok(Ok(Some(_))) => {}
            other => panic!("the watch ended before seeing the writes ({seen:?}): {other:?}"),
        }
    }
    assert_eq!(seen, ["over-h2-0", "over-h2-1", "over-h2-2"]);
}

#[tokio::test]
async fn the_rate_limit_holds_requests_to_its_rate() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    // 20 per second with a burst of 2: 12 requests need at least (12 - 2) / 20 = 0.5 s however fast the
    // server is. The bound is a floor, so load on the machine cannot make this fail.
    let limit = RateLimit {
        qps: 20.0,
        burst: 2,
    };
    let client = kube_client::client(support::server_config(&server).await, limit).unwrap();
    let started = Instant::now();
    let requests = (0..12).map(|_| client.send(version_request()));
    for response in futures::future::join_all(requests).await {
        assert!(response.unwrap().status().is_success());
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(490),
        "12 requests at 20 qps with a burst of 2 took only {elapsed:?}"
    );
    // Without a limit nothing holds them: the same requests through an unlimited client finish, and the
    // limited client still serves after its bucket drained.
    let unlimited = kube_client::client(
        support::server_config(&server).await,
        RateLimit { qps: 0.0, burst: 0 },
    )
    .unwrap();
    let requests = (0..12).map(|_| unlimited.send(version_request()));
    for response in futures::future::join_all(requests).await {
        assert!(response.unwrap().status().is_success());
    }
    assert!(client.send(version_request()).await.is_ok());
}
