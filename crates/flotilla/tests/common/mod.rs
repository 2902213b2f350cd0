//! Helpers shared by the tests that start `flotilla` processes: the workspace's test support, named as these
//! tests use it.
#![allow(
    dead_code,
    unused_imports,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use kube::Client;

pub(crate) mod real_world;

pub(crate) use flotilla_testing::eventually;
pub(crate) use flotilla_testing::process::{Proc, free_port, start_ready};

/// A client for `context` of the kubeconfig at `path`.
pub(crate) async fn client(path: &Path, context: &str) -> Client {
    flotilla_testing::client_from_file(path, Some(context)).await
}

/// A client for the current context of `kubeconfig` (its text).
pub(crate) async fn client_of(kubeconfig: &str) -> Client {
    flotilla_testing::client_from_yaml(kubeconfig, None).await
}

/// An in-process API server on a free port, its data in `dir`, with one Node.
pub(crate) async fn in_process_server(dir: &Path) -> flotilla_apiserver::RunningServer {
    let mut config = flotilla_apiserver::ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir);
    config.nodes = 1;
    flotilla_apiserver::Server::start(config).await.unwrap()
}

/// A control plane with Karmada's CRDs and one member, in-process API servers under `dir`, with their kubeconfigs
/// written to `dir/karmada.config` (context `karmada-apiserver`) and `dir/<member>.config` (context `<member>`):
/// what the tests of `join` and `register` start from.
pub(crate) struct ControlPlaneAndMember {
    /// The control plane.
    pub control: flotilla_apiserver::RunningServer,
    /// The member.
    pub member: flotilla_apiserver::RunningServer,
    /// The control plane's kubeconfig file.
    pub karmada_config: PathBuf,
    /// The member's kubeconfig file.
    pub member_config: PathBuf,
    /// A client of the control plane.
    pub control_client: Client,
    /// A client of the member.
    pub member_client: Client,
    /// The control plane's Clusters.
    pub clusters: kube::Api<flotilla_api::cluster::v1alpha1::Cluster>,
}

/// Starts a [`ControlPlaneAndMember`] with member `name`.
pub(crate) async fn control_plane_and_member(dir: &Path, name: &str) -> ControlPlaneAndMember {
    let control = in_process_server(&dir.join("control")).await;
    let member = in_process_server(&dir.join(name)).await;
    let karmada_config = dir.join("karmada.config");
    let member_config = dir.join(format!("{name}.config"));
    std::fs::write(&karmada_config, control.kubeconfig("karmada-apiserver")).unwrap();
    std::fs::write(&member_config, member.kubeconfig(name)).unwrap();
    let control_client = client_of(&control.kubeconfig("karmada-apiserver")).await;
    let member_client = client_of(&member.kubeconfig(name)).await;
    let clusters = install_crds(&control_client).await;
    ControlPlaneAndMember {
        control,
        member,
        karmada_config,
        member_config,
        control_client,
        member_client,
        clusters,
    }
}

/// Installs Karmada's CRDs in the control plane and waits until Clusters are served.
pub(crate) async fn install_crds(
    control: &Client,
) -> kube::Api<flotilla_api::cluster::v1alpha1::Cluster> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: kube::Api<CustomResourceDefinition> = kube::Api::all(control.clone());
    for crd in flotilla_api::crds::all() {
        crds.create(&Default::default(), &crd).await.unwrap();
    }
    let clusters: kube::Api<flotilla_api::cluster::v1alpha1::Cluster> =
        kube::Api::all(control.clone());
    eventually("the Cluster CRD to be served", || async {
        clusters.list(&Default::default()).await.ok()
    })
    .await;
    clusters
}

/// Runs `flotilla ARGS` to its end.
pub(crate) fn flotilla(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .output()
        .unwrap()
}

/// Starts `flotilla apiserver` on `port` (0: any) with its data in `dir/data` and its kubeconfig written to
/// `dir/kubeconfig`, plus `extra` arguments, and waits for its `ready:` line.
pub(crate) fn start_apiserver(dir: &Path, port: u16, extra: &[&str]) -> Proc {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .args(["apiserver", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--kubeconfig-out")
        .arg(dir.join("kubeconfig"))
        .args(extra)
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::null());
    start_ready(command, "ready: kubeconfig=", flotilla_testing::PATIENCE).0
}

/// `flotilla controller-manager` against the control plane of `karmada_config`, with its metrics on
/// `metrics_port`; callers add their own flags and output handling, then spawn it.
pub(crate) fn controller_manager(
    karmada_config: &Path,
    metrics_port: u16,
) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .arg("controller-manager")
        .arg("--kubeconfig")
        .arg(karmada_config)
        .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
    command
}

/// A running `flotilla up`, killed when dropped.
pub(crate) struct Up {
    child: Child,
    /// Its `karmada.config`.
    pub karmada: PathBuf,
    /// Its `members.config`.
    pub members: PathBuf,
    stderr: Receiver<String>,
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

/// Starts `flotilla up --port 0 --data-dir DIR EXTRA...` and waits for its ready line.
pub(crate) fn up(dir: &Path, extra: &[&str]) -> Up {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["up", "--port", "0", "--data-dir"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = lines(child.stdout.take().unwrap());
    let stderr = lines(child.stderr.take().unwrap());
    let line = stdout
        .recv_timeout(Duration::from_secs(30))
        .expect("flotilla up prints its ready line");
    let expected = format!(
        "ready: karmada={} members={}",
        dir.join("karmada.config").display(),
        dir.join("members.config").display()
    );
    assert_eq!(line, expected);
    Up {
        child,
        karmada: dir.join("karmada.config"),
        members: dir.join("members.config"),
        stderr,
    }
}

impl Up {
    /// Sends SIGTERM and waits for a clean exit; returns the stderr lines not yet read by [`Up::progress`].
    pub(crate) fn terminate(mut self) -> Vec<String> {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "flotilla up exited with {status}");
                // The reader thread ends with the pipe; wait for it rather than lose the last lines.
                let mut rest = Vec::new();
                while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
                    rest.push(line);
                }
                return rest;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "flotilla up ignored SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The stderr lines printed so far.
    pub(crate) fn progress(&self) -> Vec<String> {
        self.stderr.try_iter().collect()
    }
}

/// A clean stop's log: no ERROR line, no colour codes (stderr is a pipe here, as in hack/local-up.sh).
pub(crate) fn assert_clean(lines: &[String]) {
    for line in lines {
        assert!(
            !line.contains('\u{1b}'),
            "colour codes in a piped log: {line:?}"
        );
        assert!(
            !line.contains(" ERROR "),
            "an ERROR at a clean SIGTERM: {line}"
        );
    }
}

/// Propagates a ConfigMap `default/<name>` to member1 with a PropagationPolicy of the same name, and waits
/// until member1 holds it: the proof that some controller manager does its work.
pub(crate) async fn propagate_configmap_to_member1(
    control_client: &Client,
    member_client: Client,
    name: &str,
) {
    use flotilla_api::policy::v1alpha1::PropagationPolicy;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    use serde_json::json;
    let configmaps: Api<ConfigMap> = Api::namespaced(control_client.clone(), "default");
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": name}, "data": {"a": "1"}})).unwrap();
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let policies: Api<PropagationPolicy> = Api::namespaced(control_client.clone(), "default");
    let policy: PropagationPolicy = serde_json::from_value(json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "name": name}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}
    }))
    .unwrap();
    policies
        .create(&PostParams::default(), &policy)
        .await
        .unwrap();
    let member_configmaps: Api<ConfigMap> = Api::namespaced(member_client, "default");
    eventually(&format!("ConfigMap {name} in member1"), || async {
        member_configmaps.get(name).await.ok()
    })
    .await;
}

/// Runs `flotilla join member1` and fails the test unless it succeeds; returns its stdout.
pub(crate) fn join_member1(karmada_config: &Path, member_config: &Path) -> String {
    let joined = flotilla(&[
        "join",
        "member1",
        "--kubeconfig",
        karmada_config.to_str().unwrap(),
        "--cluster-kubeconfig",
        member_config.to_str().unwrap(),
    ]);
    assert!(
        joined.status.success(),
        "{}",
        String::from_utf8_lossy(&joined.stderr)
    );
    String::from_utf8_lossy(&joined.stdout).into_owned()
}
