//! The journal: per object and operation, the last call's answering layer, its latency and the last error, for
//! people to read (`flotilla status` and the status page `flotilla up` serves). Metrics count calls by kind;
//! the journal says what happened to one object.
//!
//! Guarantees:
//! - Bounded: at most `capacity` objects are remembered; when a new object would exceed it, the object first
//!   recorded is forgotten (first in, first out), so a long-running control plane never grows it without end.
//! - Objects are named by group, kind, namespace and name, not version: a template and its member copies
//!   (InterpretHealth and InterpretStatus see the member object, which has the template's name) share a record.
//! - Recording takes one short lock and never fails; it runs on every dispatched call.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use flotilla_api::config::v1alpha1::InterpreterOperation;
use jiff::Timestamp;
use kube::core::GroupVersionKind;
use serde_json::Value;

use super::explain::Explanation;
use crate::layer::LayerKind;

/// How many objects a journal remembers by default.
const DEFAULT_CAPACITY: usize = 10_000;

/// The object a call was about.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Subject {
    /// API group, empty for the core group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Subject {
    /// The subject named by these parts.
    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> Subject {
        Subject {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The subject of `object`, whose kind is `gvk`.
    pub(crate) fn of(gvk: &GroupVersionKind, object: &Value) -> Subject {
        let meta = |field: &str| {
            object
                .pointer(&format!("/metadata/{field}"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        Subject::new(&gvk.group, &gvk.kind, meta("namespace"), meta("name"))
    }
}

/// When an operation last failed on an object, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastError {
    /// When.
    pub at: Timestamp,
    /// The error on one line.
    pub message: String,
}

/// What the journal knows of one operation on one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The operation.
    pub operation: InterpreterOperation,
    /// The layer that answered the last call (`None`: no layer had a rule).
    pub layer: Option<LayerKind>,
    /// The rule that layer used.
    pub rule: Option<String>,
    /// How long the last call took.
    pub latency: Duration,
    /// When the last call ended.
    pub at: Timestamp,
    /// Calls recorded since the object was first recorded.
    pub calls: u64,
    /// Whether the last call failed.
    pub failed: bool,
    /// The most recent failure, kept after later successes.
    pub last_error: Option<LastError>,
}

#[derive(Debug)]
struct Inner {
    capacity: usize,
    objects: HashMap<Subject, Vec<Entry>>,
    /// Subjects in the order they were first recorded; holds exactly the keys of `objects`.
    order: VecDeque<Subject>,
}

/// The bounded record of interpreter calls per object and operation. Cheap to clone: clones share the record.
#[derive(Clone, Debug)]
pub struct Journal {
    inner: Arc<Mutex<Inner>>,
}

impl Default for Journal {
    fn default() -> Self {
        Journal::with_capacity(DEFAULT_CAPACITY)
    }
}

impl Journal {
    /// An empty journal remembering at most `capacity` objects (at least one).
    pub fn with_capacity(capacity: usize) -> Journal {
        Journal {
            inner: Arc::new(Mutex::new(Inner {
                capacity: capacity.max(1),
                objects: HashMap::new(),
                order: VecDeque::new(),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the record consistent: every update is one push or
        // one field assignment.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one dispatched call on `subject`.
    pub(crate) fn record(&self, subject: Subject, explanation: &Explanation, latency: Duration) {
        let at = Timestamp::now();
        let mut inner = self.lock();
        if !inner.objects.contains_key(&subject) {
            if inner.objects.len() >= inner.capacity
                && let Some(oldest) = inner.order.pop_front()
            {
                inner.objects.remove(&oldest);
            }
            inner.order.push_back(subject.clone());
        }
        let entries = inner.objects.entry(subject).or_default();
        let index = match entries
            .iter()
            .position(|e| e.operation == explanation.operation)
        {
            Some(index) => index,
            None => {
                entries.push(Entry {
                    operation: explanation.operation.clone(),
                    layer: None,
                    rule: None,
                    latency,
                    at,
                    calls: 0,
                    failed: false,
                    last_error: None,
                });
                entries.len() - 1
            }
        };
        let entry = &mut entries[index];
        entry.layer = explanation.answered.as_ref().map(|a| a.layer);
        entry.rule = explanation.answered.as_ref().map(|a| a.rule.clone());
        entry.latency = latency;
        entry.at = at;
        entry.calls += 1;
        entry.failed = explanation.error.is_some();
        if let Some(message) = &explanation.error {
            entry.last_error = Some(LastError {
                at,
                message: message.clone(),
            });
        }
    }

    /// What is known of `subject`, one entry per operation in the operations' order.
    pub fn entries(&self, subject: &Subject) -> Vec<Entry> {
        let mut entries = self
            .lock()
            .objects
            .get(subject)
            .cloned()
            .unwrap_or_default();
        entries.sort_by(|a, b| a.operation.cmp(&b.operation));
        entries
    }

    /// How many objects are remembered.
    pub fn len(&self) -> usize {
        self.lock().objects.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facade::explain::Answer;
    use InterpreterOperation as Op;

    fn explanation(operation: Op, layer: LayerKind, error: Option<&str>) -> Explanation {
        let mut explanation = Explanation::new(operation, None);
        explanation.answered = Some(Answer {
            layer,
            rule: format!("{layer} rule"),
        });
        explanation.error = error.map(str::to_owned);
        explanation
    }

    fn web() -> Subject {
        Subject::new("apps", "Deployment", "default", "web")
    }

    #[test]
    fn keeps_the_last_layer_and_latency_and_the_last_error_after_a_success() {
        let journal = Journal::default();
        let ms = Duration::from_millis;
        journal.record(
            web(),
            &explanation(Op::InterpretHealth, LayerKind::Webhook, Some("timed out")),
            ms(30),
        );
        journal.record(
            web(),
            &explanation(Op::InterpretHealth, LayerKind::Native, None),
            ms(2),
        );
        journal.record(
            web(),
            &explanation(Op::InterpretReplica, LayerKind::Native, None),
            ms(1),
        );
        let entries = journal.entries(&web());
        let operations: Vec<Op> = entries.iter().map(|e| e.operation.clone()).collect();
        assert_eq!(operations, [Op::InterpretReplica, Op::InterpretHealth]);
        let health = &entries[1];
        assert_eq!(health.layer, Some(LayerKind::Native));
        assert_eq!(health.rule.as_deref(), Some("native rule"));
        assert_eq!(health.latency, ms(2));
        assert_eq!(health.calls, 2);
        assert!(!health.failed);
        assert_eq!(
            health.last_error.as_ref().map(|e| e.message.as_str()),
            Some("timed out")
        );
        assert!(entries[0].last_error.is_none());
        assert!(
            journal
                .entries(&Subject::new("apps", "Deployment", "other", "web"))
                .is_empty()
        );
    }

    #[test]
    fn forgets_the_object_first_recorded_beyond_its_capacity() {
        let journal = Journal::with_capacity(2);
        let named = |name: &str| Subject::new("", "ConfigMap", "default", name);
        let call = explanation(Op::InterpretHealth, LayerKind::Native, None);
        journal.record(named("a"), &call, Duration::ZERO);
        journal.record(named("b"), &call, Duration::ZERO);
        // Recording "a" again does not make it younger: the order is first recorded, first forgotten.
        journal.record(named("a"), &call, Duration::ZERO);
        journal.record(named("c"), &call, Duration::ZERO);
        assert_eq!(journal.len(), 2);
        assert!(journal.entries(&named("a")).is_empty());
        assert_eq!(journal.entries(&named("b")).len(), 1);
        assert_eq!(journal.entries(&named("c")).len(), 1);
    }
}
