//! `flotilla register --bootstrap-kubeconfig` and `flotilla agent --bootstrap-kubeconfig`: the agent obtains a
//! client certificate of user `system:karmada:agent:<cluster>` with the bootstrap token (approved by the
//! controller manager's `agentcsrapproving`), keeps it in the member, serves its cluster with it, and with
//! `certRotation` renews it with a self-agent request and goes on serving with the new one.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::process::Stdio;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use common::{client, eventually, flotilla, up};

/// The agent's kubeconfig kept in the member, if any.
async fn stored(member: &kube::Client) -> Option<String> {
    let secret = Api::<Secret>::namespaced(member.clone(), "karmada-system")
        .get("karmada-kubeconfig")
        .await
        .ok()?;
    let data = secret.data?.get("karmada-kubeconfig")?.0.clone();
    String::from_utf8(data).ok()
}

async fn client_of_kubeconfig(text: &str) -> kube::Client {
    let kubeconfig = Kubeconfig::from_yaml(text).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

fn ready(cluster: &Cluster) -> bool {
    cluster.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_bootstraps_its_own_certificate_and_rotates_it() {
    let dir = tempfile::tempdir().unwrap();
    let environment = up(dir.path(), &["--members", "2"]);
    let karmada = client(&environment.karmada, "karmada-apiserver").await;
    let member = client(&environment.members, "member2").await;

    // member2, a Push member, is registered again in Pull mode, its agent given a bootstrap token only.
    let bootstrap = dir.path().join("member2-bootstrap.config");
    let output = flotilla(&[
        "register",
        "member2",
        "--kubeconfig",
        environment.karmada.to_str().unwrap(),
        "--cluster-kubeconfig",
        environment.members.to_str().unwrap(),
        "--cluster-context",
        "member2",
        "--bootstrap-kubeconfig",
        bootstrap.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = std::fs::read_to_string(&bootstrap).unwrap();
    assert!(written.contains("token: "), "{written}");
    assert!(!written.contains("client-certificate-data"), "{written}");

    let mut agent = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["agent", "--bootstrap-kubeconfig"])
        .arg(&bootstrap)
        .arg("--cluster-kubeconfig")
        .arg(&environment.members)
        .args([
            "--cluster-context",
            "member2",
            "--cluster-name",
            "member2",
            "--controllers",
            "*,certRotation",
            "--cert-rotation-checking-interval",
            "1s",
            // A certificate fresh from the signer has a little less than all of its life left: renewed at once.
            "--cert-rotation-remaining-time-threshold",
            "0.999999",
        ])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let first = eventually("the agent to keep its own kubeconfig in the member", || {
        stored(&member)
    })
    .await;
    let review: SelfSubjectReview = Api::all(client_of_kubeconfig(&first).await)
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .unwrap();
    let user = review.status.unwrap().user_info.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:karmada:agent:member2")
    );
    assert!(
        user.groups
            .unwrap()
            .contains(&"system:karmada:agents".to_owned())
    );

    // The bootstrap request, approved as an agent's; then a renewal by the agent itself, approved as its own.
    let csrs: Api<CertificateSigningRequest> = Api::all(karmada.clone());
    let approved = |csr: &CertificateSigningRequest, message: &str| {
        csr.status.as_ref().is_some_and(|s| {
            s.conditions.iter().flatten().any(|c| {
                c.type_ == "Approved"
                    && c.reason.as_deref() == Some("AutoApproved")
                    && c.message.as_deref() == Some(message)
            })
        })
    };
    eventually(
        "the bootstrap and the renewal requests to be approved",
        || async {
            let list = csrs.list(&Default::default()).await.ok()?.items;
            let bootstrapped = list.iter().any(|csr| {
                csr.spec
                    .username
                    .as_deref()
                    .is_some_and(|u| u.starts_with("system:bootstrap:"))
                    && approved(
                        csr,
                        "Auto approving karmada agent certificate after SubjectAccessReview.",
                    )
            });
            let renewed = list.iter().any(|csr| {
                csr.spec.username.as_deref() == Some("system:karmada:agent:member2")
                    && approved(
                        csr,
                        "Auto approving self karmada agent certificate after SubjectAccessReview.",
                    )
            });
            (bootstrapped && renewed).then_some(())
        },
    )
    .await;
    let renewed = eventually("the stored certificate to be renewed", || async {
        stored(&member).await.filter(|now| *now != first)
    })
    .await;
    assert_ne!(renewed, first);

    // The agent serves member2 in Pull mode with its renewed certificate: the Lease goes on being renewed.
    let leases: Api<Lease> = Api::namespaced(karmada.clone(), "karmada-cluster");
    let clusters: Api<Cluster> = Api::all(karmada.clone());
    let renewed_at = jiff::Timestamp::now();
    eventually(
        "member2 to be a Ready Pull cluster whose Lease is renewed after the rotation",
        || async {
            let cluster = clusters.get("member2").await.ok()?;
            let lease = leases.get("member2").await.ok()?;
            let renew = lease.spec?.renew_time?.0;
            (cluster.spec.sync_mode == ClusterSyncMode::Pull
                && ready(&cluster)
                && renew > renewed_at)
                .then_some(())
        },
    )
    .await;
    let _ = agent.kill();
    let _ = agent.wait();
}
