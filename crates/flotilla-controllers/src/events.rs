//! Kubernetes Events with Karmada's reasons, published off the reconcile path.
//!
//! Reconciles hand events to a bounded channel and go on; one background task publishes them as
//! events.k8s.io/v1 Events reported by `flotilla-<controller>`, folding exact repeats (message included, as
//! client-go's correlator does) into event series. When the channel is full, events are dropped with a debug log rather than slowing
//! controllers down: events are informational, never a source of truth.

use std::collections::HashMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use kube::{Client, ResourceExt};
use tokio::sync::mpsc;

/// How many events may wait for publication before new ones are dropped.
const QUEUE: usize = 4096;

struct Pending {
    controller: Arc<str>,
    type_: EventType,
    reason: String,
    note: String,
    reference: ObjectReference,
}

/// The shared event sink; [`EventSink::recorder`] gives a controller its own reporter.
#[derive(Clone)]
pub struct EventSink {
    tx: Option<mpsc::Sender<Pending>>,
}

impl EventSink {
    /// A sink publishing to `client`'s API server, with the task that does the publishing (spawn it).
    pub fn new(client: Client) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (tx, rx) = mpsc::channel(QUEUE);
        (EventSink { tx: Some(tx) }, publish_loop(client, rx))
    }

    /// A sink that drops every event (unit tests, tools).
    pub fn disabled() -> Self {
        EventSink { tx: None }
    }

    /// A recorder reporting as `flotilla-<controller>`.
    pub fn recorder(&self, controller: &str) -> EventRecorder {
        EventRecorder {
            controller: Arc::from(format!("flotilla-{controller}")),
            tx: self.tx.clone(),
        }
    }
}

/// Records events for one controller.
#[derive(Clone)]
pub struct EventRecorder {
    controller: Arc<str>,
    tx: Option<mpsc::Sender<Pending>>,
}

impl EventRecorder {
    /// A `Normal` event on `reference`.
    pub fn normal(&self, reference: &ObjectReference, reason: &str, note: impl Into<String>) {
        self.send(EventType::Normal, reference, reason, note.into());
    }

    /// A `Warning` event on `reference`.
    pub fn warning(&self, reference: &ObjectReference, reason: &str, note: impl Into<String>) {
        self.send(EventType::Warning, reference, reason, note.into());
    }

    /// A `Normal` event when `result` is `Ok`, else a `Warning` with the error text.
    pub fn outcome<T, E: std::fmt::Display>(
        &self,
        reference: &ObjectReference,
        result: &Result<T, E>,
        (ok_reason, ok_note): (&str, &str),
        failed_reason: &str,
    ) {
        match result {
            Ok(_) => self.normal(reference, ok_reason, ok_note),
            Err(err) => self.warning(reference, failed_reason, err.to_string()),
        }
    }

    fn send(&self, type_: EventType, reference: &ObjectReference, reason: &str, mut note: String) {
        let Some(tx) = &self.tx else { return };
        // The Events API caps the note at 1 KiB.
        if note.len() > 1024 {
            let mut cut = 1021;
            while !note.is_char_boundary(cut) {
                cut -= 1;
            }
            note.truncate(cut);
            note.push_str("...");
        }
        let pending = Pending {
            controller: self.controller.clone(),
            type_,
            reason: reason.to_owned(),
            note,
            reference: reference.clone(),
        };
        if tx.try_send(pending).is_err() {
            tracing::debug!(reason, "event queue full or closed; event dropped");
        }
    }
}

/// How long a published Event counts repeats (kube-runtime's and client-go's window).
const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// How often expired series are dropped from memory.
const SWEEP_INTERVAL: SignedDuration = SignedDuration::from_mins(1);

/// What makes two Events the same: client-go's correlator counts a repeat only when everything but the time
/// matches, the message included. (kube-runtime's `Recorder` leaves the note out, so a Warning whose cause
/// changed kept counting under the old cause's message; that is why this loop does not use it.)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SeriesKey {
    controller: Arc<str>,
    warning: bool,
    reason: String,
    note: String,
    regarding: (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    ),
}

impl SeriesKey {
    fn of(pending: &Pending) -> Self {
        let r = &pending.reference;
        SeriesKey {
            controller: pending.controller.clone(),
            warning: pending.type_ == EventType::Warning,
            reason: pending.reason.clone(),
            note: pending.note.clone(),
            regarding: (
                r.uid.clone(),
                r.kind.clone(),
                r.namespace.clone(),
                r.name.clone(),
            ),
        }
    }
}

async fn publish_loop(client: Client, mut rx: mpsc::Receiver<Pending>) {
    let mut series: HashMap<SeriesKey, K8sEvent> = HashMap::new();
    let mut swept = Timestamp::now();
    while let Some(pending) = rx.recv().await {
        let now = Timestamp::now();
        // Expired series are dropped once a minute, not on every Event: a burst of thousands of Events would
        // otherwise scan the whole map each time. A series found expired before its sweep starts afresh.
        if now.duration_since(swept) > SWEEP_INTERVAL {
            series.retain(|_, event| !expired(event, now));
            swept = now;
        }
        let key = SeriesKey::of(&pending);
        let namespace = pending
            .reference
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let api: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
        let published = match series.get(&key).filter(|event| !expired(event, now)) {
            Some(first) => {
                let mut event = first.clone();
                event.series = Some(EventSeries {
                    count: event.series.as_ref().map_or(2, |s| s.count + 1),
                    last_observed_time: MicroTime(now),
                });
                api.patch(
                    &event.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&event),
                )
                .await
                .map(|_| event)
            }
            None => {
                let event = new_event(&pending, now);
                api.create(&PostParams::default(), &event).await
            }
        };
        match published {
            Ok(event) => {
                series.insert(key, event);
            }
            Err(err) => {
                tracing::debug!(error = %err, reason = %pending.reason, "failed to publish event")
            }
        }
    }
}

/// Whether a published Event's series window has passed.
fn expired(event: &K8sEvent, now: Timestamp) -> bool {
    let last_seen = match &event.series {
        Some(series) => Some(series.last_observed_time.0),
        None => event.event_time.as_ref().map(|t| t.0),
    };
    last_seen.is_none_or(|t| t + SERIES_WINDOW <= now)
}

/// A new events.k8s.io/v1 Event, shaped as kube-runtime's `Recorder` shapes one.
fn new_event(pending: &Pending, now: Timestamp) -> K8sEvent {
    let controller = pending.controller.to_string();
    K8sEvent {
        action: Some(pending.reason.clone()),
        reason: Some(pending.reason.clone()),
        event_time: Some(MicroTime(now)),
        regarding: Some(pending.reference.clone()),
        note: Some(pending.note.clone()),
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

/// The reference of a JSON object (template or member object), for events.
pub(crate) fn reference_of(object: &serde_json::Value) -> ObjectReference {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    ObjectReference {
        api_version: text("/apiVersion"),
        kind: text("/kind"),
        namespace: text("/metadata/namespace").filter(|ns| !ns.is_empty()),
        name: text("/metadata/name"),
        uid: text("/metadata/uid"),
        resource_version: None,
        field_path: None,
    }
}

/// The reference of a typed object, for events.
pub(crate) fn reference<K: kube::Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    object.object_ref(&())
}
