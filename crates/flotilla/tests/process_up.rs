//! Starts real `flotilla up` processes: the ready line and kubeconfigs, registered members with their
//! credentials, the workload simulator, SIGTERM, and resuming on the same data dir.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::process::Command;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use serde_json::json;

use common::{client, eventually, up};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_registers_members_simulates_workloads_and_resumes_after_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let first = up(dir.path(), &["--members", "2"]);
    let progress = first.progress();
    assert!(
        progress
            .iter()
            .any(|l| l.contains("registered member1, member2")),
        "{progress:?}"
    );

    let karmada = client(&first.karmada, "karmada-apiserver").await;
    let clusters: Api<Cluster> = Api::all(karmada.clone());
    let mut names = Vec::new();
    for cluster in clusters.list(&Default::default()).await.unwrap() {
        assert_eq!(cluster.spec.sync_mode, ClusterSyncMode::Push);
        let secret_ref = cluster.spec.secret_ref.clone().unwrap();
        assert_eq!(secret_ref.namespace, "karmada-cluster");
        let secret: Secret = Api::namespaced(karmada.clone(), "karmada-cluster")
            .get(&secret_ref.name)
            .await
            .unwrap();
        let data = secret.data.unwrap();
        assert!(data.contains_key("token") && data.contains_key("caBundle"));
        // The impersonator's token, issued by the member's own token controller.
        let name = cluster.name_any();
        let reference = cluster.spec.impersonator_secret_ref.clone().unwrap();
        assert_eq!(
            (reference.namespace.as_str(), reference.name),
            ("karmada-cluster", format!("{name}-impersonator"))
        );
        let impersonator: Secret = Api::namespaced(karmada.clone(), "karmada-cluster")
            .get(&format!("{name}-impersonator"))
            .await
            .unwrap();
        assert!(!impersonator.data.unwrap()["token"].0.is_empty());
        assert!(
            !cluster.spec.id.is_empty(),
            "spec.id is the member's kube-system uid"
        );
        names.push(cluster.name_any());
    }
    names.sort();
    assert_eq!(names, ["member1", "member2"]);
    // system:admin may proxy to the members (as `karmadactl init` grants it), and the unified-auth controller lets
    // each member's impersonator impersonate it, and system:masters (cluster-admin's group). So may the user the
    // bootstrap-token configuration grants everything, system:karmada:agent:rbac-generator, and kube-controller-
    // manager's user, whose bootstrap role lists every resource, as in Karmada on a kube-apiserver.
    let binding: ClusterRoleBinding = Api::all(karmada.clone())
        .get("cluster-proxy-admin")
        .await
        .unwrap();
    assert_eq!(binding.subjects.unwrap()[0].name, "system:admin");
    let member1 = client(&first.members, "member1").await;
    let roles: Api<ClusterRole> = Api::all(member1);
    eventually("member1's impersonator to impersonate system:admin, the RBAC generator and system:masters", || async {
        let role = roles.get("karmada-impersonator").await.ok()?;
        (serde_json::to_value(role.rules).ok()?
            == json!([
                {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"],
                    "resourceNames": ["system:admin", "system:karmada:agent:rbac-generator",
                        "system:kube-controller-manager"]},
                {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["groups"], "resourceNames": ["system:masters"]},
            ]))
        .then_some(())
    })
    .await;
    let uid_before = clusters.get("member1").await.unwrap().uid();

    // Each member context reaches its own server, with seeded Nodes and a simulator.
    let member2 = client(&first.members, "member2").await;
    let nodes: Api<Node> = Api::all(member2.clone());
    assert_eq!(
        nodes.list(&Default::default()).await.unwrap().items.len(),
        3
    );
    let deployments: Api<Deployment> = Api::namespaced(member2.clone(), "default");
    let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
    deployments
        .create(&PostParams::default(), &serde_json::from_value(d).unwrap())
        .await
        .unwrap();
    eventually("the simulator to make web ready", || async {
        let d = deployments.get("web").await.ok()?;
        (d.status?.ready_replicas == Some(2)).then_some(())
    })
    .await;
    first.terminate();

    // Same data dir: everything is still there, registration converges instead of failing.
    let second = up(dir.path(), &["--members", "2"]);
    let karmada = client(&second.karmada, "karmada-apiserver").await;
    let clusters: Api<Cluster> = Api::all(karmada);
    assert_eq!(clusters.get("member1").await.unwrap().uid(), uid_before);
    let member2 = client(&second.members, "member2").await;
    let deployments: Api<Deployment> = Api::namespaced(member2, "default");
    let web = deployments.get("web").await.unwrap();
    assert_eq!(web.status.unwrap().ready_replicas, Some(2));
    second.terminate();
}

#[test]
fn up_fails_cleanly_when_its_port_is_taken() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["up", "--port", &port, "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: ") && last.contains(&port),
        "one-line error naming the port: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no ready line on failure");
}
