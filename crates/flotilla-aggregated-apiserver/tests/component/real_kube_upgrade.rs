//! Upgrades behind a real kube-apiserver's aggregator (run by `real_kube`, with this server registered):
//! an exec the member switches flows both ways through kube-aggregator and this server, a caller the control
//! plane's RBAC refuses gets its 403, and, given a real member (`FLOTILLA_AGGAPI_MEMBER_KUBECONFIG`, a member of
//! `hack/kube.sh` with KWOK's fake Nodes), `kubectl exec` through the proxy ends exactly as it does directly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Patch, PatchParams, PostParams};
use kube::config::Kubeconfig;
use kube::{Api, Client};
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::member::register as register_cluster;
use crate::support::{eventually_within, kubectl};
use crate::upgrade::{PATIENCE, exec_path, read_exactly, seen_on, value};
use crate::upgrading_member::UpgradingMember;

/// The clusters this module registers (their Secrets are named after them).
pub(crate) const CLUSTERS: [&str; 2] = ["upgrading", "kwok"];

const PROXY: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";

/// A WebSocket exec upgrade of pod `default/web` of `cluster`, through the control plane.
fn exec_request(cluster: &str) -> http::Request<kube::client::Body> {
    let mut request = http::Request::get(format!("{PROXY}/{cluster}/proxy{}", exec_path("web")))
        .body(kube::client::Body::empty())
        .expect("a request");
    for (name, value) in [
        ("connection", "Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("sec-websocket-version", "13"),
        ("sec-websocket-protocol", "v5.channel.k8s.io"),
    ] {
        request
            .headers_mut()
            .insert(name, value.parse().expect("a header value"));
    }
    request
}

/// Runs the checks; `admin` and `tom` are kube's own (HTTP/1.1) clients of the control plane at `kubeconfig`,
/// tom allowed the proxy of cluster `fake` only.
pub(crate) async fn check(admin: &Client, tom: &Client, kubeconfig: &Path) {
    let member = UpgradingMember::start("upgrading", vec!["web"]).await;
    member
        .register_as(admin, "upgrading", "imp-upgrading")
        .await;

    // kube-aggregator passes the upgrade to this server, which passes it to the member: both ways.
    let mut answer = tokio::time::timeout(PATIENCE, admin.send(exec_request("upgrading")))
        .await
        .expect("an answer in time")
        .expect("an answer");
    assert_eq!(answer.status(), 101);
    assert_eq!(value(answer.headers(), "x-member"), "upgrading");
    let upgraded = tokio::time::timeout(PATIENCE, hyper::upgrade::on(&mut answer))
        .await
        .expect("switched in time")
        .expect("switched");
    let mut io = hyper_util::rt::TokioIo::new(upgraded);
    read_exactly(&mut io, b"hello from upgrading\n").await;
    io.write_all(b"through kube-aggregator\n")
        .await
        .expect("written");
    read_exactly(&mut io, b"through kube-aggregator\n").await;
    drop(io);
    let seen = seen_on(&member.requests(), "/exec");
    assert_eq!(seen.values("authorization"), ["Bearer imp-upgrading"]);
    assert_eq!(seen.values("impersonate-user"), ["system:admin"]);

    // tom may not use this cluster's proxy: the control plane's 403, and nothing reaches the member.
    let before = member.requests().len();
    let denied = tom
        .send(exec_request("upgrading"))
        .await
        .expect("an answer");
    assert_eq!(denied.status(), 403);
    assert_eq!(member.requests().len(), before);

    if let Ok(path) = std::env::var("FLOTILLA_AGGAPI_MEMBER_KUBECONFIG") {
        exec_as_directly(admin, kubeconfig, &PathBuf::from(path)).await;
    }
}

/// Registers the real member at `member_kubeconfig` as cluster `kwok` (its impersonator a ServiceAccount
/// bound to cluster-admin, as the unified-auth controller would allow the admin), runs a Pod on a KWOK Node,
/// and compares `kubectl exec` in it directly and through the proxy.
async fn exec_as_directly(control: &Client, kubeconfig: &Path, member_kubeconfig: &Path) {
    let parsed = Kubeconfig::read_from(member_kubeconfig).expect("the member's kubeconfig reads");
    let cluster = parsed.clusters[0].cluster.as_ref().expect("a cluster");
    let endpoint = cluster.server.clone().expect("a server");
    let ca = base64::engine::general_purpose::STANDARD
        .decode(cluster.certificate_authority_data.as_deref().expect("a CA"))
        .expect("base64");
    let member = flotilla_testing::client_from_file(member_kubeconfig, None).await;
    let apply = PatchParams::apply("test").force();
    let objects = [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karmada-cluster"}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "karmada-impersonator", "namespace": "karmada-cluster"}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "karmada-impersonator-test"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"kind": "ServiceAccount", "name": "karmada-impersonator", "namespace": "karmada-cluster"}]}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}),
    ];
    Api::<Namespace>::all(member.clone())
        .patch("karmada-cluster", &apply, &Patch::Apply(&objects[0]))
        .await
        .expect("namespace");
    let accounts = Api::<ServiceAccount>::namespaced(member.clone(), "karmada-cluster");
    accounts
        .patch("karmada-impersonator", &apply, &Patch::Apply(&objects[1]))
        .await
        .expect("service account");
    Api::<ClusterRoleBinding>::all(member.clone())
        .patch(
            "karmada-impersonator-test",
            &apply,
            &Patch::Apply(&objects[2]),
        )
        .await
        .expect("binding");
    let pods = Api::<Pod>::namespaced(member.clone(), "default");
    pods.patch("web", &apply, &Patch::Apply(&objects[3]))
        .await
        .expect("pod");
    let request: TokenRequest =
        serde_json::from_value(json!({"spec": {"expirationSeconds": 3600}})).expect("a request");
    let token = accounts
        .create_token_request("karmada-impersonator", &PostParams::default(), &request)
        .await
        .expect("a token")
        .status
        .and_then(|status| status.token)
        .expect("a token");
    register_cluster(control, "kwok", &endpoint, &ca, Some(&token), |_| {}).await;
    eventually_within(
        Duration::from_secs(60),
        "the pod to run on a KWOK node",
        || async {
            let pod = pods.get("web").await.ok()?;
            (pod.status?.phase.as_deref() == Some("Running")).then_some(())
        },
    )
    .await;

    let server = format!(
        "{}{PROXY}/kwok/proxy",
        parsed_server(kubeconfig).trim_end_matches('/')
    );
    let exec = ["exec", "web", "-n", "default", "--", "echo", "hi"];
    for bin in flotilla_testing::kubectl::kubectl_bins() {
        let directly = kubectl(&bin, member_kubeconfig, &exec).await;
        let mut proxied_args = vec!["--server", server.as_str()];
        proxied_args.extend(exec);
        let proxied = kubectl(&bin, kubeconfig, &proxied_args).await;
        eprintln!("{bin} exec directly: {directly:?}\n{bin} exec through the proxy: {proxied:?}");
        assert_eq!(proxied, directly, "{bin}");
    }
    let _ = pods.delete("web", &Default::default()).await;
}

fn parsed_server(kubeconfig: &Path) -> String {
    let parsed = Kubeconfig::read_from(kubeconfig).expect("the kubeconfig reads");
    parsed.clusters[0]
        .cluster
        .as_ref()
        .and_then(|c| c.server.clone())
        .expect("a server")
}
