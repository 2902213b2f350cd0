//! The view for people: a `flotilla up` process serves the status page, `flotilla status` prints the same
//! journeys, and a real browser (Debian's headless Chromium) shows a template propagated during the test,
//! with its clusters, and follows the link to its Events.
//!
//! Chromium is `FLOTILLA_TEST_CHROMIUM` (hack/test-deps.sh installs it and sets it), else `chromium` on PATH.
//! Without either the browser checks are skipped with a message, unless `FLOTILLA_TEST_CHROMIUM` or `CI` is
//! set: then a missing browser fails the test.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use common::{client, eventually, up};

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");
const TEMPLATE: &str = "status-page-web";
/// How long one Chromium run may take before it is stopped.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

fn flotilla(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

fn stdout_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The browser to drive, `None` (with a message) when there is none and none is required.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FLOTILLA_TEST_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs chromium for the status page's browser test (hack/test-deps.sh installs it)"
        );
        eprintln!(
            "skipping the browser checks: no chromium on PATH and FLOTILLA_TEST_CHROMIUM unset (apt-get install chromium)"
        );
    }
    found
}

/// The DOM of `url` after its scripts ran for a few seconds of virtual time, as headless Chromium renders it.
async fn dump_dom(chromium: &Path, profile: &Path, url: &str) -> String {
    let run = tokio::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", url])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(BROWSER_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("chromium did not render {url} within {BROWSER_TIMEOUT:?}"))
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed on {url}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_of(&output)
}

/// The part of a dumped page that shows one template.
fn template_section<'a>(dom: &'a str, template: &str) -> Option<&'a str> {
    let start = dom.find(&format!("data-template=\"{template}\""))?;
    let rest = &dom[start..];
    Some(&rest[..rest.find("</section>")?])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_and_flotilla_status_show_a_propagated_templates_journey() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_str().unwrap().to_owned();
    let env = up(dir.path(), &["--members", "2"]);
    let url = std::fs::read_to_string(dir.path().join("status.url"))
        .unwrap()
        .trim()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let karmada = client(&env.karmada, "karmada-apiserver").await;
    let policies = Api::<DynamicObject>::namespaced_with(
        karmada.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("policy.karmada.io", "v1alpha1", "PropagationPolicy"),
            "propagationpolicies",
        ),
    );
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "status-page", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": TEMPLATE}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}},
    });
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(policy).unwrap(),
        )
        .await
        .unwrap();
    let deployment = json!({
        "metadata": {"name": TEMPLATE, "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": TEMPLATE}},
                 "template": {"metadata": {"labels": {"app": TEMPLATE}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    });
    Api::<Deployment>::namespaced(karmada, "default")
        .create(
            &PostParams::default(),
            &serde_json::from_value(deployment).unwrap(),
        )
        .await
        .unwrap();

    // The terminal: policy, scheduling result, healthy Works, aggregated status and the answering layers.
    let text = eventually(
        "flotilla status to show the template healthy in both members",
        || {
            let data_dir = data_dir.clone();
            async move {
                let output = flotilla(&["status", "--data-dir", &data_dir]);
                assert!(
                    output.status.success(),
                    "{}",
                    String::from_utf8_lossy(&output.stderr)
                );
                let text = stdout_of(&output);
                let healthy = text.matches("Applied=True  Healthy").count() == 2
                    && text.matches("  applied  Healthy  {").count() == 2
                    && text.contains("InterpretHealth     native")
                    && text.contains("AggregateStatus     native");
                healthy.then_some(text)
            }
        },
    )
    .await;
    for expected in [
        &format!("Deployment default/{TEMPLATE} (apps/v1)"),
        "  policy        PropagationPolicy default/status-page",
        "  scheduled     True Success: Binding has been scheduled successfully.",
        "  clusters      member1=2 member2=2",
        "  fully applied True FullyAppliedSuccess",
        "InterpretReplica    native",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }

    // The same from the API alone, which cannot know the layers.
    let karmada_config = env.karmada.to_str().unwrap().to_owned();
    let output = flotilla(&["status", "--kubeconfig", &karmada_config]);
    assert!(output.status.success());
    let from_api = stdout_of(&output);
    assert!(
        from_api.contains("  clusters      member1=2 member2=2")
            && from_api.contains("interpreter   not known"),
        "{from_api}"
    );

    // The browser: the page shows the template with its clusters and layers, and links to its Events.
    if let Some(chromium) = chromium() {
        let profile = tempfile::tempdir().unwrap();
        let template = format!("apps/v1 Deployment default/{TEMPLATE}");
        let section = eventually("the page to show the template and its clusters", || {
            let (chromium, profile, url, template) = (&chromium, profile.path(), &url, &template);
            async move {
                let dom = dump_dom(chromium, profile, url).await;
                let section = template_section(&dom, template)?.to_owned();
                (section.contains("member1: 2") && section.contains("member2: 2"))
                    .then_some(section)
            }
        })
        .await;
        for expected in ["PropagationPolicy default/status-page", "native", "Healthy"] {
            assert!(section.contains(expected), "{expected:?} in {section}");
        }
        let events = format!(
            "{url}events?apiVersion=apps%2Fv1&kind=Deployment&namespace=default&name={TEMPLATE}"
        );
        assert!(
            section.contains(&events[url.len()..].replace('&', "&amp;")),
            "the template links to its Events: {section}"
        );
        eventually("the Events page to list the template's Events", || {
            let (chromium, profile, events) = (&chromium, profile.path(), &events);
            async move {
                let dom = dump_dom(chromium, profile, events).await;
                dom.contains("SyncWorkSucceed").then_some(())
            }
        })
        .await;
    }

    // Up named its page in its progress (read only now: stderr may lag behind the ready line on stdout); once it
    // stops, status says nothing runs, on one line.
    let log = env.terminate();
    assert!(
        log.iter()
            .any(|l| l.contains(&format!("status page at {url}"))),
        "up names its status page: {log:?}"
    );
    let output = flotilla(&["status", "--data-dir", &data_dir]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: no flotilla up is running with data dir"),
        "{stderr}"
    );
}
