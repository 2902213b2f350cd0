//! Which template `resourceVersion` a binding's `spec.resource` names. Karmada's detector ignores template
//! updates that change only the status (and server-kept metadata), so a binding keeps naming the template's
//! version of its last significant change. A reconcile that runs late (its request queued behind others
//! while the template's status was written) reads a newer version that differs only in status; naming that
//! version would rewrite the binding, bump its generation and have the scheduler observe it again, for no
//! change. The detector therefore remembers, per template, the version it last wrote into the binding and a
//! fingerprint of the template's significant content, and reuses that version while the fingerprint holds.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use crate::objects;
use crate::templates::TemplateKey;

/// Per template: the version named in its binding and the fingerprint of that version.
#[derive(Default)]
pub(super) struct ReferencedVersions(Mutex<HashMap<TemplateKey, (String, u64)>>);

impl ReferencedVersions {
    /// The version the binding of `template` should name, and the template's fingerprint (for
    /// [`ReferencedVersions::record`]).
    pub(super) fn version_for(&self, key: &TemplateKey, template: &Value) -> (String, u64) {
        let print = fingerprint(template);
        match self.lock().get(key) {
            Some((version, recorded)) if *recorded == print => (version.clone(), print),
            _ => (objects::resource_version(template).to_owned(), print),
        }
    }

    /// Records that the binding of `key` names `version`, of a template with fingerprint `print`.
    pub(super) fn record(&self, key: &TemplateKey, version: String, print: u64) {
        self.lock().insert(key.clone(), (version, print));
    }

    /// Drops the record of a template that is gone.
    pub(super) fn forget(&self, key: &TemplateKey) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TemplateKey, (String, u64)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A hash of everything but `status`, `metadata.managedFields` and `metadata.resourceVersion` (what the
/// detector's update filter also leaves out).
fn fingerprint(template: &Value) -> u64 {
    let mut significant = template.clone();
    if let Some(map) = significant.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
            meta.remove("resourceVersion");
        }
    }
    let mut hasher = DefaultHasher::new();
    significant.to_string().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template(version: &str, replicas: i64, ready: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "nginx", "namespace": "default", "resourceVersion": version},
               "spec": {"replicas": replicas}, "status": {"readyReplicas": ready}})
    }

    #[test]
    fn a_status_only_change_keeps_the_recorded_version_and_a_spec_change_takes_the_new_one() {
        let versions = ReferencedVersions::default();
        let key = TemplateKey::of(&template("7", 2, 0));
        let (version, print) = versions.version_for(&key, &template("7", 2, 0));
        assert_eq!(version, "7");
        versions.record(&key, version, print);
        assert_eq!(versions.version_for(&key, &template("9", 2, 2)).0, "7");
        assert_eq!(versions.version_for(&key, &template("11", 3, 2)).0, "11");
        versions.forget(&key);
        assert_eq!(versions.version_for(&key, &template("9", 2, 2)).0, "9");
    }
}
