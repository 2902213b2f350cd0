//! `flotilla member stop|start NAME` against a running `flotilla up`: a stopped member refuses connections and
//! its Cluster turns not Ready without anything deleted; started again it serves the same objects on the same
//! address and the Cluster is Ready again. Mistakes get one clear line: no `up` on the data dir, an unknown
//! member, a member already stopped or already running.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::path::Path;
use std::process::Command;

use flotilla_api::cluster::v1alpha1::Cluster;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::json;

use common::{client, eventually, up};

/// Runs `flotilla member ARGS --data-dir DIR`; returns (success, stdout, stderr).
fn member(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("member")
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

fn ready(cluster: &Cluster) -> Option<String> {
    cluster
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_member_refuses_connections_and_comes_back_with_its_objects() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = member(dir.path(), &["stop", "member2"]);
    assert!(!ok);
    assert!(
        err.starts_with("error: no flotilla up is running with data dir"),
        "{err}"
    );

    let running = up(
        dir.path(),
        &[
            "--members",
            "2",
            "--no-simulator",
            "--cluster-failure-threshold",
            "2s",
            "--cluster-success-threshold",
            "2s",
        ],
    );
    let member2 = client(&running.members, "member2").await;
    let config_maps: Api<ConfigMap> = Api::namespaced(member2.clone(), "default");
    let kept: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "kept"}})).unwrap();
    let created = config_maps
        .create(&PostParams::default(), &kept)
        .await
        .unwrap();

    let (ok, out, _) = member(dir.path(), &["stop", "member2"]);
    assert!(ok);
    assert!(out.starts_with("member member2 stopped"), "{out}");
    let refused = config_maps.get("kept").await.unwrap_err();
    assert!(
        format!("{refused:?}").contains("onnection refused"),
        "{refused:?}"
    );
    let (ok, _, err) = member(dir.path(), &["stop", "member2"]);
    assert!(!ok);
    assert_eq!(err, "error: member member2 is already stopped");
    let (ok, _, err) = member(dir.path(), &["stop", "member7"]);
    assert!(!ok);
    assert_eq!(
        err,
        "error: no member named member7 (members: member1, member2)"
    );

    // The control plane sees it go: Ready False once the failure threshold has passed.
    let karmada = client(&running.karmada, "karmada-apiserver").await;
    let clusters: Api<Cluster> = Api::all(karmada);
    eventually("member2 not Ready", || async {
        let cluster = clusters.get("member2").await.unwrap();
        (ready(&cluster).as_deref() == Some("False")).then_some(())
    })
    .await;

    let (ok, out, _) = member(dir.path(), &["start", "member2"]);
    assert!(ok);
    assert!(out.starts_with("member member2 serving again"), "{out}");
    let (ok, _, err) = member(dir.path(), &["start", "member2"]);
    assert!(!ok);
    assert_eq!(err, "error: member member2 is already running");
    let back = config_maps.get("kept").await.unwrap();
    assert_eq!(back.metadata.uid, created.metadata.uid);
    eventually("member2 Ready again", || async {
        let cluster = clusters.get("member2").await.unwrap();
        (ready(&cluster).as_deref() == Some("True")).then_some(())
    })
    .await;
    running.terminate();
    assert!(
        !dir.path().join("control.sock").exists(),
        "the control socket outlives flotilla up"
    );
}
