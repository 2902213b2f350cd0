//! The publisher against a fake API server that answers each write only when the test says so: which writes
//! go out side by side, which wait for their series, and what a failure does.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::IN_FLIGHT;
use crate::events::correlator::SPAM_BURST;
use crate::events::{EventRecorder, EventSink, QUEUE};
use crate::metrics::Metrics;

/// A write as the fake server received it, waiting for its answer.
struct Arrival {
    method: http::Method,
    /// The Event's name: the created object's, or the patched path's last segment.
    name: String,
    body: Value,
    answer: oneshot::Sender<u16>,
}

impl Arrival {
    fn answer(self, code: u16) {
        let _ = self.answer.send(code);
    }

    fn count(&self) -> Option<i64> {
        self.body.pointer("/series/count").and_then(Value::as_i64)
    }
}

/// Writes in flight at the fake server now, and the most there ever were.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// A client whose every request arrives on the returned channel and is answered with the code the test sends
/// (2xx: the written object back; otherwise a `Status`).
fn fake_server() -> (Client, mpsc::UnboundedReceiver<Arrival>, Arc<InFlight>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let in_flight = Arc::new(InFlight::default());
    let counts = in_flight.clone();
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let (tx, counts) = (tx.clone(), counts.clone());
        async move {
            let (parts, body) = request.into_parts();
            let bytes = body.collect().await.unwrap().to_bytes();
            let mut body: Value = serde_json::from_slice(&bytes).unwrap();
            let name = if parts.method == http::Method::POST {
                body["metadata"]["name"].as_str().unwrap().to_owned()
            } else {
                parts.uri.path().rsplit('/').next().unwrap().to_owned()
            };
            let now = counts.now.fetch_add(1, Ordering::SeqCst) + 1;
            counts.most.fetch_max(now, Ordering::SeqCst);
            let (answer, answered) = oneshot::channel();
            let arrival = Arrival {
                method: parts.method,
                name: name.clone(),
                body: body.clone(),
                answer,
            };
            tx.send(arrival).unwrap();
            let code = answered.await.unwrap_or(500);
            counts.now.fetch_sub(1, Ordering::SeqCst);
            let reply = if code < 300 {
                // The written object as a server returns it (for a patch, enough of it to name it).
                body["apiVersion"] = json!("events.k8s.io/v1");
                body["kind"] = json!("Event");
                body["metadata"]["name"] = json!(name);
                body["metadata"]["resourceVersion"] = json!("1");
                body
            } else {
                json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code,
                       "reason": "InternalError", "message": "the fake server fails this write"})
            };
            let response = http::Response::builder()
                .status(code)
                .header("content-type", "application/json")
                .body(reply.to_string())
                .unwrap();
            Ok::<_, Infallible>(response)
        }
    });
    (Client::new(service, "default"), rx, in_flight)
}

/// A recorder publishing to a fake server, the server's arrivals and its in-flight counts, and the metrics
/// counting what was dropped.
fn publishing() -> (
    EventRecorder,
    mpsc::UnboundedReceiver<Arrival>,
    Arc<InFlight>,
    Metrics,
) {
    let (client, arrivals, in_flight) = fake_server();
    let metrics = Metrics::new().unwrap();
    let (sink, publisher) = EventSink::new(client, metrics.events_dropped());
    tokio::spawn(publisher);
    (
        sink.recorder("binding-controller"),
        arrivals,
        in_flight,
        metrics,
    )
}

/// `flotilla_events_dropped_total` of the binding controller for `cause`.
fn dropped(metrics: &Metrics, cause: &str) -> u64 {
    metrics
        .events_dropped()
        .with_label_values(&["flotilla-binding-controller", cause])
        .get()
}

fn object(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps/v1".into()),
        kind: Some("Deployment".into()),
        namespace: Some("default".into()),
        name: Some(name.into()),
        uid: Some(format!("uid-{name}")),
        ..ObjectReference::default()
    }
}

async fn next(arrivals: &mut mpsc::UnboundedReceiver<Arrival>) -> Arrival {
    tokio::time::timeout(Duration::from_secs(10), arrivals.recv())
        .await
        .expect("a write within 10 s")
        .expect("the fake server is alive")
}

#[tokio::test]
async fn a_series_counts_after_its_create_and_waiting_counts_collapse_into_the_latest() {
    let (recorder, mut arrivals, _, metrics) = publishing();
    let web = object("web");
    recorder.normal(
        &web,
        "SyncSucceed",
        "Sync work of resourceBinding(default/web) successful.",
    );
    let create = next(&mut arrivals).await;
    assert_eq!(create.method, http::Method::POST);
    assert!(create.name.starts_with("web."), "{}", create.name);
    // Three repeats while the create is unanswered, then an Event about another object.
    for _ in 0..3 {
        recorder.normal(
            &web,
            "SyncSucceed",
            "Sync work of resourceBinding(default/web) successful.",
        );
    }
    recorder.normal(
        &object("api"),
        "SyncSucceed",
        "Sync work of resourceBinding(default/api) successful.",
    );
    // The other object's Event goes out beside the unanswered create; the repeats wait for it.
    let other = next(&mut arrivals).await;
    assert_eq!(other.method, http::Method::POST, "{}", other.body);
    assert!(other.name.starts_with("api."), "{}", other.name);
    other.answer(201);
    let web_name = create.name.clone();
    create.answer(201);
    // One count patch on the created Event, carrying all three repeats.
    let patch = next(&mut arrivals).await;
    assert_eq!(patch.method, http::Method::PATCH, "{}", patch.body);
    assert_eq!(patch.name, web_name);
    assert_eq!(patch.count(), Some(4), "{}", patch.body);
    assert_eq!(
        patch.body["note"],
        "Sync work of resourceBinding(default/web) successful."
    );
    patch.answer(200);
    // The next repeat counts on the same Event.
    recorder.normal(
        &web,
        "SyncSucceed",
        "Sync work of resourceBinding(default/web) successful.",
    );
    let again = next(&mut arrivals).await;
    assert_eq!(
        (again.method.clone(), again.name.as_str(), again.count()),
        (http::Method::PATCH, web_name.as_str(), Some(5))
    );
    again.answer(200);
    // Repeats folded into one patch were written, not dropped.
    let all = ["queue_full", "spam", "write_failed"].map(|cause| dropped(&metrics, cause));
    assert_eq!(all, [0, 0, 0]);
}

#[tokio::test]
async fn at_most_in_flight_writes_go_out_at_once() {
    let (recorder, mut arrivals, in_flight, _) = publishing();
    let total = 3 * IN_FLIGHT + 2;
    for i in 0..total {
        recorder.normal(&object(&format!("app-{i}")), "SyncSucceed", "synced");
    }
    // Hold every write until IN_FLIGHT are waiting (or all that remain), then answer the oldest.
    let mut held = std::collections::VecDeque::new();
    let mut answered = 0;
    while answered < total {
        if held.len() < IN_FLIGHT.min(total - answered) {
            held.push_back(next(&mut arrivals).await);
            continue;
        }
        if let Some(oldest) = held.pop_front() {
            assert_eq!(oldest.method, http::Method::POST);
            oldest.answer(201);
            answered += 1;
        }
    }
    assert_eq!(
        in_flight.most.load(Ordering::SeqCst),
        IN_FLIGHT,
        "the most writes in flight at once"
    );
}

#[tokio::test]
async fn a_failed_write_forgets_its_series_and_the_counts_decided_meanwhile() {
    let (recorder, mut arrivals, _, metrics) = publishing();
    let web = object("web");
    recorder.warning(&web, "SyncFailed", "connection refused");
    let create = next(&mut arrivals).await;
    // A repeat decided while the create is in flight, then Events about other objects until every slot is
    // busy: the publisher takes the next Event only once the create's answer is handled.
    recorder.warning(&web, "SyncFailed", "connection refused");
    let mut others = Vec::new();
    for i in 1..IN_FLIGHT {
        recorder.normal(&object(&format!("app-{i}")), "SyncSucceed", "synced");
        others.push(next(&mut arrivals).await);
    }
    recorder.warning(&web, "SyncFailed", "connection refused");
    create.answer(500);
    // The repeat went with the failed create, and the correlator forgot the series: a new Event, counted from
    // one again.
    let created = next(&mut arrivals).await;
    assert_eq!(created.method, http::Method::POST, "{}", created.body);
    assert!(created.name.starts_with("web."), "{}", created.name);
    assert_eq!(created.count(), None, "{}", created.body);
    let name = created.name.clone();
    created.answer(201);
    for other in others {
        other.answer(201);
    }
    recorder.warning(&web, "SyncFailed", "connection refused");
    let counted = next(&mut arrivals).await;
    assert_eq!(
        (
            counted.method.clone(),
            counted.name.as_str(),
            counted.count()
        ),
        (http::Method::PATCH, name.as_str(), Some(2))
    );
    counted.answer(200);
    assert_eq!(dropped(&metrics, "write_failed"), 1, "the failed create");
    assert_eq!(
        dropped(&metrics, "spam") + dropped(&metrics, "queue_full"),
        0
    );
}

#[tokio::test]
async fn events_the_spam_filter_drops_are_counted() {
    let (recorder, mut arrivals, _, metrics) = publishing();
    // Distinct messages, so that none counts on another; the filter lets a burst through and drops the rest.
    for i in 0..SPAM_BURST + 3 {
        recorder.normal(&object("web"), "SyncSucceed", format!("synced {i}"));
    }
    // Similar Events combine after ten messages, so how many writes arrive is the correlator's business.
    tokio::spawn(async move {
        while let Some(arrival) = arrivals.recv().await {
            arrival.answer(201);
        }
    });
    flotilla_testing::eventually("the dropped Events to be counted", || {
        let spam = dropped(&metrics, "spam");
        async move { (spam == 3).then_some(()) }
    })
    .await;
    assert_eq!(dropped(&metrics, "write_failed"), 0);
}

#[tokio::test]
async fn events_beyond_a_full_queue_are_counted() {
    let (client, _arrivals, _) = fake_server();
    let metrics = Metrics::new().unwrap();
    // No publisher runs: the channel fills and stays full.
    let (sink, _publisher) = EventSink::new(client, metrics.events_dropped());
    let recorder = sink.recorder("binding-controller");
    for i in 0..QUEUE + 5 {
        recorder.normal(&object(&format!("app-{i}")), "SyncSucceed", "synced");
    }
    assert_eq!(dropped(&metrics, "queue_full"), 5);
    let text = metrics.encode();
    assert!(
        text.contains(
            "flotilla_events_dropped_total{cause=\"queue_full\",controller=\"flotilla-binding-controller\"} 5"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_series_counts_every_repeat_on_one_event_of_an_api_server() {
    let dir = tempfile::tempdir().unwrap();
    let config = flotilla_apiserver::ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir.path());
    let server = flotilla_apiserver::Server::start(config).await.unwrap();
    let client = flotilla_testing::client_from_yaml(&server.kubeconfig("test"), None).await;
    let (sink, publisher) =
        EventSink::new(client.clone(), Metrics::new().unwrap().events_dropped());
    tokio::spawn(publisher);
    let recorder = sink.recorder("binding-controller");
    let events: kube::Api<k8s_openapi::api::events::v1::Event> =
        kube::Api::namespaced(client, "default");
    let web = object("web");
    // Each repeat once the previous one is written, so that each is a write of its own.
    for count in 1..=4 {
        recorder.warning(&web, "SyncFailed", "connection refused");
        let written = flotilla_testing::eventually("the repeat to be counted", || {
            let events = events.clone();
            async move {
                let list = events.list(&Default::default()).await.ok()?;
                let seen = list
                    .items
                    .iter()
                    .map(|e| e.series.as_ref().map_or(1, |s| s.count));
                (seen.clone().max() == Some(count)).then(|| seen.collect::<Vec<_>>())
            }
        })
        .await;
        assert_eq!(written, [count], "one Event, counting every repeat");
    }
}
