//! Kubernetes Events with Karmada's reasons, published off the reconcile path.
//!
//! Reconciles hand events to a bounded channel and go on; one background task publishes them through
//! kube-runtime's [`Recorder`] (one per reporting controller, `flotilla-<controller>`), which also folds repeats
//! into event series. When the channel is full, events are dropped with a debug log rather than slowing
//! controllers down: events are informational, never a source of truth.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
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

async fn publish_loop(client: Client, mut rx: mpsc::Receiver<Pending>) {
    let mut recorders: HashMap<Arc<str>, Recorder> = HashMap::new();
    while let Some(pending) = rx.recv().await {
        let recorder = recorders
            .entry(pending.controller.clone())
            .or_insert_with(|| {
                Recorder::new(
                    client.clone(),
                    Reporter {
                        controller: pending.controller.to_string(),
                        instance: None,
                    },
                )
            });
        let event = Event {
            type_: pending.type_,
            reason: pending.reason.clone(),
            note: Some(pending.note),
            action: pending.reason,
            secondary: None,
        };
        if let Err(err) = recorder.publish(&event, &pending.reference).await {
            tracing::debug!(error = %err, "failed to publish event");
        }
    }
}

/// The reference of a JSON object (template or member object), for events.
pub fn reference_of(object: &serde_json::Value) -> ObjectReference {
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
pub fn reference<K: kube::Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    object.object_ref(&())
}
