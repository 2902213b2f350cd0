//! Volume phases as the persistent-volume controller reports them: a claim is bound (as if a provisioner had
//! made a volume of the size it asks for) and says whether a pod uses it; a volume is `Bound` once it names a
//! claim and `Available` until then. No PersistentVolume object is created for a claim (docs/COMPATIBILITY.md).

use serde_json::{Value, json};

use super::common::{Cond, Stamps, conditions, kept_time, name, status_of};

/// Whether a pod that has not finished mounts the claim `claim` of `namespace`.
fn used(namespace: Option<&Value>, claim: &str, pods: &[Value]) -> bool {
    pods.iter()
        .filter(|p| p.pointer("/metadata/namespace") == namespace)
        .filter(|p| {
            !matches!(
                p.pointer("/status/phase").and_then(Value::as_str),
                Some("Succeeded" | "Failed")
            )
        })
        .any(|p| {
            p.pointer("/spec/volumes")
                .and_then(Value::as_array)
                .is_some_and(|vs| {
                    vs.iter().any(|v| {
                        v.pointer("/persistentVolumeClaim/claimName")
                            .and_then(Value::as_str)
                            == Some(claim)
                    })
                })
        })
}

/// PersistentVolumeClaim status: `Bound` with the requested capacity and access modes, and the `Unused`
/// condition.
pub(crate) fn persistent_volume_claim(obj: &Value, pods: &[Value], now: &str) -> Value {
    let current = status_of(obj);
    let mut status = current.clone();
    status.insert("phase".into(), json!("Bound"));
    if let Some(modes) = obj.pointer("/spec/accessModes") {
        status.insert("accessModes".into(), modes.clone());
    }
    if let Some(storage) = obj.pointer("/spec/resources/requests/storage") {
        status.insert("capacity".into(), json!({"storage": storage}));
    }
    let unused = if used(obj.pointer("/metadata/namespace"), name(obj), pods) {
        Cond {
            kind: "Unused",
            status: "False",
            reason: "PodUsingPVC",
            message: "A pod is currently referencing this PVC".into(),
        }
    } else {
        Cond {
            kind: "Unused",
            status: "True",
            reason: "NoPodsUsingPVC",
            message: "No pods are currently referencing this PVC".into(),
        }
    };
    status.insert(
        "conditions".into(),
        conditions(&current, &[unused], Stamps::NullProbe, now),
    );
    Value::Object(status)
}

/// PersistentVolume status: `Bound` when it names a claim, else `Available`, with the time the phase last
/// changed.
pub(crate) fn persistent_volume(obj: &Value, now: &str) -> Value {
    let current = status_of(obj);
    let phase = if obj.pointer("/spec/claimRef").is_some_and(|c| !c.is_null()) {
        "Bound"
    } else {
        "Available"
    };
    let mut status = current.clone();
    let same = current.get("phase").and_then(Value::as_str) == Some(phase);
    status.insert("phase".into(), json!(phase));
    let time = if same {
        kept_time(&current, "lastPhaseTransitionTime", now)
    } else {
        json!(now)
    };
    status.insert("lastPhaseTransitionTime".into(), time);
    Value::Object(status)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use crate::{Kind, MemberView, pending_status};

    const NOW: &str = "2026-01-01T00:00:00Z";

    #[test]
    fn a_claim_is_bound_with_what_it_asks_and_says_whether_a_pod_uses_it() {
        let mut claim = json!({"metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        let status = pending_status(
            Kind::PersistentVolumeClaim,
            &claim,
            &MemberView::default(),
            NOW,
        )
        .unwrap();
        assert_eq!(status["phase"], "Bound");
        assert_eq!(status["capacity"], json!({"storage": "1Gi"}));
        assert_eq!(status["accessModes"], json!(["ReadWriteOnce"]));
        let unused = &status["conditions"][0];
        assert_eq!(
            (&unused["type"], &unused["status"]),
            (&json!("Unused"), &json!("True"))
        );
        assert_eq!(unused["reason"], "NoPodsUsingPVC");
        claim["status"] = status;
        let user = json!({"metadata": {"name": "p", "namespace": "default"},
            "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}});
        let member = MemberView {
            pods: vec![user],
            ..MemberView::default()
        };
        let status = pending_status(Kind::PersistentVolumeClaim, &claim, &member, NOW).unwrap();
        assert_eq!(status["conditions"][0]["status"], "False");
        assert_eq!(status["conditions"][0]["reason"], "PodUsingPVC");
    }

    #[test]
    fn a_volume_is_available_until_it_names_a_claim() {
        let mut pv = json!({"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "1Gi"}}});
        let status =
            pending_status(Kind::PersistentVolume, &pv, &MemberView::default(), NOW).unwrap();
        assert_eq!(status["phase"], "Available");
        pv["status"] = status;
        assert_eq!(
            pending_status(Kind::PersistentVolume, &pv, &MemberView::default(), NOW),
            None
        );
        pv["spec"]["claimRef"] = json!({"name": "data", "namespace": "default"});
        let later = "2026-01-02T00:00:00Z";
        let status =
            pending_status(Kind::PersistentVolume, &pv, &MemberView::default(), later).unwrap();
        assert_eq!(status["phase"], "Bound");
        assert_eq!(status["lastPhaseTransitionTime"], later);
    }
}
