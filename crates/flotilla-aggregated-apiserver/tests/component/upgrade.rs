//! Upgrades through `clusters/{name}/proxy` (exec, attach, port-forward): the member's 101 and its headers
//! reach the caller, bytes flow both ways until either side closes, the member sees the impersonator and the
//! caller's name and groups only, a refusal is passed through, a caller the control plane denies never reaches
//! the member, and `clusters/*/proxy` upgrades in the one cluster holding the pod. Real embedded members and
//! the embedded aggregator in front: `upgrade_embedded`.

use std::time::Duration;

use bytes::Bytes;
use http::header;
use http_body_util::BodyExt;
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use kube::Client;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::member::Recorded;
use crate::proxy::{TOM, proxy_url};
use crate::support::{Answer, Body, Caller, Env, as_user, full};
use crate::upgrading_member::UpgradingMember;

/// How long any single step may take before the test fails instead of hanging.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// The path of an exec in pod `default/{pod}`, with the query kubectl sends.
pub(crate) fn exec_path(pod: &str) -> String {
    format!("/api/v1/namespaces/default/pods/{pod}/exec?command=sh&stdin=true&stdout=true")
}

/// `request` with the headers of a WebSocket upgrade as `kubectl exec` sends it (`v5.channel.k8s.io`).
pub(crate) fn with_websocket(mut request: http::Request<Body>) -> http::Request<Body> {
    let headers = request.headers_mut();
    for (name, value) in [
        ("connection", "Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("sec-websocket-version", "13"),
        (
            "sec-websocket-protocol",
            "v5.channel.k8s.io, v4.channel.k8s.io",
        ),
    ] {
        headers.append(name, value.parse().expect("a header value"));
    }
    request
}

/// A WebSocket exec in `pod` of `cluster` as the front proxy asserting `user`, carrying identity headers of
/// the caller's own that must never reach the member.
pub(crate) fn websocket_exec(
    env: &Env,
    user: &str,
    cluster: &str,
    pod: &str,
) -> http::Request<Body> {
    let url = proxy_url(env, cluster, &exec_path(pod));
    let mut request = with_websocket(as_user("GET", &url, user, &TOM, full("")));
    let headers = request.headers_mut();
    for (name, value) in [
        ("authorization", "Bearer the-callers-own"),
        ("impersonate-user", "someone-else"),
        ("impersonate-group", "system:masters"),
        ("x-remote-extra-scopes", "all"),
    ] {
        headers.append(name, value.parse().expect("a header value"));
    }
    request
}

/// What kubectl's SPDY executor sends (`kubectl attach`, or exec on an older kubectl).
pub(crate) fn spdy(env: &Env, cluster: &str, pod: &str, subresource: &str) -> http::Request<Body> {
    let mut request = as_user(
        "POST",
        &proxy_url(
            env,
            cluster,
            &format!("/api/v1/namespaces/default/pods/{pod}/{subresource}?stdout=true"),
        ),
        "tom",
        &TOM,
        full(""),
    );
    let headers = request.headers_mut();
    for (name, value) in [
        ("connection", "Upgrade"),
        ("upgrade", "SPDY/3.1"),
        ("x-stream-protocol-version", "v4.channel.k8s.io"),
        ("x-stream-protocol-version", "v3.channel.k8s.io"),
    ] {
        headers.append(name, value.parse().expect("a header value"));
    }
    request
}

/// Sends `request`, expects 101, and returns the response headers and the switched connection.
pub(crate) async fn switch(
    caller: &Caller,
    request: http::Request<Body>,
) -> (http::HeaderMap, TokioIo<Upgraded>) {
    let mut response = tokio::time::timeout(PATIENCE, caller.send(request))
        .await
        .expect("an answer in time")
        .expect("an answer");
    if response.status() != http::StatusCode::SWITCHING_PROTOCOLS {
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        panic!("{status}: {}", String::from_utf8_lossy(&body));
    }
    let upgraded = tokio::time::timeout(PATIENCE, hyper::upgrade::on(&mut response))
        .await
        .expect("switched in time")
        .expect("switched");
    (response.headers().clone(), TokioIo::new(upgraded))
}

/// Reads from `io` until `expected` has arrived, or fails.
pub(crate) async fn read_exactly(io: &mut TokioIo<Upgraded>, expected: &[u8]) {
    let mut got = vec![0; expected.len()];
    tokio::time::timeout(PATIENCE, io.read_exact(&mut got))
        .await
        .expect("read in time")
        .expect("read");
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(expected)
    );
}

/// The request of `member` on `subresource`.
pub(crate) fn seen_on(requests: &[Recorded], subresource: &str) -> Recorded {
    requests
        .iter()
        .rev()
        .find(|r| r.path.ends_with(subresource))
        .cloned()
        .unwrap_or_else(|| panic!("no request on {subresource}: {requests:?}"))
}

pub(crate) fn value(headers: &http::HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn an_upgrade_switches_end_to_end_as_the_caller() {
    let env = Env::start().await;
    let mut member = UpgradingMember::start("m1", vec!["web"]).await;
    member
        .register_as(&env.control.client, "m1", "imp-m1")
        .await;
    let caller = env.front_proxy();

    // WebSocket, as kubectl exec sends it: the member's 101 and the headers of its choice reach the caller.
    let (headers, mut io) = switch(&caller, websocket_exec(&env, "tom", "m1", "web")).await;
    assert_eq!(value(&headers, "upgrade"), "websocket");
    assert_eq!(
        value(&headers, "sec-websocket-accept"),
        "accepted-dGhlIHNhbXBsZSBub25jZQ=="
    );
    assert_eq!(
        value(&headers, "sec-websocket-protocol"),
        "v5.channel.k8s.io"
    );
    assert_eq!(value(&headers, "x-member"), "m1");

    // Bytes flow both ways: the member speaks first, then echoes what the caller writes, large writes too.
    read_exactly(&mut io, b"hello from m1\n").await;
    io.write_all(b"ping\n").await.expect("written");
    read_exactly(&mut io, b"ping\n").await;
    let large: Vec<u8> = (0..256 * 1024).map(|i| (i % 251) as u8).collect();
    let (mut reading, mut writing) = tokio::io::split(io);
    let sent = large.clone();
    let writer = tokio::spawn(async move {
        writing.write_all(&sent).await.expect("written");
        writing
    });
    let mut echoed = vec![0; large.len()];
    tokio::time::timeout(PATIENCE, reading.read_exact(&mut echoed))
        .await
        .expect("the echo in time")
        .expect("the echo");
    assert!(echoed == large, "the echo differs from what was sent");

    // The caller closing ends the member's side too.
    let mut writing = writer.await.expect("the writer ends");
    writing.shutdown().await.expect("shut down");
    drop((reading, writing));
    let closed = tokio::time::timeout(PATIENCE, member.closed.recv())
        .await
        .expect("the member sees the close in time");
    assert_eq!(closed.as_deref(), Some("m1"));

    // The member saw the request as the impersonator acting as tom, with the switch's own headers.
    let seen = seen_on(&member.requests(), "/exec");
    assert_eq!(seen.method, "GET");
    assert_eq!(seen.path, "/api/v1/namespaces/default/pods/web/exec");
    assert_eq!(
        seen.query.as_deref(),
        Some("command=sh&stdin=true&stdout=true")
    );
    assert_eq!(seen.values("authorization"), ["Bearer imp-m1"]);
    assert_eq!(seen.values("impersonate-user"), ["tom"]);
    assert_eq!(seen.values("impersonate-group"), ["devs"]);
    assert_eq!(seen.values("upgrade"), ["websocket"]);
    assert_eq!(seen.values("connection"), ["Upgrade"]);
    assert_eq!(
        seen.values("sec-websocket-key"),
        ["dGhlIHNhbXBsZSBub25jZQ=="]
    );
    assert_eq!(seen.values("sec-websocket-version"), ["13"]);
    assert_eq!(
        seen.values("sec-websocket-protocol"),
        ["v5.channel.k8s.io, v4.channel.k8s.io"]
    );
    let identity: Vec<&str> = seen
        .headers
        .keys()
        .map(http::HeaderName::as_str)
        .filter(|name| name.starts_with("x-remote-") || name.starts_with("impersonate-"))
        .filter(|name| !["impersonate-user", "impersonate-group"].contains(name))
        .collect();
    assert!(identity.is_empty(), "{identity:?}");

    // SPDY, as kubectl attach sends it; the member ending the session ends the caller's connection.
    let (headers, mut io) = switch(&caller, spdy(&env, "m1", "bye", "attach")).await;
    assert_eq!(value(&headers, "upgrade"), "SPDY/3.1");
    assert_eq!(
        value(&headers, "x-stream-protocol-version"),
        "v4.channel.k8s.io"
    );
    let mut rest = Vec::new();
    tokio::time::timeout(PATIENCE, io.read_to_end(&mut rest))
        .await
        .expect("the end in time")
        .expect("read to the end");
    assert_eq!(rest, b"bye\n");
    let seen = seen_on(&member.requests(), "/attach");
    assert_eq!(seen.method, "POST");
    assert_eq!(
        seen.values("x-stream-protocol-version"),
        ["v4.channel.k8s.io", "v3.channel.k8s.io"]
    );
    assert_eq!(seen.values("authorization"), ["Bearer imp-m1"]);
    env.stop().await;
}

#[tokio::test]
async fn a_member_refusing_the_upgrade_is_answered_as_it_answered() {
    let env = Env::start().await;
    let member = UpgradingMember::start("m1", vec!["web"]).await;
    member
        .register_as(&env.control.client, "m1", "imp-m1")
        .await;
    let caller = env.front_proxy();
    let call = |pod: &'static str| {
        let (caller, request) = (caller.clone(), websocket_exec(&env, "tom", "m1", pod));
        async move {
            tokio::time::timeout(PATIENCE, caller.call(request))
                .await
                .expect("an answer in time")
        }
    };

    for (pod, code, message) in [
        ("refused", 400, "Upgrade request required"),
        ("ghost", 404, "pods \"ghost\" not found"),
    ] {
        let answer: Answer = call(pod).await;
        assert_eq!(answer.status, code, "{}", answer.text());
        assert_eq!(answer.json()["message"], message);
        assert_eq!(value(&answer.headers, "content-type"), "application/json");
        assert_eq!(value(&answer.headers, "x-member"), "refusing");
        assert!(!answer.headers.contains_key(header::UPGRADE));
    }

    // Neither a switch nor a refusal: Karmada's upgrade-aware handler's error.
    let plain = call("plain").await;
    assert_eq!(plain.status, 500, "{}", plain.text());
    assert_eq!(
        plain.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "invalid upgrade response: status code 200", "code": 500})
    );
    assert_eq!(member.requests().len(), 3);
    env.stop().await;
}

/// The control plane's client, with SubjectAccessReviews about `denied` answered "not allowed", as a control
/// plane whose RBAC gives that user nothing answers them (the embedded one allows every user).
fn denying(denied: &'static str) -> impl FnOnce(Client) -> Client {
    move |inner: Client| {
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let inner = inner.clone();
            async move {
                if request.uri().path() != "/apis/authorization.k8s.io/v1/subjectaccessreviews" {
                    return inner.send(request).await;
                }
                let (parts, body) = request.into_parts();
                let bytes = body.collect().await?.to_bytes();
                let mut review: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                if review["spec"]["user"] != denied {
                    let body = kube::client::Body::from(bytes);
                    return inner.send(http::Request::from_parts(parts, body)).await;
                }
                review["status"] = json!({"allowed": false, "reason": "the test denies it"});
                let answer = http::Response::builder()
                    .status(201)
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(Bytes::from(review.to_string())))
                    .expect("a response");
                Ok(answer)
            }
        });
        Client::new(service, "default")
    }
}

#[tokio::test]
async fn a_caller_denied_the_proxy_never_reaches_the_member() {
    let env = Env::start_with(denying("mallory")).await;
    let member = UpgradingMember::start("m1", vec!["web"]).await;
    member
        .register_as(&env.control.client, "m1", "imp-m1")
        .await;
    let caller = env.front_proxy();

    let denied = caller
        .call(websocket_exec(&env, "mallory", "m1", "web"))
        .await;
    assert_eq!(denied.status, 403, "{}", denied.text());
    assert_eq!(
        denied.json()["message"],
        "clusters.cluster.karmada.io \"m1\" is forbidden: User \"mallory\" cannot get resource \"clusters/proxy\" in \
         API group \"cluster.karmada.io\" at the cluster scope: the test denies it"
    );
    assert!(member.requests().is_empty(), "{:?}", member.requests());

    // The same request as a caller the control plane allows switches.
    let (_, mut io) = switch(&caller, websocket_exec(&env, "tom", "m1", "web")).await;
    read_exactly(&mut io, b"hello from m1\n").await;
    env.stop().await;
}

#[tokio::test]
async fn all_clusters_upgrade_in_the_one_holding_the_pod() {
    let env = Env::start().await;
    let a = UpgradingMember::start("a", vec!["web"]).await;
    let b = UpgradingMember::start("b", vec!["db"]).await;
    a.register_as(&env.control.client, "a", "imp-a").await;
    b.register_as(&env.control.client, "b", "imp-b").await;
    let caller = env.front_proxy();

    let (headers, mut io) = switch(&caller, websocket_exec(&env, "tom", "*", "web")).await;
    assert_eq!(value(&headers, "x-member"), "a");
    read_exactly(&mut io, b"hello from a\n").await;
    io.write_all(b"through *\n").await.expect("written");
    read_exactly(&mut io, b"through *\n").await;

    // Both were asked for the pod itself (exec dropped, as Karmada's requestURLStr drops it), as tom; only
    // the one holding it got the exec.
    for (member, token) in [(&a, "Bearer imp-a"), (&b, "Bearer imp-b")] {
        let probe = seen_on(&member.requests(), "/pods/web");
        assert_eq!(probe.method, "GET");
        assert_eq!(probe.values("authorization"), [token]);
        assert_eq!(probe.values("impersonate-user"), ["tom"]);
        assert!(probe.values("upgrade").is_empty());
    }
    let exec = seen_on(&a.requests(), "/exec");
    assert_eq!(exec.values("upgrade"), ["websocket"]);
    assert!(
        b.requests().iter().all(|r| !r.path.ends_with("/exec")),
        "{:?}",
        b.requests()
    );

    // A pod no cluster holds is Karmada's 404, with nothing switched.
    let none = caller.call(websocket_exec(&env, "tom", "*", "ghost")).await;
    assert_eq!(
        (none.status, none.text().as_str()),
        (
            404,
            "resource not found or don't have permission to get it\n"
        )
    );
    env.stop().await;
}

#[tokio::test]
async fn stopping_the_server_ends_upgraded_connections() {
    let env = Env::start().await;
    let mut member = UpgradingMember::start("m1", vec!["web"]).await;
    member
        .register_as(&env.control.client, "m1", "imp-m1")
        .await;
    let (_, mut io) = switch(&env.front_proxy(), websocket_exec(&env, "tom", "m1", "web")).await;
    read_exactly(&mut io, b"hello from m1\n").await;
    env.stop().await;
    // The caller's connection ends (whatever the member would still say), and so does the member's.
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(PATIENCE, io.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the caller's connection is still open");
    let closed = tokio::time::timeout(PATIENCE, member.closed.recv())
        .await
        .expect("the member sees the close in time");
    assert_eq!(closed.as_deref(), Some("m1"));
}
