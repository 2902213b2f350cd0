//! PodDisruptionBudget status as the disruption controller reports it from the Pods its selector matches:
//! how many are expected, how many must stay healthy, how many are, and so how many may be disrupted.
//!
//! The expected count for `maxUnavailable` and percentage `minAvailable` comes, in the real controller, from
//! the scale of the pods' controllers; the simulator counts the matching pods instead, which is the same number
//! once the controllers have created their pods (docs/COMPATIBILITY.md).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::{Selector, SelectorExt};
use serde_json::{Map, Value, json};

use super::common::{generation, status_of};

/// Whether `pod` is Ready (its `Ready` condition is `True`).
fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// The pods of `pods` in the budget's namespace that its selector matches (policy/v1: an empty selector
/// matches every pod of the namespace, an absent one none).
fn matching<'a>(budget: &Value, pods: &'a [Value]) -> Vec<&'a Value> {
    let Some(selector) = budget
        .pointer("/spec/selector")
        .and_then(|s| serde_json::from_value::<LabelSelector>(s.clone()).ok())
        .and_then(|s| Selector::try_from(s).ok())
    else {
        return Vec::new();
    };
    let namespace = budget.pointer("/metadata/namespace");
    pods.iter()
        .filter(|p| p.pointer("/metadata/namespace") == namespace)
        .filter(|p| {
            let labels = p
                .pointer("/metadata/labels")
                .and_then(|l| serde_json::from_value(l.clone()).ok())
                .unwrap_or_default();
            selector.matches(&labels)
        })
        .collect()
}

/// An int-or-string budget field scaled against `total`: an integer as is, `N%` of `total` rounded up.
fn scaled(value: &Value, total: i64) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let percent: i64 = value.as_str()?.strip_suffix('%')?.parse().ok()?;
    Some((percent * total + 99) / 100)
}

/// The budget's status for the member's `pods`, at `now` for a condition that changes.
pub(crate) fn pod_disruption_budget(obj: &Value, pods: &[Value], now: &str) -> Value {
    let current = status_of(obj);
    let pods = matching(obj, pods);
    let count = i64::try_from(pods.len()).unwrap_or(i64::MAX);
    let healthy = i64::try_from(
        pods.iter()
            .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none() && ready(p))
            .count(),
    )
    .unwrap_or(i64::MAX);
    let (expected, desired) = match (
        obj.pointer("/spec/maxUnavailable"),
        obj.pointer("/spec/minAvailable"),
    ) {
        (Some(max), _) if !max.is_null() => {
            (count, (count - scaled(max, count).unwrap_or(0)).max(0))
        }
        (_, Some(min)) if min.is_i64() => (count, min.as_i64().unwrap_or(0)),
        (_, Some(min)) if !min.is_null() => (count, scaled(min, count).unwrap_or(0)),
        _ => (0, 0),
    };
    let allowed = if expected <= 0 {
        0
    } else {
        (healthy - desired).max(0)
    };
    let mut status = current.clone();
    let observed = generation(obj);
    status.insert("observedGeneration".into(), json!(observed));
    status.insert("disruptionsAllowed".into(), json!(allowed));
    status.insert("currentHealthy".into(), json!(healthy));
    status.insert("desiredHealthy".into(), json!(desired));
    status.insert("expectedPods".into(), json!(expected));
    let (state, reason) = if allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    status.insert(
        "conditions".into(),
        json!([condition(&current, state, reason, observed, now)]),
    );
    Value::Object(status)
}

/// The `DisruptionAllowed` condition (a metav1.Condition: `message` always present, `observedGeneration` set),
/// keeping its transition time while its status holds.
fn condition(
    current: &Map<String, Value>,
    state: &str,
    reason: &str,
    observed: i64,
    now: &str,
) -> Value {
    let old = current
        .get("conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let transition = old
        .filter(|o| o["status"] == state)
        .and_then(|o| o.get("lastTransitionTime"))
        .filter(|t| t.is_string())
        .cloned()
        .unwrap_or_else(|| json!(now));
    json!({
        "type": "DisruptionAllowed",
        "status": state,
        "reason": reason,
        "message": "",
        "observedGeneration": observed,
        "lastTransitionTime": transition,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{Value, json};

    use crate::{Kind, MemberView, pending_status};

    fn pod(name: &str, app: &str, ready: bool) -> Value {
        json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
               "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
    }

    fn budget(spec: Value) -> Value {
        json!({"metadata": {"name": "b", "namespace": "default", "generation": 2},
               "spec": spec})
    }

    fn status(budget: &Value, pods: Vec<Value>) -> Value {
        let member = MemberView {
            pods,
            ..MemberView::default()
        };
        pending_status(
            Kind::PodDisruptionBudget,
            budget,
            &member,
            "2026-01-01T00:00:00Z",
        )
        .unwrap()
    }

    #[test]
    fn min_available_counts_the_ready_pods_its_selector_matches() {
        let b = budget(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}));
        let pods = vec![
            pod("a", "web", true),
            pod("b", "web", true),
            pod("c", "web", false),
            pod("d", "other", true),
        ];
        let s = status(&b, pods);
        assert_eq!(s["expectedPods"], 3);
        assert_eq!(s["currentHealthy"], 2);
        assert_eq!(s["desiredHealthy"], 1);
        assert_eq!(s["disruptionsAllowed"], 1);
        assert_eq!(s["observedGeneration"], 2);
        let c = &s["conditions"][0];
        assert_eq!(
            (
                &c["type"],
                &c["status"],
                &c["reason"],
                &c["message"],
                &c["observedGeneration"]
            ),
            (
                &json!("DisruptionAllowed"),
                &json!("True"),
                &json!("SufficientPods"),
                &json!(""),
                &json!(2)
            )
        );
    }

    #[test]
    fn no_matching_pods_allows_no_disruption_and_reports_zeros() {
        let b = budget(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "none"}}}));
        let s = status(&b, vec![pod("a", "web", true)]);
        assert_eq!(s["expectedPods"], 0);
        assert_eq!(s["currentHealthy"], 0);
        assert_eq!(s["desiredHealthy"], 1);
        assert_eq!(s["disruptionsAllowed"], 0);
        assert_eq!(s["conditions"][0]["reason"], "InsufficientPods");
        assert_eq!(s["conditions"][0]["status"], "False");
    }

    #[test]
    fn percentages_and_max_unavailable_scale_with_the_pods() {
        let pods = || {
            (0..4)
                .map(|i| pod(&format!("p{i}"), "web", true))
                .collect::<Vec<_>>()
        };
        let sel = json!({"matchLabels": {"app": "web"}});
        let s = status(
            &budget(json!({"maxUnavailable": "50%", "selector": sel})),
            pods(),
        );
        assert_eq!(
            (s["desiredHealthy"].clone(), s["disruptionsAllowed"].clone()),
            (json!(2), json!(2))
        );
        let s = status(
            &budget(json!({"maxUnavailable": 1, "selector": sel})),
            pods(),
        );
        assert_eq!(
            (s["desiredHealthy"].clone(), s["disruptionsAllowed"].clone()),
            (json!(3), json!(1))
        );
        let s = status(
            &budget(json!({"minAvailable": "30%", "selector": sel})),
            pods(),
        );
        assert_eq!(
            (s["desiredHealthy"].clone(), s["disruptionsAllowed"].clone()),
            (json!(2), json!(2))
        );
    }

    #[test]
    fn a_settled_budget_is_not_rewritten() {
        let mut b = budget(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}));
        b["status"] = status(&b, vec![pod("a", "web", true)]);
        let member = MemberView {
            pods: vec![pod("a", "web", true)],
            ..MemberView::default()
        };
        assert_eq!(
            pending_status(
                Kind::PodDisruptionBudget,
                &b,
                &member,
                "2027-01-01T00:00:00Z"
            ),
            None
        );
    }
}
