//! The Work conditions the execution controller decided, on their way to the Work's status.
//!
//! An apply is followed within moments by the member object's first status (a real member's controllers, the
//! simulator), which this controller reflects into `status.manifestStatuses`. Writing `Applied` and
//! `Dispatching` at once and the manifest status a moment later cost two status writes per Work; handing the
//! conditions to this controller, which writes them together with the next manifest statuses (or alone when
//! none come within [`super::COALESCE`]), costs one (issue 17). It also leaves one writer of a Work's status
//! per process, so the two parts never race.
//!
//! Nothing acknowledged is lost by the wait: the execution controller's decision is level-triggered, so after
//! a restart it applies each Work again and posts the same conditions.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use flotilla_api::work::v1alpha1::Work;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::COALESCE;
use crate::controllers::execution::WorkKey;
use crate::runtime::Trigger;

/// The hand-over of Work conditions from the execution controller (the poster, which decides them) to the work
/// status controller (the outbox, which writes them): the two ends share one outbox.
pub(crate) fn handover() -> (ConditionPoster, ConditionOutbox) {
    let outbox = ConditionOutbox::default();
    (ConditionPoster(outbox.clone()), outbox)
}

/// The execution controller's end of the hand-over: it can only post.
#[derive(Clone)]
pub(crate) struct ConditionPoster(ConditionOutbox);

impl ConditionPoster {
    /// Hands over the Work's whole condition list, replacing any not yet written; it is written within
    /// [`COALESCE`], with whatever member status arrives by then.
    pub(crate) fn post(&self, key: WorkKey, conditions: Vec<Condition>) {
        self.0.post(key, conditions);
    }
}

/// Conditions waiting to be written, by Work: the work status controller's end of the hand-over. Cheap to
/// clone (a handle).
#[derive(Clone, Default)]
pub(crate) struct ConditionOutbox(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    pending: HashMap<WorkKey, Vec<Condition>>,
    /// What this process last wrote for a Work, until the Work informer shows it: the informer may lag
    /// behind a write, and a comparison with what it shows would then drop a correction.
    written: HashMap<WorkKey, Vec<Condition>>,
    /// The work status controller's, once it runs; conditions posted before wait for it.
    trigger: Option<Trigger<Work>>,
}

impl ConditionOutbox {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the Work's whole condition list from the poster, replacing any not yet written.
    fn post(&self, key: WorkKey, conditions: Vec<Condition>) {
        let mut state = self.state();
        if let Some(trigger) = &state.trigger {
            trigger.reconcile_within(trigger.object_ref(&key.namespace, &key.name), COALESCE);
        }
        state.pending.insert(key, conditions);
    }

    /// Connects the work status controller, which then writes what was posted before.
    pub(super) fn attach(&self, trigger: Trigger<Work>) {
        let mut state = self.state();
        for key in state.pending.keys() {
            trigger.reconcile_within(trigger.object_ref(&key.namespace, &key.name), COALESCE);
        }
        state.trigger = Some(trigger);
    }

    /// The conditions waiting for the Work, now the caller's to write.
    pub(super) fn take(&self, key: &WorkKey) -> Option<Vec<Condition>> {
        self.state().pending.remove(key)
    }

    /// The conditions the Work has now: what was last written for it if the informer's copy (`cached`) may
    /// not show that write yet, else `cached`.
    pub(super) fn current(&self, key: &WorkKey, cached: &[Condition]) -> Vec<Condition> {
        let mut state = self.state();
        match state.written.get(key) {
            Some(written) if written.as_slice() == cached => {
                state.written.remove(key);
                cached.to_vec()
            }
            Some(written) => written.clone(),
            None => cached.to_vec(),
        }
    }

    /// Records conditions just written for the Work.
    pub(super) fn wrote(&self, key: WorkKey, conditions: Vec<Condition>) {
        self.state().written.insert(key, conditions);
    }

    /// Forgets a Work that is going away.
    pub(super) fn forget(&self, key: &WorkKey) {
        let mut state = self.state();
        state.pending.remove(key);
        state.written.remove(key);
    }

    /// Puts back conditions whose write failed, unless newer ones were posted meanwhile (the failed
    /// reconcile is retried and takes them again).
    pub(super) fn restore(&self, key: WorkKey, conditions: Vec<Condition>) {
        if let Entry::Vacant(slot) = self.state().pending.entry(key) {
            slot.insert(conditions);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> WorkKey {
        WorkKey {
            namespace: "karmada-es-member1".into(),
            name: name.into(),
        }
    }

    fn condition(type_: &str, status: &str) -> Condition {
        flotilla_core::conditions::new_condition(type_, status, "Reason", "message")
    }

    #[test]
    fn the_latest_post_wins_and_is_taken_once() {
        let outbox = ConditionOutbox::default();
        let (failed, applied) = (condition("Applied", "False"), condition("Applied", "True"));
        outbox.post(key("a"), vec![failed]);
        outbox.post(key("a"), vec![applied.clone()]);
        assert_eq!(outbox.take(&key("a")), Some(vec![applied]));
        assert_eq!(outbox.take(&key("a")), None);
        assert_eq!(outbox.take(&key("b")), None);
    }

    #[test]
    fn a_failed_write_is_restored_unless_newer_conditions_came() {
        let outbox = ConditionOutbox::default();
        let (failed, applied) = (condition("Applied", "False"), condition("Applied", "True"));
        outbox.restore(key("a"), vec![applied.clone()]);
        assert_eq!(outbox.take(&key("a")), Some(vec![applied.clone()]));
        outbox.post(key("a"), vec![failed.clone()]);
        outbox.restore(key("a"), vec![applied]);
        assert_eq!(outbox.take(&key("a")), Some(vec![failed]));
    }

    #[test]
    fn what_was_written_counts_until_the_informer_shows_it() {
        let outbox = ConditionOutbox::default();
        let (failed, applied) = (condition("Applied", "False"), condition("Applied", "True"));
        // The informer still shows Applied=True while Applied=False was written: a retry's Applied=True must
        // be seen as a change.
        outbox.wrote(key("a"), vec![failed.clone()]);
        assert_eq!(
            outbox.current(&key("a"), std::slice::from_ref(&applied)),
            vec![failed.clone()]
        );
        // Once the informer shows the write, it is the informer's copy that counts.
        assert_eq!(
            outbox.current(&key("a"), std::slice::from_ref(&failed)),
            vec![failed.clone()]
        );
        assert_eq!(
            outbox.current(&key("a"), std::slice::from_ref(&applied)),
            vec![applied.clone()]
        );
        // A Work going away leaves nothing behind.
        outbox.wrote(key("b"), vec![failed.clone()]);
        outbox.post(key("b"), vec![applied]);
        outbox.forget(&key("b"));
        assert_eq!(outbox.take(&key("b")), None);
        assert_eq!(outbox.current(&key("b"), &[]), Vec::<Condition>::new());
    }
}
