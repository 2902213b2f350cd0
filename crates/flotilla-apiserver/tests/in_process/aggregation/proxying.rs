//! Every verb, impersonation, watches and large bodies through the proxy.

use std::time::Duration;

use kube::api::{
    Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::{Value, json};

use super::backend::{GROUP, VERSION};
use super::*;

#[tokio::test]
async fn every_verb_reaches_the_backend_as_the_caller_over_the_front_proxy_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, backend) = setup(dir.path(), 200).await;
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &widgets_resource());
    let created = widgets
        .create(&PostParams::default(), &widget("w1", 1))
        .await
        .unwrap();
    assert_eq!(created.metadata.resource_version.as_deref(), Some("1"));
    assert_eq!(widgets.get("w1").await.unwrap().data["spec"]["size"], 1);
    assert_eq!(
        widgets.list(&Default::default()).await.unwrap().items.len(),
        1
    );
    let mut replaced = widget("w1", 2);
    replaced.metadata.resource_version = created.metadata.resource_version.clone();
    widgets
        .replace("w1", &PostParams::default(), &replaced)
        .await
        .unwrap();
    let patched = widgets
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"color": "red"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"], json!({"size": 2, "color": "red"}));
    widgets
        .delete("w1", &DeleteParams::default())
        .await
        .unwrap();
    assert!(widgets.get_opt("w1").await.unwrap().is_none());

    let seen = backend.seen_under(&format!("/apis/{GROUP}/{VERSION}/namespaces/{NS}/widgets"));
    let methods: Vec<&str> = seen.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(
        methods,
        ["POST", "GET", "GET", "PUT", "PATCH", "DELETE", "GET"]
    );
    for s in &seen {
        assert_eq!(s.client_cn, "front-proxy-client");
        assert_eq!(s.all("x-remote-user"), ["system:admin"], "{s:?}");
        assert_eq!(
            s.all("x-remote-group"),
            ["system:masters", "system:authenticated"]
        );
        assert!(
            s.all("authorization").is_empty(),
            "the caller's token leaked: {s:?}"
        );
        assert_eq!(s.all("x-forwarded-for"), ["127.0.0.1"]);
        assert_eq!(s.all("x-forwarded-proto"), ["https"]);
        assert_eq!(
            s.all("x-forwarded-host"),
            [format!("127.0.0.1:{}", backend.addr.port())]
        );
        assert_eq!(s.all("x-forwarded-uri"), [s.path.as_str()]);
    }
    assert_eq!(
        seen[4].all("content-type"),
        ["application/merge-patch+json"]
    );
    // The availability check and discovery came as the aggregator itself.
    let checks = backend.seen_under(&format!("/apis/{GROUP}/{VERSION}"));
    assert!(
        checks
            .iter()
            .any(|s| s.path == format!("/apis/{GROUP}/{VERSION}")
                && s.all("x-remote-user") == ["system:kube-aggregator"]
                && s.all("x-remote-group") == ["system:masters"])
    );
    server.shutdown().await;
}

#[tokio::test]
async fn impersonation_reaches_the_backend_and_a_callers_own_identity_headers_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, backend) = setup(dir.path(), 200).await;
    let (http, url, token) = raw(&server);
    let path = format!("/apis/{GROUP}/{VERSION}/namespaces/{NS}/widgets");
    // kube-apiserver authorizes the impersonated user before the aggregator proxies.
    crate::common::grant(&client, NS, "jane", &["widgets"]).await;
    let r = http
        .get(format!("{url}{path}?b=2&a=x+y"))
        .header("Authorization", &token)
        .header("Impersonate-User", "jane")
        .header("Impersonate-Group", "dev")
        .header("Impersonate-Uid", "u-1")
        .header("Impersonate-Extra-Example.com%2fTeam", "blue")
        .header("X-Remote-User", "mallory")
        .header("X-Remote-Group", "system:masters")
        .header("X-Remote-Extra-Evil", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let seen = backend.seen_under(&path).pop().unwrap();
    assert_eq!(seen.all("x-remote-user"), ["jane"]);
    assert_eq!(seen.all("x-remote-uid"), ["u-1"]);
    assert_eq!(seen.all("x-remote-group"), ["dev", "system:authenticated"]);
    assert_eq!(seen.all("x-remote-extra-example.com%2fteam"), ["blue"]);
    assert!(seen.all("x-remote-extra-evil").is_empty());
    assert!(
        seen.headers.keys().all(|k| !k.starts_with("impersonate-")),
        "{seen:?}"
    );
    assert_eq!(
        seen.query, "a=x+y&b=2",
        "the query is re-encoded with sorted keys"
    );
    // Groups without a user are refused before anything is proxied, in kube's words.
    // Only requests under the widgets path count: the availability checker probes
    // the group-version path on its own schedule.
    let before = backend.seen_under(&path).len();
    let r = http
        .get(format!("{url}{path}"))
        .header("Authorization", &token)
        .header("Impersonate-Group", "dev")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let status: Value = r.json().await.unwrap();
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(
        status["message"],
        r#"requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"dev"}, Extra:map[string][]string(nil)} without impersonating a user name"#
    );
    assert_eq!(backend.seen_under(&path).len(), before);
    // Without credentials the request is the anonymous user's, whom authorization refuses before anything is
    // proxied.
    let r = http.get(format!("{url}{path}")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let status: Value = r.json().await.unwrap();
    assert_eq!(
        status["message"],
        format!(
            r#"widgets.{GROUP} is forbidden: User "system:anonymous" cannot list resource "widgets" in API group "{GROUP}" in the namespace "{NS}""#
        )
    );
    assert_eq!(backend.seen_under(&path).len(), before);
    // Once granted, the anonymous user's request goes through as that user's, as kube-aggregator sends it.
    crate::common::grant(&client, NS, "system:anonymous", &["widgets"]).await;
    let r = http.get(format!("{url}{path}")).send().await.unwrap();
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let seen = backend.seen_under(&path).pop().unwrap();
    assert_eq!(seen.all("x-remote-user"), ["system:anonymous"]);
    assert_eq!(seen.all("x-remote-group"), ["system:unauthenticated"]);
    server.shutdown().await;
}

#[tokio::test]
async fn watches_and_large_bodies_stream_through_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, _backend) = setup(dir.path(), 200).await;
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &widgets_resource());
    widgets
        .create(&PostParams::default(), &widget("first", 1))
        .await
        .unwrap();
    let stream = widgets.watch(&WatchParams::default(), "0").await.unwrap();
    let mut stream = Box::pin(stream);
    let mut next_name = async || -> String {
        let ev = tokio::time::timeout(
            Duration::from_secs(10),
            futures::StreamExt::next(&mut stream),
        )
        .await
        .expect("an event in time")
        .expect("the stream is open")
        .expect("a watch event");
        match ev {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => o.metadata.name.unwrap_or_default(),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(next_name().await, "first");
    // Created after the watch began: it arrives on the open response.
    widgets
        .create(&PostParams::default(), &widget("second", 2))
        .await
        .unwrap();
    assert_eq!(next_name().await, "second");
    widgets
        .patch(
            "first",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(next_name().await, "first");

    let (http, url, token) = raw(&server);
    let big = vec![b'x'; 8 << 20];
    let r = http
        .post(format!(
            "{url}/apis/{GROUP}/{VERSION}/namespaces/{NS}/sizes"
        ))
        .header("Authorization", &token)
        .header("Content-Type", "application/octet-stream")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let answer: Value = r.json().await.unwrap();
    assert_eq!(
        answer["received"],
        8 << 20,
        "larger than the server's own 3 MiB limit"
    );
    server.shutdown().await;
}

/// An HTTP/1.1 connection to the server (ALPN `http/1.1` only, as clients that upgrade connect).
async fn http1(
    server: &flotilla_apiserver::RunningServer,
) -> hyper::client::conn::http1::SendRequest<http_body_util::Empty<bytes::Bytes>> {
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(server.ca_pem().as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let stream = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let (send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn.with_upgrades());
    send
}

#[tokio::test]
async fn an_upgraded_connection_passes_through_to_the_backend() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let (server, _client, backend) = setup(dir.path(), 200).await;
    let mut send = http1(&server).await;
    let request = http::Request::post(format!("/apis/{GROUP}/{VERSION}/namespaces/{NS}/echo"))
        .header("Host", "localhost")
        .header("Authorization", format!("Bearer {}", server.admin_token()))
        .header("Connection", "Upgrade")
        .header("Upgrade", "SPDY/3.1")
        .body(http_body_util::Empty::new())
        .unwrap();
    let response = send.send_request(request).await.unwrap();
    assert_eq!(response.status(), 101);
    assert_eq!(response.headers()["upgrade"], "SPDY/3.1");
    let upgraded = hyper::upgrade::on(response).await.unwrap();
    let mut io = hyper_util::rt::TokioIo::new(upgraded);
    io.write_all(b"ping over the tunnel").await.unwrap();
    let mut echoed = [0u8; 20];
    tokio::time::timeout(Duration::from_secs(10), io.read_exact(&mut echoed))
        .await
        .expect("echoed in time")
        .unwrap();
    assert_eq!(&echoed, b"ping over the tunnel");
    let seen = backend.seen_under(&format!("/apis/{GROUP}/{VERSION}/namespaces/{NS}/echo"));
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].all("x-remote-user"), ["system:admin"]);
    assert_eq!(seen[0].all("upgrade"), ["SPDY/3.1"]);
    assert!(seen[0].all("authorization").is_empty());
    server.shutdown().await;
}
