//! What a person sees at `RUST_LOG=info`: a failed reconcile is a warning inside the reconcile's span, which
//! names the controller, the object and the outcome; a successful one logs nothing at that level.
//!
//! Its own test binary: it installs the process-wide subscriber, which tests sharing a process would race
//! for.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_controllers::error::Error;
use flotilla_controllers::metrics::Metrics;
use flotilla_controllers::runtime::{Action, Backoff, Controller};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use tokio_util::sync::CancellationToken;

/// A writer for the log lines.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn mk_config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("ns".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn a_failed_reconcile_is_a_warning_inside_its_span_at_info() {
    let lines = Lines::default();
    let writer = lines.clone();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();
    let mut store: Writer<ConfigMap> = Writer::default();
    store.apply_watcher_event(&Event::Init);
    for name in ["broken", "fine"] {
        store.apply_watcher_event(&Event::InitApply(mk_config_map(name)));
    }
    store.apply_watcher_event(&Event::InitDone);
    let controller = Controller::with_store(
        "test",
        store.as_reader(),
        (),
        2,
        Backoff::default(),
        Metrics::new().unwrap(),
    );
    let trigger = controller.trigger();
    trigger.reconcile_ref(trigger.object_ref("ns", "broken"));
    trigger.reconcile_ref(trigger.object_ref("ns", "fine"));
    let done: Arc<Mutex<Vec<String>>> = Arc::default();
    let shutdown = CancellationToken::new();
    let running =
        tokio::spawn(
            controller.run(shutdown.clone(), done.clone(), |done, obj| async move {
                let name = obj.metadata.name.clone().unwrap_or_default();
                done.lock().unwrap().push(name.clone());
                if name == "broken" {
                    Err(Error::invalid(
                        "ConfigMap ns/broken",
                        "data.key: not a number",
                    ))
                } else {
                    Ok(Action::await_change())
                }
            }),
        );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while done.lock().unwrap().len() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "both objects reconciled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shutdown.cancel();
    running.await.unwrap();
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let warning = text
        .lines()
        .find(|line| line.contains("WARN"))
        .unwrap_or_else(|| panic!("no warning in {text}"));
    assert!(
        warning.contains(
            r#"reconcile{controller="test" object=ConfigMap ns/broken outcome="invalid"}"#
        ),
        "{warning}"
    );
    assert!(
        warning
            .contains("reconcile failed error=invalid ConfigMap ns/broken: data.key: not a number"),
        "{warning}"
    );
    assert!(
        !text.contains("ns/fine"),
        "a success logs nothing at info: {text}"
    );
}
