//! Pure steps of the cluster status controller: the Ready condition from a health
//! probe with Karmada's flip thresholds, API enablements, and node and resource summaries.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{
    APIEnablement, APIResource, AllocatableModeling, NodeSummary, ResourceList, ResourceModel,
    ResourceSummary,
};
use flotilla_api::names::conditions as names;
use flotilla_apimachinery::quantity::Quantity;
use flotilla_core::conditions::new_condition;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use tokio::time::Instant;

use crate::discovery::Discovered;

/// What the health probe saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// No HTTP answer.
    Offline,
    /// An answer other than 200.
    Unhealthy,
    /// 200 from `/readyz` (or `/healthz`).
    Healthy,
}

/// The Ready condition a probe result stands for.
pub(crate) fn ready_condition(probe: Probe) -> Condition {
    match probe {
        Probe::Offline => new_condition(
            names::CLUSTER_READY,
            "False",
            names::REASON_CLUSTER_NOT_REACHABLE,
            names::MESSAGE_CLUSTER_NOT_REACHABLE,
        ),
        Probe::Unhealthy => new_condition(
            names::CLUSTER_READY,
            "False",
            names::REASON_CLUSTER_NOT_READY,
            names::MESSAGE_CLUSTER_NOT_READY,
        ),
        Probe::Healthy => new_condition(
            names::CLUSTER_READY,
            "True",
            names::REASON_CLUSTER_READY,
            names::MESSAGE_CLUSTER_READY,
        ),
    }
}

/// Remembers, per cluster, the last observed Ready status and since when, to hold a flip back until it has
/// been stable for the success or failure threshold (Karmada's `thresholdAdjustedReadyCondition`).
#[derive(Default)]
pub(crate) struct Thresholds {
    entries: Mutex<HashMap<String, (String, Instant)>>,
}

impl Thresholds {
    /// The Ready condition to store: `observed`, unless it flips the stored condition between True and not
    /// True before the observation has been stable for the threshold (then the stored one).
    pub(crate) fn adjust(
        &self,
        cluster: &str,
        observed: Condition,
        stored: Option<&Condition>,
        now: Instant,
        success: Duration,
        failure: Duration,
    ) -> Condition {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(saved) = entries.get_mut(cluster) else {
            entries.insert(cluster.to_owned(), (observed.status.clone(), now));
            return observed;
        };
        let Some(stored) = stored else {
            return observed;
        };
        if saved.0 != observed.status {
            *saved = (observed.status.clone(), now);
        }
        let observed_true = observed.status == "True";
        let threshold = if observed_true { success } else { failure };
        let flips = observed_true != (stored.status == "True");
        if flips && now < saved.1 + threshold {
            stored.clone()
        } else {
            observed
        }
    }

    /// Forgets a cluster.
    pub(crate) fn forget(&self, cluster: &str) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(cluster);
    }
}

/// The member's API enablements, sorted by group version then resource name, without sub-resources.
pub(crate) fn api_enablements(discovered: &Discovered) -> Vec<APIEnablement> {
    let mut by_gv: BTreeMap<String, Vec<APIResource>> = BTreeMap::new();
    for served in &discovered.resources {
        by_gv
            .entry(served.resource.api_version.clone())
            .or_default()
            .push(APIResource {
                name: served.resource.plural.clone(),
                kind: served.resource.kind.clone(),
            });
    }
    by_gv
        .into_iter()
        .map(|(group_version, mut resources)| {
            resources.sort_by(|a, b| a.name.cmp(&b.name));
            resources.dedup();
            APIEnablement {
                group_version,
                resources,
            }
        })
        .collect()
}

/// The `CompleteAPIEnablements` condition for what discovery returned.
pub(crate) fn api_enablements_condition(enablements: &[APIEnablement], partial: bool) -> Condition {
    let kind = names::CLUSTER_COMPLETE_API_ENABLEMENTS;
    if enablements.is_empty() {
        new_condition(
            kind,
            "False",
            names::REASON_API_ENABLEMENTS_EMPTY,
            names::MESSAGE_API_ENABLEMENTS_EMPTY,
        )
    } else if partial {
        new_condition(
            kind,
            "False",
            names::REASON_API_ENABLEMENTS_PARTIAL,
            &format!(
                "might collect partial APIEnablements({}) from the cluster",
                enablements.len()
            ),
        )
    } else {
        new_condition(
            kind,
            "True",
            names::REASON_API_ENABLEMENTS_COMPLETE,
            names::MESSAGE_API_ENABLEMENTS_COMPLETE,
        )
    }
}

fn node_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Total and ready node counts.
pub(crate) fn node_summary(nodes: &[Node]) -> NodeSummary {
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    NodeSummary {
        total_num: count(nodes.len()),
        ready_num: count(nodes.iter().filter(|n| node_ready(n)).count()),
    }
}

type Amounts = BTreeMap<String, Quantity>;

fn add_list(
    into: &mut Amounts,
    list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) {
    for (name, quantity) in list.into_iter().flatten() {
        if let Ok(q) = Quantity::from_k8s(quantity) {
            let entry = into.entry(name.clone()).or_insert(Quantity::ZERO);
            *entry = entry.add(q);
        }
    }
}

/// What one pod requests: the sum over containers, element-wise at least each init container's requests,
/// plus the pod overhead (requests only; limits are not used here).
pub(crate) fn pod_requests(pod: &Pod) -> Amounts {
    let mut total = Amounts::new();
    let Some(spec) = &pod.spec else { return total };
    for container in &spec.containers {
        add_list(
            &mut total,
            container
                .resources
                .as_ref()
                .and_then(|r| r.requests.as_ref()),
        );
    }
    for init in spec.init_containers.iter().flatten() {
        let mut one = Amounts::new();
        add_list(
            &mut one,
            init.resources.as_ref().and_then(|r| r.requests.as_ref()),
        );
        for (name, q) in one {
            let entry = total.entry(name).or_insert(Quantity::ZERO);
            if q > *entry {
                *entry = q;
            }
        }
    }
    add_list(&mut total, spec.overhead.as_ref());
    total
}

fn to_list(amounts: Amounts) -> ResourceList {
    amounts.into_iter().map(|(k, v)| (k, v.to_k8s())).collect()
}

fn finished(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn add_pods(into: &mut Amounts, count: usize) {
    let entry = into.entry("pods".to_owned()).or_insert(Quantity::ZERO);
    *entry = entry.add(Quantity::parse(&count.to_string()).unwrap_or(Quantity::ZERO));
}

/// `allocatable` (Σ node allocatable), `allocating` (requests of pods not yet on a node, plus their count as
/// `pods`), `allocated` (requests of running pods on nodes, plus their count), and, when the cluster has
/// resource models, the node count per model grade.
pub(crate) fn resource_summary(
    nodes: &[Node],
    pods: &[Pod],
    models: &[ResourceModel],
) -> ResourceSummary {
    let mut allocatable = Amounts::new();
    for node in nodes {
        add_list(
            &mut allocatable,
            node.status.as_ref().and_then(|s| s.allocatable.as_ref()),
        );
    }
    let (mut allocating, mut allocated) = (Amounts::new(), Amounts::new());
    let (mut allocating_pods, mut allocated_pods) = (0, 0);
    let mut per_node: HashMap<&str, Amounts> = HashMap::new();
    for pod in pods {
        let node_name = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty());
        let requests = pod_requests(pod);
        match node_name {
            None => {
                merge(&mut allocating, &requests);
                allocating_pods += 1;
            }
            Some(node) if !finished(pod) => {
                merge(&mut allocated, &requests);
                allocated_pods += 1;
                let used = per_node.entry(node).or_default();
                merge(used, &requests);
                add_pods(used, 1);
            }
            Some(_) => {}
        }
    }
    add_pods(&mut allocating, allocating_pods);
    add_pods(&mut allocated, allocated_pods);
    ResourceSummary {
        allocatable: to_list(allocatable),
        allocating: to_list(allocating),
        allocated: to_list(allocated),
        allocatable_modelings: modelings(nodes, &per_node, models),
    }
}

fn merge(into: &mut Amounts, from: &Amounts) {
    for (name, q) in from {
        let entry = into.entry(name.clone()).or_insert(Quantity::ZERO);
        *entry = entry.add(*q);
    }
}

/// Nodes per grade: a node counts in the highest grade whose minimum it meets for every modelled resource,
/// judged on its free resources (allocatable minus the requests of its pods); nodes without a free pod slot
/// are not counted.
fn modelings(
    nodes: &[Node],
    used: &HashMap<&str, Amounts>,
    models: &[ResourceModel],
) -> Vec<AllocatableModeling> {
    if models.is_empty() {
        return Vec::new();
    }
    let mut sorted: Vec<&ResourceModel> = models.iter().collect();
    sorted.sort_by_key(|m| m.grade);
    let mut counts: BTreeMap<u32, i64> = sorted.iter().map(|m| (m.grade, 0)).collect();
    let empty = Amounts::new();
    for node in nodes {
        let mut free = Amounts::new();
        add_list(
            &mut free,
            node.status.as_ref().and_then(|s| s.allocatable.as_ref()),
        );
        let node_used = node
            .metadata
            .name
            .as_deref()
            .and_then(|n| used.get(n))
            .unwrap_or(&empty);
        let free_of = |name: &str| {
            let total = free.get(name).copied().unwrap_or(Quantity::ZERO);
            let taken = node_used.get(name).map(|q| q.milli_value()).unwrap_or(0);
            total.milli_value() - taken
        };
        if free.contains_key("pods") && free_of("pods") <= 0 {
            continue;
        }
        let grade = sorted.iter().rev().find(|model| {
            model.ranges.iter().all(|range| {
                Quantity::from_k8s(&range.min)
                    .is_ok_and(|min| free_of(&range.name) >= min.milli_value())
            })
        });
        if let Some(model) = grade
            && let Some(count) = counts.get_mut(&model.grade)
        {
            *count += 1;
        }
    }
    counts
        .into_iter()
        .map(|(grade, count)| AllocatableModeling { grade, count })
        .collect()
}
