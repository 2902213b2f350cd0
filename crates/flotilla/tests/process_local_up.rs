//! `hack/local-up.sh`, the set-up command of README: the embedded mode (restarts keep every object) and the
//! kind mode, with `docker` and `kind` stand-ins whose "clusters" are `flotilla apiserver` processes, so the
//! script's CRD install, controller manager and `flotilla join` steps run for real.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use flotilla_api::cluster::v1alpha1::Cluster;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, PostParams};
use kube::config::Kubeconfig;
use kube::{Client, ResourceExt};
use serde_json::json;

use common::{client, eventually};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../hack/local-up.sh");

/// Kills, when dropped, every process whose pid a file in `pid_files` names (the script backgrounds them).
struct Reaper {
    pid_files: Vec<PathBuf>,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        for file in &self.pid_files {
            for pid in std::fs::read_to_string(file)
                .unwrap_or_default()
                .split_whitespace()
            {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
    }
}

/// The script with a private HOME, data dir and kube dir under `dir`, and `path` (if any) first on PATH.
fn script(dir: &Path, path: Option<&Path>, args: &[&str]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(SCRIPT)
        .args(args)
        .env("HOME", dir)
        .env("FLOTILLA_BIN", env!("CARGO_BIN_EXE_flotilla"))
        .env("FLOTILLA_DATA_DIR", dir.join("data"))
        .env("KUBE_DIR", dir.join("kube"))
        .env("FLOTILLA_READY_TIMEOUT", "30");
    if let Some(bin) = path {
        let inherited = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{inherited}", bin.display()));
    }
    cmd
}

/// Runs the script (see [`script`]) and asserts that it succeeds.
fn local_up(dir: &Path, path: Option<&Path>, env: &[(&str, &str)], args: &[&str]) -> Output {
    let out = script(dir, path, args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "local-up.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn contexts(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = Kubeconfig::read_from(path)
        .unwrap()
        .contexts
        .into_iter()
        .map(|c| c.name)
        .collect();
    names.sort();
    names
}

async fn wait_for_ready_clusters(control: &Client, expected: &[&str]) {
    let clusters: Api<Cluster> = Api::all(control.clone());
    eventually("every member to be joined and Ready", || {
        let clusters = clusters.clone();
        async move {
            let list = clusters.list(&Default::default()).await.ok()?;
            let mut ready: Vec<String> = list
                .items
                .iter()
                .filter(|c| {
                    c.status.as_ref().is_some_and(|s| {
                        s.conditions
                            .iter()
                            .any(|c| c.type_ == "Ready" && c.status == "True")
                    })
                })
                .map(|c| c.name_any())
                .collect();
            ready.sort();
            (ready == expected).then_some(())
        }
    })
    .await;
}

/// Checks the two kubeconfigs the script leaves in `dir/kube` and returns a control-plane client once both
/// members are joined and Ready.
async fn kubeconfigs_in_place_with_two_ready_members(dir: &Path) -> Client {
    let kube = dir.join("kube");
    assert_eq!(
        contexts(&kube.join("karmada.config")),
        ["karmada-apiserver"]
    );
    assert_eq!(
        contexts(&kube.join("members.config")),
        ["member1", "member2"]
    );
    let control = client(&kube.join("karmada.config"), "karmada-apiserver").await;
    wait_for_ready_clusters(&control, &["member1", "member2"]).await;
    control
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_mode_leaves_kubeconfigs_in_place_and_a_rerun_keeps_every_object() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper {
        pid_files: vec![dir.path().join("data/flotilla-up.pid")],
    };
    let env = [("FLOTILLA_LOCAL_UP_MODE", "embedded")];
    local_up(dir.path(), None, &env, &["--port", "0", "--members", "2"]);
    let control = kubeconfigs_in_place_with_two_ready_members(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(control, "default");
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "kept"}, "data": {"k": "v"}})).unwrap(),
    )
    .await
    .unwrap();
    let first_pid = std::fs::read_to_string(dir.path().join("data/flotilla-up.pid")).unwrap();

    let rerun = local_up(dir.path(), None, &env, &["--port", "0", "--members", "2"]);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(
        stderr.contains(&format!(
            "stopping the previous flotilla (pid {})",
            first_pid.trim()
        )),
        "{stderr}"
    );
    let control = kubeconfigs_in_place_with_two_ready_members(dir.path()).await;
    let cms: Api<ConfigMap> = Api::namespaced(control, "default");
    let kept = cms.get("kept").await.unwrap();
    assert_eq!(kept.data.unwrap()["k"], "v");

    // The first run's log is kept beside the second's, both plain text; the binary is linked where README
    // says, whatever profile or target dir built it.
    let data = dir.path().join("data");
    for log in ["flotilla-up.log.1", "flotilla-up.log"] {
        let text = std::fs::read_to_string(data.join(log)).unwrap();
        assert!(text.contains("flotilla up: ready in"), "{log}: {text}");
        assert!(!text.contains('\u{1b}'), "{log} has colour codes: {text}");
    }
    let linked = std::fs::canonicalize(data.join("bin/flotilla")).unwrap();
    assert_eq!(
        linked,
        std::fs::canonicalize(env!("CARGO_BIN_EXE_flotilla")).unwrap()
    );
}

/// Writes `docker` and `kind` stand-ins into `bin`: `docker info` succeeds; each kind cluster is a
/// `flotilla apiserver` on a free port whose kubeconfig names its context `kind-<name>` as kind does.
fn fake_kind(bin: &Path, state: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    std::fs::create_dir_all(state).unwrap();
    let docker = "#!/bin/sh\n[ \"$1\" = info ]\n";
    let kind = format!(
        r#"#!/usr/bin/env bash
set -e
S={state}
case "$1 $2" in
  "get clusters") ls "$S" | sed -n 's/\.config$//p' ;;
  "get kubeconfig") cat "$S/$4.config" ;;
  "create cluster")
    name=$4
    "{flotilla}" apiserver --listen 127.0.0.1:0 --data-dir "$S/$name.d" --kubeconfig-out "$S/$name.config" \
      --context "kind-$name" >"$S/$name.out" 2>/dev/null </dev/null &
    echo $! >>"$S/pids"
    for _ in $(seq 1 300); do grep -q '^ready' "$S/$name.out" && exit 0; sleep 0.1; done
    exit 1 ;;
  *) echo "fake kind: unexpected $*" >&2; exit 1 ;;
esac
"#,
        state = state.display(),
        flotilla = env!("CARGO_BIN_EXE_flotilla"),
    );
    for (name, text) in [("docker", docker), ("kind", kind.as_str())] {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        let status = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        assert!(status.success());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_mode_installs_crds_runs_the_controller_manager_and_joins_members() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, state) = (dir.path().join("bin"), dir.path().join("kind-state"));
    let _reaper = Reaper {
        pid_files: vec![dir.path().join("data/flotilla-up.pid"), state.join("pids")],
    };
    fake_kind(&bin, &state);
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let env = [("FLOTILLA_METRICS_ADDR", metrics_addr.as_str())];
    local_up(dir.path(), Some(&bin), &env, &["--members", "2"]);

    let control = kubeconfigs_in_place_with_two_ready_members(dir.path()).await;
    // system:admin may proxy to the members, as Karmada's deploy script grants it.
    let binding: ClusterRoleBinding = Api::all(control.clone())
        .get("cluster-proxy-admin")
        .await
        .unwrap();
    assert_eq!(binding.role_ref.name, "cluster-proxy-admin");
    assert_eq!(binding.subjects.unwrap()[0].name, "system:admin");
    let role: ClusterRole = Api::all(control.clone())
        .get("cluster-proxy-admin")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&role.rules).unwrap(),
        json!([{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/proxy"], "verbs": ["*"]}])
    );
    // The second run finds the clusters in place and only restarts the controller manager.
    let rerun = local_up(dir.path(), Some(&bin), &env, &["--members", "2"]);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(!stderr.contains("creating kind cluster"), "{stderr}");
    assert!(
        stderr.contains("stopping the previous flotilla"),
        "{stderr}"
    );
    wait_for_ready_clusters(&control, &["member1", "member2"]).await;
}

#[test]
fn kind_mode_refuses_flags_it_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    fake_kind(&bin, &dir.path().join("kind-state"));
    let out = script(dir.path(), Some(&bin), &["--no-simulator"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "in kind mode only --members N, --webhook-example and --no-webhook-example are supported, not '--no-simulator'"
        ),
        "{stderr}"
    );
}

/// Whether process `pid` runs (exists and is not a zombie).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_mode_serves_member3_with_an_agent_process_that_reruns_restart_and_local_down_stops() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, state) = (dir.path().join("bin"), dir.path().join("kind-state"));
    let data = dir.path().join("data");
    let agent_pid_file = data.join("agent-member3.pid");
    let _reaper = Reaper {
        pid_files: vec![
            data.join("flotilla-up.pid"),
            agent_pid_file.clone(),
            state.join("pids"),
        ],
    };
    fake_kind(&bin, &state);
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let env = [("FLOTILLA_METRICS_ADDR", metrics_addr.as_str())];
    let first = local_up(dir.path(), Some(&bin), &env, &["--members", "3"]);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("registering member3 in Pull mode"),
        "{stderr}"
    );
    assert!(
        stderr.contains("joining member2") && !stderr.contains("joining member3"),
        "{stderr}"
    );

    let control = client(&dir.path().join("kube/karmada.config"), "karmada-apiserver").await;
    wait_for_ready_clusters(&control, &["member1", "member2", "member3"]).await;
    let clusters: Api<Cluster> = Api::all(control.clone());
    let member3 = clusters.get("member3").await.unwrap();
    assert_eq!(
        member3.spec.sync_mode,
        flotilla_api::cluster::v1alpha1::ClusterSyncMode::Pull
    );
    // Registered with what karmada-agent reports by default.
    let reference = |name: &str| {
        Some(flotilla_api::cluster::v1alpha1::LocalSecretReference {
            namespace: "karmada-cluster".into(),
            name: name.into(),
        })
    };
    assert_eq!(member3.spec.secret_ref, reference("member3"));
    assert_eq!(
        member3.spec.impersonator_secret_ref,
        reference("member3-impersonator")
    );
    let first_agent = std::fs::read_to_string(&agent_pid_file).unwrap();
    assert!(alive(first_agent.trim()));

    // A rerun stops the agent and starts a new one, which serves member3 again.
    let rerun = local_up(dir.path(), Some(&bin), &env, &["--members", "3"]);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(
        stderr.contains(&format!(
            "stopping the previous flotilla (pid {})",
            first_agent.trim()
        )),
        "{stderr}"
    );
    let second_agent = std::fs::read_to_string(&agent_pid_file).unwrap();
    assert_ne!(first_agent, second_agent);
    assert!(alive(second_agent.trim()) && !alive(first_agent.trim()));
    wait_for_ready_clusters(&control, &["member1", "member2", "member3"]).await;

    // local-down stops it and forgets its pid.
    let down = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../hack/local-down.sh"
        ))
        .env("FLOTILLA_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(!alive(second_agent.trim()));
    assert!(!agent_pid_file.exists());
}
