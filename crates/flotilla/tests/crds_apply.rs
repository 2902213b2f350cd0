//! `flotilla crds` piped into kubectl against a running `flotilla apiserver`, then the walkthrough's policies
//! applied with kubectl and read back through the typed API: the CRDs are usable as a user installs them.
#![allow(clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_api::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use kube::api::Api;

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/examples");

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_apiserver(dir: &Path) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut child = Command::new(BIN)
        .args([
            "apiserver",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(dir.join("data"))
        .arg("--kubeconfig-out")
        .arg(dir.join("kubeconfig"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("flotilla apiserver starts");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let first = BufReader::new(stdout).lines().next();
        let _ = tx.send(first);
    });
    let server = Server(child);
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(Some(Ok(line))) if line.starts_with("ready: ") => server,
        other => panic!("apiserver did not report ready: {other:?}"),
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&[u8]>) -> (bool, String) {
    let bin = std::env::var("FLOTILLA_TEST_KUBECTL_NEW").unwrap_or_else(|_| "kubectl".to_owned());
    let mut child = Command::new(&bin)
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin} runs: {e}"));
    let mut input = child.stdin.take().expect("piped");
    // kubectl may exit before reading everything (e.g. on a connection error); its output says why.
    let _ = input.write_all(stdin.unwrap_or_default());
    drop(input);
    let out = child.wait_with_output().expect("kubectl exits");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Retries `args` until it succeeds: a freshly created CRD takes a moment to be served.
fn kubectl_eventually(kubeconfig: &Path, args: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (ok, text) = kubectl(kubeconfig, args, None);
        if ok {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "kubectl {args:?} kept failing: {text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn crds_install_with_kubectl_and_serve_the_walkthrough_policies() {
    let dir = tempfile::tempdir().expect("temp dir");
    let _server = start_apiserver(dir.path());
    let kubeconfig = dir.path().join("kubeconfig");

    let crds = Command::new(BIN)
        .arg("crds")
        .output()
        .expect("flotilla crds runs");
    assert!(crds.status.success());
    // Client-side validation needs the server's OpenAPI document, which is the API server's to serve; the CRDs'
    // own schemas are checked by flotilla-api's structural tests.
    let (ok, text) = kubectl(
        &kubeconfig,
        &["apply", "--validate=false", "-f", "-"],
        Some(&crds.stdout),
    );
    assert!(ok, "kubectl apply of the CRDs failed: {text}");
    assert_eq!(text.matches(" created").count(), 12, "{text}");

    for file in ["nginx-deployment.yaml", "workload-crd-cpp.yaml"] {
        let path = format!("{EXAMPLES}/{file}");
        kubectl_eventually(
            &kubeconfig,
            &["apply", "--validate=false", "-n", "default", "-f", &path],
        );
    }

    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("client config");
    let client = kube::Client::try_from(config).expect("client");
    let pp = Api::<PropagationPolicy>::namespaced(client.clone(), "default")
        .get("nginx-propagation")
        .await
        .expect("the PropagationPolicy decodes into the typed struct");
    let affinity = pp.spec.placement.cluster_affinity.expect("clusterAffinity");
    assert_eq!(affinity.cluster_names, ["member1", "member2"]);
    let cpp = Api::<ClusterPropagationPolicy>::all(client)
        .get("workload-crd-cpp")
        .await
        .expect("typed CPP");
    assert_eq!(
        cpp.spec.resource_selectors[0].kind,
        "CustomResourceDefinition"
    );

    let listed = kubectl_eventually(&kubeconfig, &["get", "pp", "-n", "default", "-o", "name"]);
    assert!(
        listed.contains("propagationpolicy.policy.karmada.io/nginx-propagation"),
        "{listed}"
    );
}
