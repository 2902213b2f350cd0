//! What PersistentVolumes' create and status strategies write beyond defaulting, as kube-apiserver v1.37's
//! (`pkg/registry/core/persistentvolume`): the time their phase last changed.

use serde_json::{Value, json};

use crate::defaults::child;

/// A new PersistentVolume's phase (`Pending`, from its zero status) starts now.
pub(crate) fn persistent_volume_created(pv: &mut Value) {
    if let Some(status) = child(pv, &["status"]) {
        status.insert("lastPhaseTransitionTime".into(), json!(crate::meta::now()));
    }
}

/// A status write of a PersistentVolume: the transition time stays while the phase does, unless the writer set
/// one; a new phase starts now unless the writer gave a new time.
pub(crate) fn persistent_volume_status_updated(old: &Value, new: &mut Value) {
    let phase = |v: &Value| v.pointer("/status/phase").cloned();
    let time_of = |v: &Value| {
        v.pointer("/status/lastPhaseTransitionTime")
            .filter(|t| !t.is_null())
            .cloned()
    };
    let (old_time, new_time) = (time_of(old), time_of(new));
    let time = if phase(old) == phase(new) {
        new_time.or(old_time)
    } else if new_time.is_none() || new_time == old_time {
        Some(json!(crate::meta::now()))
    } else {
        new_time
    };
    if let Some(time) = time
        && let Some(status) = child(new, &["status"])
    {
        status.insert("lastPhaseTransitionTime".into(), time);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_volumes_phase_transition_time_follows_its_phase() {
        let old = json!({"status": {"phase": "Pending", "lastPhaseTransitionTime": "2026-01-01T00:00:00Z"}});
        let mut same = json!({"status": {"phase": "Pending"}});
        persistent_volume_status_updated(&old, &mut same);
        assert_eq!(
            same["status"]["lastPhaseTransitionTime"],
            "2026-01-01T00:00:00Z"
        );
        let mut bound = json!({"status": {"phase": "Bound", "lastPhaseTransitionTime": "2026-01-01T00:00:00Z"}});
        persistent_volume_status_updated(&old, &mut bound);
        assert_ne!(
            bound["status"]["lastPhaseTransitionTime"],
            "2026-01-01T00:00:00Z"
        );
        let mut told = json!({"status": {"phase": "Bound", "lastPhaseTransitionTime": "2026-02-02T00:00:00Z"}});
        persistent_volume_status_updated(&old, &mut told);
        assert_eq!(
            told["status"]["lastPhaseTransitionTime"],
            "2026-02-02T00:00:00Z"
        );
    }
}
