//! The scheduler's memory of the generations its own result patches produced. A result patch changes the
//! binding's spec, so the binding comes back with a new generation, which is a scheduling trigger; the
//! result it would compute is the one just written (Duplicated and non-workload bindings are scheduled again
//! on every trigger), so the second pass would only rewrite `lastScheduledTime`. The scheduler therefore does
//! not take its own generation as a trigger. A change by anyone else after the patch has a higher generation
//! and still triggers, as do deletion, acceptance and Cluster changes.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::controller::BindingKey;

/// Per binding: the uid and the generation the scheduler's last result patch produced.
#[derive(Default)]
pub(super) struct OwnWrites(Mutex<HashMap<BindingKey, (String, i64)>>);

impl OwnWrites {
    /// Records that the scheduler's result patch of `key` (object `uid`) produced `generation`.
    pub(super) fn record(&self, key: &BindingKey, uid: &str, generation: i64) {
        self.lock()
            .insert(key.clone(), (uid.to_owned(), generation));
    }

    /// Whether generation `generation` of binding `key` (object `uid`) is the scheduler's own result patch.
    /// The record is used once: a later event of the same generation (a resync, a relist) triggers as usual.
    pub(super) fn take_own(&self, key: &BindingKey, uid: &str, generation: i64) -> bool {
        let mut writes = self.lock();
        match writes.get(key) {
            Some((written_uid, written)) if written_uid == uid && *written == generation => {
                writes.remove(key);
                true
            }
            Some((written_uid, written)) if written_uid != uid || *written < generation => {
                writes.remove(key);
                false
            }
            _ => false,
        }
    }

    /// Drops the record of a binding that is gone.
    pub(super) fn forget(&self, key: &BindingKey) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BindingKey, (String, i64)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> BindingKey {
        BindingKey {
            namespace: "default".into(),
            name: "nginx-deployment".into(),
        }
    }

    #[test]
    fn only_the_generation_of_the_own_patch_is_taken_and_only_once() {
        let writes = OwnWrites::default();
        assert!(!writes.take_own(&key(), "u1", 2), "nothing recorded");
        writes.record(&key(), "u1", 2);
        assert!(!writes.take_own(&key(), "u1", 1), "an older generation");
        assert!(
            !writes.take_own(&key(), "u2", 2),
            "another object of the same name"
        );
        writes.record(&key(), "u1", 2);
        assert!(writes.take_own(&key(), "u1", 2));
        assert!(!writes.take_own(&key(), "u1", 2), "used once");
        writes.record(&key(), "u1", 2);
        assert!(
            !writes.take_own(&key(), "u1", 3),
            "someone else's later change"
        );
        assert!(
            !writes.take_own(&key(), "u1", 2),
            "dropped by the later change"
        );
        writes.record(&key(), "u1", 2);
        writes.forget(&key());
        assert!(!writes.take_own(&key(), "u1", 2));
    }
}
