//! Kubernetes Events with Karmada's reasons, published off the reconcile path.
//!
//! Reconciles hand events to a bounded channel and go on; one background task ([`publisher`]) correlates them as
//! client-go correlates Karmada's ([`correlator`]: exact repeats counted, alike Events with many messages
//! combined, spam dropped) and writes them as events.k8s.io/v1 Events reported by `flotilla-<controller>`, several
//! at once and each series' writes in order. When the channel is full, events are dropped rather than slowing
//! controllers down: events are informational, never a source of truth. Every Event not written is counted in
//! `flotilla_events_dropped_total` by reporting controller and cause (queue_full, spam, write_failed).

mod correlator;
mod publisher;

use std::sync::Arc;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::EventType;
use prometheus::{IntCounter, IntCounterVec};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use correlator::{Recorded, Regarding};

/// How many events may wait for publication before new ones are dropped. A burst of templates records Events
/// faster than [`publisher::IN_FLIGHT`] writes publish them: 300 Deployments to two members record about 6,600
/// within seconds, and a queue of 4,096 dropped up to 2,000 of them on real kube-apiservers
/// (docs/BENCHMARKS.md). The channel allocates as it fills, so a quiet control plane pays nothing for the room.
const QUEUE: usize = 32_768;

struct Pending {
    controller: Arc<str>,
    type_: EventType,
    reason: String,
    note: String,
    reference: ObjectReference,
}

/// The shared event sink; [`EventSink::recorder`] gives a controller its own reporter.
#[derive(Clone)]
pub(crate) struct EventSink {
    tx: Option<mpsc::Sender<Pending>>,
    /// `flotilla_events_dropped_total` ([`crate::metrics::Metrics::events_dropped`]).
    dropped: Option<IntCounterVec>,
}

impl EventSink {
    /// A sink publishing to `client`'s API server, with the task that does the publishing (spawn it); Events
    /// that are never written count in `dropped`.
    pub(crate) fn new(
        client: Client,
        dropped: IntCounterVec,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let sink = EventSink {
            tx: Some(tx),
            dropped: Some(dropped.clone()),
        };
        (sink, publisher::publish(client, rx, dropped))
    }

    /// A sink publishing to `client`'s API server from a task of its own that ends with `shutdown`, or one that
    /// drops every event when `disabled` (`--no-events`): what the controller manager and the agent both run.
    pub(crate) fn spawned(
        client: Client,
        disabled: bool,
        dropped: IntCounterVec,
        shutdown: &CancellationToken,
    ) -> Self {
        if disabled {
            return EventSink::disabled();
        }
        let (sink, publisher) = EventSink::new(client, dropped);
        let stop = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = publisher => {}
                () = stop.cancelled() => {}
            }
        });
        sink
    }

    /// A sink that drops every event (unit tests, tools).
    pub(crate) fn disabled() -> Self {
        EventSink {
            tx: None,
            dropped: None,
        }
    }

    /// A recorder reporting as `flotilla-<controller>`.
    pub(crate) fn recorder(&self, controller: &str) -> EventRecorder {
        let controller: Arc<str> = Arc::from(format!("flotilla-{controller}"));
        EventRecorder {
            queue_full: self
                .dropped
                .as_ref()
                .map(|dropped| dropped.with_label_values(&[&*controller, "queue_full"])),
            controller,
            tx: self.tx.clone(),
        }
    }
}

/// Records events for one controller.
#[derive(Clone)]
pub(crate) struct EventRecorder {
    controller: Arc<str>,
    tx: Option<mpsc::Sender<Pending>>,
    /// This controller's `flotilla_events_dropped_total{cause="queue_full"}`.
    queue_full: Option<IntCounter>,
}

impl EventRecorder {
    /// A `Normal` event on `reference`.
    pub(crate) fn normal(
        &self,
        reference: &ObjectReference,
        reason: &str,
        note: impl Into<String>,
    ) {
        self.send(EventType::Normal, reference, reason, note.into());
    }

    /// A `Warning` event on `reference`.
    pub(crate) fn warning(
        &self,
        reference: &ObjectReference,
        reason: &str,
        note: impl Into<String>,
    ) {
        self.send(EventType::Warning, reference, reason, note.into());
    }

    /// A `Warning` event about `err` on `reference`, unless `err` is an API "409 Conflict": the reconcile
    /// reads afresh and retries those, and a conflict a retry resolves is nothing a person must act on.
    pub(crate) fn failure(
        &self,
        reference: &ObjectReference,
        reason: &str,
        err: &Error,
        note: impl Into<String>,
    ) {
        if only_conflicts(err) {
            tracing::debug!(reason, error = %err.message(), "conflict is retried; no Warning event");
            return;
        }
        self.warning(reference, reason, note);
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
            if let Some(queue_full) = &self.queue_full {
                queue_full.inc();
            }
        }
    }
}

impl Pending {
    fn recorded(&self) -> Recorded {
        let r = &self.reference;
        Recorded {
            controller: self.controller.clone(),
            warning: self.type_ == EventType::Warning,
            reason: self.reason.clone(),
            note: self.note.clone(),
            regarding: Regarding {
                uid: r.uid.clone(),
                kind: r.kind.clone(),
                namespace: r.namespace.clone(),
                name: r.name.clone(),
            },
        }
    }
}

/// Whether `err` is a write conflict, or several that all are.
fn only_conflicts(err: &Error) -> bool {
    match err {
        Error::Multiple(errors) => !errors.is_empty() && errors.iter().all(only_conflicts),
        other => other.is_conflict(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> (EventRecorder, mpsc::Receiver<Pending>) {
        let (tx, rx) = mpsc::channel(8);
        let sink = EventSink {
            tx: Some(tx),
            dropped: None,
        };
        (sink.recorder("binding-controller"), rx)
    }

    fn api_error(code: u16, reason: &str) -> Error {
        Error::kube(
            "update",
            "Work karmada-es-m1/w",
            kube::Error::Api(Box::new(kube::core::Status {
                code,
                reason: reason.into(),
                message: "the object has been modified".into(),
                ..kube::core::Status::default()
            })),
        )
    }

    #[test]
    fn a_retried_conflict_is_no_warning_but_other_failures_are() {
        let (recorder, mut rx) = recorder();
        let target = ObjectReference {
            kind: Some("Deployment".into()),
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..ObjectReference::default()
        };
        let conflict = api_error(409, "Conflict");
        recorder.failure(&target, "SyncWorkFailed", &conflict, conflict.message());
        let conflicts =
            Error::Multiple(vec![api_error(409, "Conflict"), api_error(409, "Conflict")]);
        recorder.failure(&target, "SyncWorkFailed", &conflicts, conflicts.message());
        assert!(
            rx.try_recv().is_err(),
            "a conflict was recorded as a Warning"
        );

        let mixed = Error::Multiple(vec![
            api_error(409, "Conflict"),
            api_error(500, "InternalError"),
        ]);
        recorder.failure(&target, "SyncWorkFailed", &mixed, mixed.message());
        let forbidden = api_error(403, "Forbidden");
        recorder.failure(&target, "SyncWorkFailed", &forbidden, forbidden.message());
        for _ in 0..2 {
            let sent = rx.try_recv().expect("a Warning");
            assert!(sent.type_ == EventType::Warning);
            assert_eq!(sent.controller.as_ref(), "flotilla-binding-controller");
            assert!(!sent.note.contains("Status {"), "{}", sent.note);
        }
    }

    #[test]
    fn long_notes_are_cut_at_a_character_boundary() {
        let (recorder, mut rx) = recorder();
        recorder.normal(&ObjectReference::default(), "SyncSucceed", "é".repeat(700));
        let sent = rx.try_recv().expect("an Event");
        assert!(sent.note.len() <= 1024 && sent.note.ends_with("..."));
    }
}
