//! Available-replica estimation with Karmada's general estimator: how many more
//! replicas of a workload each cluster can hold, from `status.resourceSummary` and, when present, the
//! cluster's resource models.

use flotilla_api::cluster::v1alpha1::{Cluster, ResourceList, ResourceSummary};
use flotilla_api::work::v1alpha2::{ReplicaRequirements, ResourceBindingSpec};
use flotilla_apimachinery::quantity::Quantity;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

/// The pod capacity each virtual node of a resource model gets.
const MODEL_PODS_PER_NODE: i64 = 110;

const CPU: &str = "cpu";
const MEMORY: &str = "memory";
const PODS: &str = "pods";
const EPHEMERAL_STORAGE: &str = "ephemeral-storage";

/// A wire quantity as an exact value; unparseable quantities count as zero, as a Kubernetes API server
/// never stores them.
pub(super) fn parse(q: &WireQuantity) -> Quantity {
    Quantity::from_k8s(q).unwrap_or(Quantity::ZERO)
}

/// `Value()` of `list[name]` (0 when absent).
fn value_of(list: &ResourceList, name: &str) -> i64 {
    list.get(name).map_or(0, |q| parse(q).value())
}

/// Milli-units of `list[name]` (0 when absent).
fn milli_of(list: &ResourceList, name: &str) -> i64 {
    list.get(name).map_or(0, |q| parse(q).milli_value())
}

/// Pods the summary still admits: allocatable − allocated − allocating, at least 0.
pub(super) fn allowed_pods(summary: &ResourceSummary) -> i64 {
    let pods = value_of(&summary.allocatable, PODS)
        - value_of(&summary.allocated, PODS)
        - value_of(&summary.allocating, PODS);
    pods.max(0)
}

/// Whether Kubernetes counts a resource name as a scalar resource (extended, hugepages, attachable
/// volumes), which node-level arithmetic tracks besides cpu, memory and ephemeral storage.
fn is_scalar_resource(name: &str) -> bool {
    name.starts_with("hugepages-")
        || name.starts_with("attachable-volumes-")
        || (name.contains('/') && !name.starts_with("requests."))
}

/// Karmada's general estimator for one cluster: the most replicas with `requirements` it can still hold.
///
/// Guarantees: 0 without a resource summary; never more than the admitted pod count; without requirements,
/// the admitted pod count; with resource models and node counts, the model-based estimate; otherwise the
/// minimum over requested resources of free / request (CPU in millicores), 0 when a requested resource is
/// not offered at all.
pub fn general_estimate(cluster: &Cluster, requirements: Option<&ReplicaRequirements>) -> i32 {
    let Some(summary) = cluster
        .status
        .as_ref()
        .and_then(|s| s.resource_summary.as_ref())
    else {
        return 0;
    };
    let mut maximum = allowed_pods(summary);
    if maximum <= 0 {
        return 0;
    }
    let Some(requirements) = requirements else {
        return clamp(maximum);
    };
    if !summary.allocatable_modelings.is_empty()
        && let Some(by_models) = estimate_by_models(cluster, summary, requirements)
    {
        return clamp(maximum.min(by_models));
    }
    maximum = maximum.min(estimate_by_summary(summary, requirements));
    clamp(maximum)
}

pub(super) fn clamp(n: i64) -> i32 {
    i32::try_from(n.max(0)).unwrap_or(i32::MAX)
}

fn estimate_by_summary(summary: &ResourceSummary, requirements: &ReplicaRequirements) -> i64 {
    let mut maximum = i64::MAX;
    for (name, request) in &requirements.resource_request {
        let request = parse(request);
        if request.value() <= 0 {
            continue;
        }
        if !summary.allocatable.contains_key(name) {
            return 0;
        }
        let free_milli = milli_of(&summary.allocatable, name)
            - milli_of(&summary.allocated, name)
            - milli_of(&summary.allocating, name);
        // Go subtracts exact quantities and rounds the difference up to whole units; milli-units are exact
        // for every quantity a Kubernetes API server reports.
        let free = div_ceil(free_milli, 1000);
        if free <= 0 {
            return 0;
        }
        let per_resource = if name == CPU {
            free_milli / request.milli_value()
        } else {
            free / request.value()
        };
        maximum = maximum.min(per_resource);
    }
    maximum
}

fn div_ceil(n: i64, d: i64) -> i64 {
    if n > 0 { (n + d - 1) / d } else { n / d }
}

/// A virtual node of a resource model: its capacity per resource (cpu in millicores, others in units).
#[derive(Clone, Debug, Default)]
pub(super) struct ModelNode {
    milli_cpu: i64,
    memory: i64,
    ephemeral_storage: i64,
    scalars: Vec<(String, i64)>,
    pods: i64,
}

impl ModelNode {
    /// How many replicas needing `request` fit (Karmada's `Resource.MaxDivided` with one pod per replica).
    pub(super) fn max_divided(&self, request: &ResourceList) -> i64 {
        let mut n = i64::MAX;
        for (name, quantity) in request {
            let q = parse(quantity);
            let (have, need) = match name.as_str() {
                CPU => (self.milli_cpu, q.milli_value()),
                MEMORY => (self.memory, q.value()),
                EPHEMERAL_STORAGE => (self.ephemeral_storage, q.value()),
                other if is_scalar_resource(other) => {
                    let have = self
                        .scalars
                        .iter()
                        .find(|(k, _)| k == other)
                        .map_or(0, |(_, v)| *v);
                    (have, q.value())
                }
                _ => continue,
            };
            if need > 0 {
                n = n.min(have / need);
            }
        }
        n.min(self.pods)
    }

    /// Takes `n` replicas needing `request` (one pod each) off the node's capacity.
    pub(super) fn take(&mut self, request: &ResourceList, n: i64) {
        for (name, quantity) in request {
            let q = parse(quantity);
            match name.as_str() {
                CPU => self.milli_cpu -= q.milli_value().saturating_mul(n),
                MEMORY => self.memory -= q.value().saturating_mul(n),
                EPHEMERAL_STORAGE => self.ephemeral_storage -= q.value().saturating_mul(n),
                other if is_scalar_resource(other) => {
                    if let Some((_, have)) = self.scalars.iter_mut().find(|(k, _)| k == other) {
                        *have -= q.value().saturating_mul(n);
                    }
                }
                _ => {}
            }
        }
        self.pods -= n;
    }
}

/// The model-based estimate: one virtual node per counted node of each grade with the grade's minimum
/// resources, filled replica by replica. First-fit of identical replicas fills each node independently, so
/// the total is the sum over nodes. `None` when the cluster defines no models (Karmada then falls back to
/// the summary).
fn estimate_by_models(
    cluster: &Cluster,
    summary: &ResourceSummary,
    requirements: &ReplicaRequirements,
) -> Option<i64> {
    let mut total: i64 = 0;
    for (node, count) in model_grades(cluster, summary)? {
        let per_node = node.max_divided(&requirements.resource_request);
        total = total.saturating_add(per_node.saturating_mul(count));
        if total >= i64::from(i32::MAX) {
            return Some(i64::from(i32::MAX));
        }
    }
    Some(total)
}

/// The virtual nodes of a cluster's resource models, grade by grade (ascending), each with how many nodes
/// of the grade the summary counts; grades counting none are left out. `None` without models or with a
/// negative count.
pub(super) fn model_grades(
    cluster: &Cluster,
    summary: &ResourceSummary,
) -> Option<Vec<(ModelNode, i64)>> {
    let models = &cluster.spec.resource_models;
    if models.is_empty() || summary.allocatable_modelings.iter().any(|m| m.count < 0) {
        return None;
    }
    // A later model of the same grade replaces an earlier one, as Karmada's map by grade does.
    let by_grade: std::collections::BTreeMap<u32, &flotilla_api::cluster::v1alpha1::ResourceModel> =
        models.iter().map(|m| (m.grade, m)).collect();
    let mut grades = Vec::new();
    for (grade, model) in by_grade {
        let count: i64 = summary
            .allocatable_modelings
            .iter()
            .filter(|m| m.grade == grade)
            .map(|m| m.count)
            .sum();
        if count == 0 {
            continue;
        }
        // Each range contributes its minimum; the pod capacity is fixed whatever the ranges say.
        let mut node = ModelNode {
            pods: MODEL_PODS_PER_NODE,
            ..Default::default()
        };
        for range in &model.ranges {
            let min = parse(&range.min);
            match range.name.as_str() {
                CPU => node.milli_cpu = min.milli_value(),
                MEMORY => node.memory = min.value(),
                EPHEMERAL_STORAGE => node.ephemeral_storage = min.value(),
                other if is_scalar_resource(other) => {
                    node.scalars.retain(|(k, _)| k != other);
                    node.scalars.push((other.to_owned(), min.value()));
                }
                _ => {}
            }
        }
        grades.push((node, count));
    }
    Some(grades)
}

/// Allocatable replicas per cluster for a binding, in the order given (Karmada's `calAvailableReplicas`
/// with the general estimator as the only estimator).
///
/// Guarantees: non-workloads (`replicas == 0` and no components) get `i32::MAX` everywhere; workloads get
/// the general estimate.
pub fn allocatable_replicas(clusters: &[&Cluster], spec: &ResourceBindingSpec) -> Vec<i32> {
    if spec.replicas == 0 && spec.components.is_empty() {
        return vec![i32::MAX; clusters.len()];
    }
    clusters
        .iter()
        .map(|c| general_estimate(c, spec.replica_requirements.as_ref()))
        .collect()
}
