//! Runs the real `flotilla join`, `flotilla controller-manager` and `flotilla unjoin` processes against
//! in-process API servers (a control plane with Karmada's CRDs and one member).
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::Cluster;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;

use common::{
    ControlPlaneAndMember, Proc, control_plane_and_member, controller_manager, eventually,
    flotilla, free_port, join_member1,
};

/// Status code of `GET path` on the admin listener (plain HTTP/1.0), or `None` when it does not answer.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let code = response.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, response))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_run_controllers_propagate_and_unjoin() {
    let dir = tempfile::tempdir().unwrap();
    // The control plane's server runs as long as it is held.
    let ControlPlaneAndMember {
        control: _control,
        member,
        karmada_config,
        member_config,
        control_client,
        member_client,
        clusters,
    } = control_plane_and_member(dir.path(), "member1").await;
    let joined = join_member1(&karmada_config, &member_config);
    assert_eq!(joined.trim(), "cluster(member1) is joined successfully");
    let cluster = clusters.get("member1").await.unwrap();
    assert_eq!(cluster.spec.api_endpoint, member.url());
    assert_eq!(
        cluster.spec.secret_ref.as_ref().unwrap().namespace,
        "karmada-cluster"
    );
    let secrets: Api<Secret> = Api::namespaced(control_client.clone(), "karmada-cluster");
    let secret = secrets.get("member1").await.unwrap();
    assert_eq!(
        secret.data.as_ref().unwrap()["token"].0,
        member.admin_token().as_bytes()
    );

    let port = free_port();
    let _manager = Proc(
        controller_manager(&karmada_config, port)
            .args(["--cluster-status-update-frequency", "1s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    eventually("/readyz to answer 200", || async {
        (http_get(port, "/readyz")?.0 == 200).then_some(())
    })
    .await;
    eventually("member1 to be Ready", || async {
        let cluster = clusters.get("member1").await.ok()?;
        cluster
            .status?
            .conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
            .then_some(())
    })
    .await;

    common::propagate_configmap_to_member1(&control_client, member_client, "settings").await;
    // The counter moves when the reconcile returns, which can be a moment after its apply reached the member.
    eventually(
        "the execution controller's reconciles in /metrics",
        || async {
            let (code, metrics) = http_get(port, "/metrics")?;
            (code == 200
                && metrics.contains(
                    "flotilla_controller_reconciles_total{controller=\"execution-controller\"}",
                ))
            .then_some(())
        },
    )
    .await;
    // The manager's admin listener serves the status page too, which `flotilla status --url` reads.
    let page = format!("http://127.0.0.1:{port}");
    let status = eventually(
        "flotilla status --url to show the ConfigMap applied",
        || {
            let page = page.clone();
            async move {
                let output = flotilla(&["status", "--url", &page]);
                let text = String::from_utf8_lossy(&output.stdout).into_owned();
                (output.status.success() && text.contains("Applied=True")).then_some(text)
            }
        },
    )
    .await;
    for expected in [
        "ConfigMap default/settings (v1)",
        "  policy        PropagationPolicy default/settings",
        "  clusters      member1=0",
    ] {
        assert!(status.contains(expected), "{expected:?} in:\n{status}");
    }

    let unjoined = flotilla(&[
        "unjoin",
        "member1",
        "--kubeconfig",
        karmada_config.to_str().unwrap(),
        "--wait",
        "25",
    ]);
    assert!(
        unjoined.status.success(),
        "{}",
        String::from_utf8_lossy(&unjoined.stderr)
    );
    assert!(clusters.get_opt("member1").await.unwrap().is_none());
    assert!(secrets.get_opt("member1").await.unwrap().is_none());
}

/// A member kubeconfig that says `insecure-skip-tls-verify: true` and carries no CA (as many kind and cloud
/// kubeconfigs do) registers a Cluster with `spec.insecureSkipTLSVerification`, which then becomes Ready; the
/// controller manager says once that the member's certificate is not verified, instead of once per handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_with_an_insecure_kubeconfig_becomes_ready_and_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    // The control plane's server runs as long as it is held.
    let ControlPlaneAndMember {
        control: _control,
        member,
        karmada_config,
        member_config,
        control_client,
        member_client,
        clusters,
    } = control_plane_and_member(dir.path(), "member1").await;
    let insecure: String = member
        .kubeconfig("member1")
        .lines()
        .map(
            |line| match line.split_once("certificate-authority-data:") {
                Some((indent, _)) => format!("{indent}insecure-skip-tls-verify: true\n"),
                None => format!("{line}\n"),
            },
        )
        .collect();
    assert!(
        insecure.contains("insecure-skip-tls-verify: true"),
        "{insecure}"
    );
    std::fs::write(&member_config, insecure).unwrap();
    join_member1(&karmada_config, &member_config);
    let cluster = clusters.get("member1").await.unwrap();
    assert!(cluster.spec.insecure_skip_tls_verification);
    let secrets: Api<Secret> = Api::namespaced(control_client.clone(), "karmada-cluster");
    let secret = secrets.get("member1").await.unwrap();
    assert!(!secret.data.as_ref().unwrap().contains_key("caBundle"));

    let port = free_port();
    let log = dir.path().join("controller-manager.log");
    let _manager = Proc(
        controller_manager(&karmada_config, port)
            .args(["--cluster-status-update-frequency", "1s"])
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let heartbeat = |cluster: &Cluster| {
        cluster.status.as_ref().and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == "Ready" && c.status == "True")
                .map(|c| c.last_transition_time.0)
        })
    };
    eventually("member1 to be Ready", || async {
        heartbeat(&clusters.get("member1").await.ok()?)
    })
    .await;
    // Several status rounds later (each one connects to the member again), still one warning.
    common::propagate_configmap_to_member1(&control_client, member_client.clone(), "probe").await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.matches("serving certificate is not verified").count(),
        1,
        "{text}"
    );
    assert!(!text.contains("Server cert bypassed"), "{text}");
}
