//! Pure steps of the cluster controller: NoSchedule taints from the Ready condition (`not-ready` while it is
//! absent or False, `unreachable` while Unknown, none while True), which stop new placements and never evict;
//! and the normalisations Karmada's API server makes to every Cluster it stores (`timeAdded` of NoExecute
//! taints, resource models).

use flotilla_api::cluster::v1alpha1::{Cluster, ResourceModel, ResourceModelRange};
use flotilla_api::names::{conditions, taints};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

const NO_SCHEDULE: &str = "NoSchedule";
const NO_EXECUTE: &str = "NoExecute";

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
pub(crate) fn ready_status(cluster: &Cluster) -> Option<&str> {
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
pub(crate) fn desired_taints(
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

/// Gives every NoExecute taint without `timeAdded` the time `now`; returns whether any had none.
///
/// Karmada's API server stamps such a taint on every write of a Cluster, and the taint manager counts a
/// toleration's `tolerationSeconds` from it: a taint without one never runs out. Our Clusters are stored by a
/// CRD, whose server stamps nothing (and a patch may reach it past the aggregated API server), so the
/// controller stamps the taint as soon as it sees it; the eviction then follows `tolerationSeconds` later.
pub(crate) fn stamp_no_execute_taints(taints: &mut [Taint], now: Timestamp) -> bool {
    let mut stamped = false;
    for taint in taints
        .iter_mut()
        .filter(|t| t.effect == NO_EXECUTE && t.time_added.is_none())
    {
        taint.time_added = Some(Time(now));
        stamped = true;
    }
    stamped
}

/// `key:effect` of each taint, for event messages.
pub(crate) fn describe_taints(list: &[Taint]) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// The largest quantity Karmada writes as an open upper bound (`math.MaxInt64`).
const MAX_QUANTITY: &str = "9223372036854775807";

fn range(name: &str, min: &str, max: &str) -> ResourceModelRange {
    ResourceModelRange {
        name: name.to_owned(),
        min: Quantity(min.to_owned()),
        max: Quantity(max.to_owned()),
    }
}

/// The nine default resource models Karmada gives a Cluster created without any:
/// grade 0 cpu [0,1) memory [0,4Gi); grade 1 cpu [1,2) memory [4Gi,16Gi); grades 2..7 cpu [2^(g-1),2^g)
/// memory [2^(g+2)Gi,2^(g+3)Gi); grade 8 cpu ≥128 memory ≥1Ti. Quantities are written in their canonical form,
/// as Karmada's server stores them (`1024Gi` is `1Ti`).
pub(crate) fn default_resource_models() -> Vec<ResourceModel> {
    let mut models = vec![
        ResourceModel {
            grade: 0,
            ranges: vec![range("cpu", "0", "1"), range("memory", "0", "4Gi")],
        },
        ResourceModel {
            grade: 1,
            ranges: vec![range("cpu", "1", "2"), range("memory", "4Gi", "16Gi")],
        },
    ];
    for grade in 2..=7u32 {
        let (cpu_min, cpu_max) = (1u64 << (grade - 1), 1u64 << grade);
        let (mem_min, mem_max) = (1u64 << (grade + 2), 1u64 << (grade + 3));
        models.push(ResourceModel {
            grade,
            ranges: vec![
                range("cpu", &cpu_min.to_string(), &cpu_max.to_string()),
                range("memory", &gibibytes(mem_min), &gibibytes(mem_max)),
            ],
        });
    }
    models.push(ResourceModel {
        grade: 8,
        ranges: vec![
            range("cpu", "128", MAX_QUANTITY),
            range("memory", &gibibytes(1024), MAX_QUANTITY),
        ],
    });
    models
}

/// `n` GiB in the canonical form of a Kubernetes quantity: the largest binary suffix that divides it.
fn gibibytes(n: u64) -> String {
    if n.is_multiple_of(1024) {
        format!("{}Ti", n / 1024)
    } else {
        format!("{n}Gi")
    }
}

/// Karmada's API normalisation of given models: sorted by grade, the first grade's minimums 0 and the last
/// grade's maximums the open bound. Returns whether anything changed.
pub(crate) fn normalise_resource_models(models: &mut [ResourceModel]) -> bool {
    if models.is_empty() {
        return false;
    }
    let before = models.to_vec();
    models.sort_by_key(|m| m.grade);
    if let Some(first) = models.first_mut() {
        for r in &mut first.ranges {
            r.min = Quantity("0".to_owned());
        }
    }
    if let Some(last) = models.last_mut() {
        for r in &mut last.ranges {
            r.max = Quantity(MAX_QUANTITY.to_owned());
        }
    }
    models != before.as_slice()
}
