//! `clusters/{name}/proxy`: what a member receives (path, query, the impersonator's token and the caller's
//! name and groups, nothing of the caller's own credentials), streaming both ways, Karmada's errors, the
//! `*` fan-out, and a real embedded member.

use std::sync::Mutex;

use bytes::Bytes;
use flotilla_api::cluster::v1alpha1::LocalSecretReference;
use futures::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use serde_json::json;
use tokio::sync::mpsc;

use crate::member::{Behaviour, FakeMember, register, register_embedded};
use crate::support::{Body, Embedded, Env, as_user, full};

pub(crate) const TOM: [&str; 2] = ["devs", "system:authenticated"];

/// A request of `method` on `url` as the front proxy asserting tom in `TOM`'s groups.
fn as_tom(method: &str, url: &str, body: Body) -> http::Request<Body> {
    as_user(method, url, "tom", &TOM, body)
}

pub(crate) fn proxy_url(env: &Env, cluster: &str, path: &str) -> String {
    format!(
        "{}/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}/proxy{path}",
        env.url
    )
}

#[tokio::test]
async fn the_member_sees_the_impersonator_and_the_caller_only() {
    let env = Env::start().await;
    let member = FakeMember::start(Behaviour::default()).await;
    register(
        &env.control.client,
        "m1",
        &member.url,
        &member.ca_pem,
        Some("imp-m1"),
        |_| {},
    )
    .await;
    let caller = env.front_proxy();

    let mut request = as_tom(
        "GET",
        &proxy_url(
            &env,
            "m1",
            "/api/v1/namespaces/default/configmaps?limit=5&labelSelector=a%3Db",
        ),
        full(""),
    );
    let headers = request.headers_mut();
    headers.insert(
        "authorization",
        "Bearer the-callers-own".parse().expect("header"),
    );
    headers.insert("impersonate-user", "someone-else".parse().expect("header"));
    headers.insert("x-remote-extra-scopes", "all".parse().expect("header"));
    headers.insert("x-custom", "kept".parse().expect("header"));
    let answer = caller.call(request).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(
        answer.json(),
        json!({"echo": "/api/v1/namespaces/default/configmaps"})
    );

    let seen = member.requests().pop().expect("the member was called");
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("GET", "/api/v1/namespaces/default/configmaps")
    );
    assert_eq!(seen.query.as_deref(), Some("limit=5&labelSelector=a%3Db"));
    assert_eq!(seen.values("authorization"), ["Bearer imp-m1"]);
    assert_eq!(seen.values("impersonate-user"), ["tom"]);
    assert_eq!(seen.values("impersonate-group"), ["devs"]);
    assert_eq!(seen.values("x-custom"), ["kept"]);
    let identity_headers: Vec<&str> = seen
        .headers
        .keys()
        .map(http::HeaderName::as_str)
        .filter(|name| {
            name.starts_with("x-remote-")
                || name.starts_with("impersonate-extra")
                || *name == "impersonate-uid"
        })
        .collect();
    assert!(identity_headers.is_empty(), "{identity_headers:?}");

    let mut post = as_tom(
        "POST",
        &proxy_url(&env, "m1", "/api/v1/namespaces"),
        full(r#"{"metadata":{"name":"n"}}"#),
    );
    post.headers_mut()
        .insert("content-type", "application/json".parse().expect("header"));
    assert_eq!(caller.call(post).await.status, 200);
    let seen = member.requests().pop().expect("the member was called");
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("POST", "/api/v1/namespaces")
    );
    assert_eq!(seen.body, r#"{"metadata":{"name":"n"}}"#);
    assert_eq!(seen.values("content-type"), ["application/json"]);

    // The proxy root and paths Go's path.Join would clean.
    caller
        .call(as_tom("GET", &proxy_url(&env, "m1", "/"), full("")))
        .await;
    assert_eq!(
        member.requests().pop().map(|r| r.path).as_deref(),
        Some("/")
    );
    caller
        .call(as_tom("GET", &proxy_url(&env, "m1", "/api/v1/"), full("")))
        .await;
    assert_eq!(
        member.requests().pop().map(|r| r.path).as_deref(),
        Some("/api/v1")
    );
    env.stop().await;
}

#[tokio::test]
async fn the_proxy_streams_both_ways() {
    let env = Env::start().await;
    let (feed, stream) = mpsc::channel(4);
    let (uploaded_tx, mut uploaded) = mpsc::channel(4);
    let member = FakeMember::start(Behaviour {
        stream: Mutex::new(Some(stream)),
        uploaded: Mutex::new(Some(uploaded_tx)),
        ..Behaviour::default()
    })
    .await;
    register(
        &env.control.client,
        "m1",
        &member.url,
        &member.ca_pem,
        Some("imp"),
        |_| {},
    )
    .await;
    let caller = env.front_proxy();

    // The member's answer arrives chunk by chunk while the member still writes it.
    let response = caller
        .send(as_tom("GET", &proxy_url(&env, "m1", "/stream"), full("")))
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    let mut frames = response.into_body().into_data_stream();
    feed.send(Bytes::from("first\n")).await.expect("fed");
    assert_eq!(
        frames.next().await.and_then(Result::ok).as_deref(),
        Some(&b"first\n"[..])
    );
    feed.send(Bytes::from("second\n")).await.expect("fed");
    assert_eq!(
        frames.next().await.and_then(Result::ok).as_deref(),
        Some(&b"second\n"[..])
    );
    drop(feed);
    assert!(frames.next().await.is_none());

    // The caller's body reaches the member chunk by chunk while the caller still writes it.
    let (send_chunk, chunks) = mpsc::channel::<Bytes>(4);
    let body = StreamBody::new(futures::stream::unfold(chunks, |mut chunks| async move {
        let chunk = chunks.recv().await?;
        Some((Ok::<_, std::io::Error>(Frame::data(chunk)), chunks))
    }));
    let upload: Body = BodyExt::boxed(body);
    let pending = {
        let caller = caller.clone();
        let request = as_tom("POST", &proxy_url(&env, "m1", "/upload"), upload);
        tokio::spawn(async move { caller.call(request).await })
    };
    send_chunk
        .send(Bytes::from("part one;"))
        .await
        .expect("sent");
    assert_eq!(uploaded.recv().await.as_deref(), Some(&b"part one;"[..]));
    send_chunk
        .send(Bytes::from("part two"))
        .await
        .expect("sent");
    assert_eq!(uploaded.recv().await.as_deref(), Some(&b"part two"[..]));
    drop(send_chunk);
    let answer = pending.await.expect("the upload ends");
    assert_eq!(answer.status, 201);
    let seen = member.requests().pop().expect("recorded");
    assert_eq!(seen.body, "part one;part two");
    env.stop().await;
}

#[tokio::test]
async fn proxy_errors_are_karmadas_and_name_the_cluster() {
    let env = Env::start().await;
    let member = FakeMember::start(Behaviour::default()).await;
    let client = &env.control.client;
    register(
        client,
        "no-ref",
        &member.url,
        &member.ca_pem,
        Some("t"),
        |spec| spec.impersonator_secret_ref = None,
    )
    .await;
    register(
        client,
        "no-token",
        &member.url,
        &member.ca_pem,
        None,
        |_| {},
    )
    .await;
    register(client, "no-endpoint", "", &member.ca_pem, Some("t"), |_| {}).await;
    register(
        client,
        "no-secret",
        &member.url,
        &member.ca_pem,
        Some("t"),
        |spec| {
            spec.impersonator_secret_ref = Some(LocalSecretReference {
                namespace: "karmada-cluster".into(),
                name: "absent".into(),
            });
        },
    )
    .await;
    register(
        client,
        "down",
        "https://127.0.0.1:1",
        &member.ca_pem,
        Some("t"),
        |_| {},
    )
    .await;
    let caller = env.front_proxy();
    let call = |cluster: &'static str| {
        let caller = caller.clone();
        let url = proxy_url(&env, cluster, "/api");
        async move { caller.call(as_tom("GET", &url, full(""))).await }
    };

    let missing = call("nope").await;
    assert_eq!(
        (missing.status, missing.json()["message"].as_str()),
        (404, Some("clusters.cluster.karmada.io \"nope\" not found"))
    );
    let no_ref = call("no-ref").await;
    assert_eq!(
        (no_ref.status, no_ref.json()["message"].as_str()),
        (
            500,
            Some("the impersonatorSecretRef of cluster no-ref is nil")
        )
    );
    let no_token = call("no-token").await;
    assert_eq!(
        no_token.json()["message"],
        "failed to get impresonateToken for cluster no-token: the impresonate token of cluster no-token is empty"
    );
    let no_endpoint = call("no-endpoint").await;
    assert_eq!(
        no_endpoint.json()["message"],
        "API endpoint of cluster no-endpoint should not be empty"
    );
    let no_secret = call("no-secret").await;
    assert_eq!(
        (no_secret.status, no_secret.json()["message"].as_str()),
        (404, Some("secrets \"absent\" not found"))
    );
    let down = call("down").await;
    assert_eq!(down.status, 503, "{}", down.text());
    assert!(
        down.json()["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("error trying to reach cluster down")),
        "{}",
        down.text()
    );
    assert!(member.requests().is_empty());
    env.stop().await;
}

#[tokio::test]
async fn all_clusters_fan_out_as_karmadas_aggregate() {
    let env = Env::start().await;
    let a = FakeMember::start(Behaviour {
        pods: vec!["web", "shared"],
        ..Behaviour::default()
    })
    .await;
    let b = FakeMember::start(Behaviour {
        pods: vec!["db", "shared"],
        ..Behaviour::default()
    })
    .await;
    register(
        &env.control.client,
        "a",
        &a.url,
        &a.ca_pem,
        Some("imp-a"),
        |_| {},
    )
    .await;
    register(
        &env.control.client,
        "b",
        &b.url,
        &b.ca_pem,
        Some("imp-b"),
        |_| {},
    )
    .await;
    let caller = env.front_proxy();
    let call = |method: &'static str, path: &'static str| {
        let caller = caller.clone();
        let url = proxy_url(&env, "*", path);
        async move { caller.call(as_tom(method, &url, full(""))).await }
    };

    let list = call("GET", "/api/v1/pods?limit=50").await;
    assert_eq!(list.status, 200, "{}", list.text());
    assert_eq!(
        list.json(),
        json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "5"}, "items": [
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shared"}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db"}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shared"}},
        ]})
    );
    let seen = a.requests().pop().expect("a was asked");
    assert_eq!(seen.query.as_deref(), Some("limit=50"));
    assert_eq!(seen.values("authorization"), ["Bearer imp-a"]);
    assert_eq!(seen.values("impersonate-user"), ["tom"]);

    let named = call("DELETE", "/api/v1/namespaces/default/pods/db").await;
    assert_eq!(named.status, 200, "{}", named.text());
    let deleted = b.requests().pop().expect("b got the delete");
    assert_eq!(
        (deleted.method.as_str(), deleted.path.as_str()),
        ("DELETE", "/api/v1/namespaces/default/pods/db")
    );
    assert!(
        a.requests().iter().all(|r| r.method == "GET"),
        "a was only probed"
    );

    let conflict = call("GET", "/api/v1/namespaces/default/pods/shared").await;
    assert_eq!(
        (conflict.status, conflict.text().as_str()),
        (
            409,
            "conflict resource, exist in more than one cluster: a,b\n"
        )
    );
    let none = call("GET", "/api/v1/namespaces/default/pods/ghost").await;
    assert_eq!(
        (none.status, none.text().as_str()),
        (
            404,
            "resource not found or don't have permission to get it\n"
        )
    );
    let watch = call("GET", "/api/v1/pods?watch=true").await;
    assert_eq!(
        (watch.status, watch.text().as_str()),
        (405, "Request verb watch is not support\n")
    );
    let create = call("POST", "/api/v1/namespaces/default/pods").await;
    assert_eq!(
        (create.status, create.text().as_str()),
        (405, "Request verb create is not support\n")
    );

    // A path naming no resource is the control plane's.
    let version = call("GET", "/version").await;
    assert_eq!(version.status, 200, "{}", version.text());
    assert_eq!(version.json(), flotilla_apiserver::server::version_info());
    env.stop().await;
}

#[tokio::test]
async fn a_real_embedded_member_answers_through_the_proxy() {
    let env = Env::start().await;
    let member = Embedded::start().await;
    register_embedded(&env.control.client, "real", &member).await;
    let caller = env.front_proxy();
    let namespaces = caller
        .call(as_tom(
            "GET",
            &proxy_url(&env, "real", "/api/v1/namespaces"),
            full(""),
        ))
        .await;
    assert_eq!(namespaces.status, 200, "{}", namespaces.text());
    let names: Vec<String> = namespaces.json()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    assert!(names.iter().any(|n| n == "default"), "{names:?}");

    // A watch through the proxy streams the member's events as they happen.
    let response = caller
        .send(as_tom(
            "GET",
            &proxy_url(
                &env,
                "real",
                "/api/v1/namespaces?watch=true&resourceVersion=0",
            ),
            full(""),
        ))
        .await
        .expect("a watch");
    assert_eq!(response.status(), 200);
    let mut frames = response.into_body().into_data_stream();
    Api::<Namespace>::all(member.client.clone())
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: ObjectMeta {
                    name: Some("made-later".into()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            },
        )
        .await
        .expect("created on the member");
    let mut seen = String::new();
    while !seen.contains("made-later") {
        let chunk = frames
            .next()
            .await
            .expect("the watch stays open")
            .expect("a chunk");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    env.stop().await;
}
