//! Pure steps of the cluster controller: NoSchedule taints from the Ready condition (controllers spec §9.3).

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{conditions, taints};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

const NO_SCHEDULE: &str = "NoSchedule";

fn taint(key: &str, now: Timestamp) -> Taint {
    Taint {
        key: key.to_owned(),
        effect: NO_SCHEDULE.to_owned(),
        time_added: Some(Time(now)),
        value: None,
    }
}

fn is(taint: &Taint, key: &str) -> bool {
    taint.key == key && taint.effect == NO_SCHEDULE
}

/// The Ready condition's status, if the cluster has one.
pub fn ready_status(cluster: &Cluster) -> Option<&str> {
    cluster
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == conditions::CLUSTER_READY)
        .map(|c| c.status.as_str())
}

/// The taint list the Ready condition asks for, or `None` when `current` already is it.
///
/// Absent Ready: add not-ready. False: add not-ready, remove unreachable. Unknown: add unreachable, remove
/// not-ready. True: remove both. Taints match by key and effect; added ones get `timeAdded = now`; other
/// taints are kept in place.
pub fn desired_taints(
    current: &[Taint],
    ready: Option<&str>,
    now: Timestamp,
) -> Option<Vec<Taint>> {
    let (add, remove): (&[&str], &[&str]) = match ready {
        None => (&[taints::NOT_READY], &[]),
        Some("False") => (&[taints::NOT_READY], &[taints::UNREACHABLE]),
        Some("True") => (&[], &[taints::NOT_READY, taints::UNREACHABLE]),
        Some(_) => (&[taints::UNREACHABLE], &[taints::NOT_READY]),
    };
    let mut out: Vec<Taint> = current
        .iter()
        .filter(|t| !remove.iter().any(|k| is(t, k)))
        .cloned()
        .collect();
    for key in add {
        if !out.iter().any(|t| is(t, key)) {
            out.push(taint(key, now));
        }
    }
    (out != current).then_some(out)
}

/// `key:effect` of each taint, for event messages.
pub fn describe_taints(list: &[Taint]) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect();
    format!("[{}]", parts.join(", "))
}
