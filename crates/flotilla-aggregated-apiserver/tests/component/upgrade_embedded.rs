//! Upgrades with real embedded API servers: a member whose pod no scheduler has bound (it runs no simulator), so
//! that its exec is refused at once, and a control plane whose aggregator passes upgrades on to this server, as
//! in `flotilla up`: an upgrade switches through both proxies, and kubectl exec ends with the member's answer.

use flotilla_testing::kubectl::kubectl_bins;
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::member::register_embedded;
use crate::support::{Aggregated, Caller, Embedded, Env, full, kubectl};
use crate::upgrade::{
    PATIENCE, exec_path, read_exactly, seen_on, spdy, switch, websocket_exec, with_websocket,
};
use crate::upgrading_member::UpgradingMember;

/// Registers the embedded `member` as cluster `real` holding Pod `default/web`.
async fn register_real(control: &Client, member: &Embedded) {
    register_embedded(control, "real", member).await;
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    }))
    .expect("a pod");
    Api::<Pod>::namespaced(member.client.clone(), "default")
        .create(&PostParams::default(), &pod)
        .await
        .expect("the pod is created on the member");
}

#[tokio::test]
async fn a_real_embedded_member_refuses_exec_into_an_unbound_pod_at_once() {
    let env = Env::start().await;
    let member = Embedded::start().await;
    register_real(&env.control.client, &member).await;
    let caller = env.front_proxy();
    // The embedded API server refuses an exec into a pod without a Node as kube-apiserver does, and serves no
    // attach: its answers are passed on.
    for (request, code, reason, message) in [
        (
            websocket_exec(&env, "tom", "real", "web"),
            400,
            "BadRequest",
            "pod web does not have a host assigned",
        ),
        (
            spdy(&env, "real", "web", "exec"),
            400,
            "BadRequest",
            "pod web does not have a host assigned",
        ),
        (
            spdy(&env, "real", "web", "attach"),
            404,
            "NotFound",
            "the server could not find the requested resource",
        ),
    ] {
        let answer = tokio::time::timeout(PATIENCE, caller.call(request))
            .await
            .expect("an answer in time, not a hang");
        assert_eq!(answer.status, code, "{}", answer.text());
        assert_eq!(answer.json()["reason"], reason);
        assert_eq!(answer.json()["message"], message);
    }
    env.stop().await;
}

#[tokio::test]
async fn behind_the_embedded_aggregator_upgrades_switch_and_kubectl_exec_ends() {
    // The embedded control plane with its own front proxy (not the test's), as `flotilla up` runs it.
    let aggregated = Aggregated::start().await;
    let control = &aggregated.control;
    let member = Embedded::start().await;
    register_real(&control.client, &member).await;
    let fake = UpgradingMember::start("fake", vec!["web"]).await;
    fake.register_as(&control.client, "fake", "imp-fake").await;
    let proxy = |cluster: &str| {
        format!(
            "{}/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}/proxy",
            control.server.url()
        )
    };

    // An exec the member switches: through the aggregator and this server, bytes flow both ways.
    let caller = Caller::new(control.server.ca_pem(), None);
    let mut request = with_websocket(
        http::Request::get(format!("{}{}", proxy("fake"), exec_path("web")))
            .body(full(""))
            .expect("a request"),
    );
    let bearer = format!("Bearer {}", control.server.admin_token());
    request.headers_mut().insert(
        http::header::AUTHORIZATION,
        bearer.parse().expect("a header value"),
    );
    let (_, mut io) = switch(&caller, request).await;
    read_exactly(&mut io, b"hello from fake\n").await;
    io.write_all(b"through two proxies\n")
        .await
        .expect("written");
    read_exactly(&mut io, b"through two proxies\n").await;
    let seen = seen_on(&fake.requests(), "/exec");
    assert_eq!(seen.values("authorization"), ["Bearer imp-fake"]);
    assert_eq!(seen.values("upgrade"), ["websocket"]);
    assert!(!seen.values("impersonate-user").is_empty(), "{seen:?}");
    drop(io);

    // kubectl exec in an unbound pod of the embedded member: WebSocket first, then SPDY, both refused by the
    // member; through both proxies kubectl ends at once, and says what it says directly to the member.
    let dir = tempfile::tempdir().expect("a directory");
    let through_control = dir.path().join("control");
    std::fs::write(&through_control, control.server.kubeconfig("control"))
        .expect("the kubeconfig is written");
    let to_member = dir.path().join("member");
    std::fs::write(&to_member, member.server.kubeconfig("member"))
        .expect("the kubeconfig is written");
    let server = proxy("real");
    let exec = ["exec", "web", "-n", "default", "--", "echo", "hi"];
    for bin in kubectl_bins() {
        let directly = kubectl(&bin, &to_member, &exec).await;
        let mut proxied_args = vec!["--server", server.as_str()];
        proxied_args.extend(exec);
        let proxied = kubectl(&bin, &through_control, &proxied_args).await;
        assert_eq!(proxied, directly, "{bin}");
        let (code, _, stderr) = proxied;
        assert_eq!(code, Some(1), "{bin}: {stderr}");
        assert!(
            stderr.contains("pod web does not have a host assigned"),
            "{bin}: {stderr}"
        );
    }
    aggregated.stop().await;
}
