//! The task that turns recorded Events into API writes: it correlates them one at a time, in the order they were
//! recorded, and writes them side by side.
//!
//! # Guarantees
//! - **Correlation as recorded.** The [`Correlator`] sees every Event on this one task, in recording order, and
//!   its decisions are client-go's whatever the writes' timing.
//! - **One series, one write at a time.** The writes of one Event series (its Event's create, then the patches of
//!   its count) go out in order, each after the previous one was answered. A count patch that waits behind a
//!   write of its series is folded into the next one decided for it: each carries the series' whole state
//!   (count, latest message, last seen), so the later supersedes the earlier. A new Event waiting behind a
//!   write (its series started anew) stays a write of its own.
//! - **At most [`IN_FLIGHT`] writes at once.** While every slot is busy, recorded Events wait in the sink's
//!   channel, and beyond its capacity the recorders drop them: recording never waits for the API server.
//! - **Every Event not written is counted** in `flotilla_events_dropped_total`: here those the spam filter
//!   drops (`spam`) and those whose write failed (`write_failed`); the recorders count what the full channel
//!   refused (`queue_full`).
//! - **A failed write forgets its series.** The correlator forgets it (its next Event is written as a new one,
//!   as client-go's is) and the count patches decided for it while the failed write was in flight go with it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use kube::{Client, ResourceExt};
use prometheus::IntCounterVec;
use tokio::sync::mpsc;

use super::Pending;
use super::correlator::{Correlator, Decision, SeriesKey};

/// How many Event writes may be in flight at once.
///
/// Enough to keep up with the controllers: a template costs about half as many Event writes as other writes on
/// real members (docs/BENCHMARKS.md), which the controllers make with up to `--concurrent-syncs` (5) reconciles
/// per controller; eight writes at the 1–5 ms an Event write takes on a local kube-apiserver are 1,600–8,000
/// Events a second. Few enough that Events, which are informational, take a small share of what the server
/// admits at once (kube-apiserver: 200 mutating requests by default) from the writes propagation waits on.
pub(super) const IN_FLIGHT: usize = 8;

/// How often correlation state that can no longer matter is dropped from memory.
const SWEEP_INTERVAL: SignedDuration = SignedDuration::from_mins(1);

/// Publishes what `rx` receives to `client`'s API server until every sender is gone and the writes in flight
/// are answered. Events not written count in `dropped`.
pub(super) async fn publish(
    client: Client,
    mut rx: mpsc::Receiver<Pending>,
    dropped: IntCounterVec,
) {
    let mut publisher = Publisher {
        client,
        dropped,
        correlator: Correlator::default(),
        series: HashMap::new(),
        writes: FuturesUnordered::new(),
        swept: Timestamp::now(),
    };
    loop {
        let accepting = publisher.writes.len() < IN_FLIGHT;
        tokio::select! {
            // Answers first: each frees a slot and may let its series' next write go.
            biased;
            Some(done) = publisher.writes.next(), if !publisher.writes.is_empty() => publisher.finished(done),
            received = rx.recv(), if accepting => match received {
                Some(pending) => publisher.observe(pending),
                None => break,
            },
        }
    }
    while let Some(done) = publisher.writes.next().await {
        publisher.finished(done);
    }
}

struct Publisher {
    client: Client,
    /// `flotilla_events_dropped_total`.
    dropped: IntCounterVec,
    correlator: Correlator,
    series: HashMap<SeriesKey, Series>,
    /// The writes in flight, at most [`IN_FLIGHT`].
    writes: FuturesUnordered<BoxFuture<'static, Done>>,
    swept: Timestamp,
}

/// What is known of one series' writes.
#[derive(Default)]
struct Series {
    /// The name of the Event last written for the series, to count repeats on.
    event: Option<String>,
    /// Whether a write of the series is in flight.
    busy: bool,
    /// Writes decided while one was in flight, oldest first.
    waiting: VecDeque<Write>,
}

/// One write the correlator decided on.
struct Write {
    pending: Pending,
    note: String,
    /// Whether it writes a new Event (the correlator's `Create`) rather than a count on the series' Event.
    new: bool,
    /// How many times the series has been seen, 1 for a new Event.
    count: i32,
    /// When the series' Event was first seen (a new Event's time).
    first: Timestamp,
    /// When the series was last seen.
    last: Timestamp,
}

/// An answered write.
struct Done {
    key: SeriesKey,
    /// The reporting controller, `flotilla-<controller>`.
    controller: Arc<str>,
    reason: String,
    /// The written Event's name.
    result: Result<String, kube::Error>,
}

impl Publisher {
    fn observe(&mut self, pending: Pending) {
        let now = Timestamp::now();
        // Swept once a minute, not on every Event: a burst of thousands of Events would otherwise scan the
        // whole state each time.
        if now.duration_since(self.swept) > SWEEP_INTERVAL {
            self.correlator.sweep(now);
            let correlator = &self.correlator;
            self.series.retain(|key, series| {
                series.busy || !series.waiting.is_empty() || correlator.is_live(key, now)
            });
            self.swept = now;
        }
        let (key, note, new, count) = match self.correlator.observe(pending.recorded(), now) {
            Decision::Drop => {
                self.dropped
                    .with_label_values(&[&*pending.controller, "spam"])
                    .inc();
                // A Warning's cause must not vanish: what the Events API will not show, the log does.
                if pending.type_ == EventType::Warning {
                    tracing::info!(
                        controller = %pending.controller,
                        reason = %pending.reason,
                        object = ?pending.reference.name,
                        message = %pending.note,
                        "too many events about the object; warning not recorded as an Event"
                    );
                }
                return;
            }
            Decision::Create { key, note } => (key, note, true, 1),
            Decision::Repeat { key, note, count } => (key, note, false, count),
        };
        let write = Write {
            pending,
            note,
            new,
            count,
            first: now,
            last: now,
        };
        let series = self.series.entry(key.clone()).or_default();
        if series.busy {
            match series.waiting.back_mut() {
                Some(last) if !write.new => last.absorb(write),
                _ => series.waiting.push_back(write),
            }
            return;
        }
        series.busy = true;
        let event = series.event.clone();
        self.writes.push(send(&self.client, key, event, write));
    }

    fn finished(&mut self, done: Done) {
        let Some(series) = self.series.get_mut(&done.key) else {
            // Series stay while busy (see the sweep), so this cannot happen; nothing waits on it if it did.
            return;
        };
        series.busy = false;
        match done.result {
            Ok(event) => series.event = Some(event),
            Err(err) => {
                series.event = None;
                // Counts decided while the failed write was in flight counted on an Event that is not there.
                while series.waiting.front().is_some_and(|w| !w.new) {
                    series.waiting.pop_front();
                }
                // A new Event still waiting started a newer series, which the correlator must keep counting.
                if series.waiting.is_empty() {
                    self.correlator.forget(&done.key);
                }
                tracing::debug!(error = %flotilla_client::api_error::kube_error_text(&err), reason = %done.reason, "failed to publish event");
                self.dropped
                    .with_label_values(&[&*done.controller, "write_failed"])
                    .inc();
            }
        }
        if let Some(next) = series.waiting.pop_front() {
            series.busy = true;
            let event = series.event.clone();
            self.writes.push(send(&self.client, done.key, event, next));
        }
    }
}

impl Write {
    /// Folds a later count of the same series into this waiting write, which then writes the series' state as
    /// of that count.
    fn absorb(&mut self, later: Write) {
        self.note = later.note;
        self.count = later.count;
        self.last = later.last;
    }
}

/// The write of `write`: a count patch of the Event named `event` when there is one to count on, else a new
/// Event (carrying the count, as client-go's recorder creates one when the Event it would count on is gone).
///
/// A count patch sends only what a repeat changes, the note and the series, as client-go's does: no
/// `resourceVersion`, which would make the server refuse every count after the first as a conflict.
fn send(
    client: &Client,
    key: SeriesKey,
    event: Option<String>,
    write: Write,
) -> BoxFuture<'static, Done> {
    let namespace = write
        .pending
        .reference
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_owned());
    let api: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
    let reason = write.pending.reason.clone();
    let controller = write.pending.controller.clone();
    Box::pin(async move {
        let series = (write.count > 1).then_some(EventSeries {
            count: write.count,
            last_observed_time: MicroTime(write.last),
        });
        let result = match event {
            Some(name) if !write.new => {
                let patch = serde_json::json!({"note": write.note, "series": series});
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(|_| name)
            }
            _ => {
                let mut event = new_event(&write.pending, write.note, write.first);
                event.series = series;
                api.create(&PostParams::default(), &event)
                    .await
                    .map(|created| created.name_any())
            }
        };
        Done {
            key,
            controller,
            reason,
            result,
        }
    })
}

/// A new events.k8s.io/v1 Event, shaped as kube-runtime's `Recorder` shapes one.
fn new_event(pending: &Pending, note: String, now: Timestamp) -> K8sEvent {
    let controller = pending.controller.to_string();
    K8sEvent {
        action: Some(pending.reason.clone()),
        reason: Some(pending.reason.clone()),
        event_time: Some(MicroTime(now)),
        regarding: Some(pending.reference.clone()),
        note: Some(note),
        metadata: ObjectMeta {
            namespace: pending.reference.namespace.clone(),
            name: Some(format!(
                "{}.{:x}",
                pending.reference.name.as_deref().unwrap_or(&controller),
                now.as_nanosecond()
            )),
            ..ObjectMeta::default()
        },
        reporting_controller: Some(controller.clone()),
        reporting_instance: Some(controller),
        type_: Some(
            match pending.type_ {
                EventType::Normal => "Normal",
                EventType::Warning => "Warning",
            }
            .to_owned(),
        ),
        ..K8sEvent::default()
    }
}

#[cfg(test)]
#[path = "publisher_tests.rs"]
mod tests;
