//! Workload affinity and anti-affinity (gate `WorkloadAffinity`, Karmada's `WorkloadAffinity` and
//! `WorkloadAntiAffinity` filter plugins): a ResourceBinding's `spec.workloadAffinityGroups`, which the detector
//! derives from `placement.workloadAffinity` and the template's labels, ties it to the other ResourceBindings of
//! its namespace in the same group.
//!
//! Affinity: a cluster passes only if every other binding of the affinity group that has a result targets it;
//! a group whose bindings have no result yet does not block, so the first workload of a group schedules freely.
//! Anti-affinity: a cluster fails if any other binding of the anti-affinity group targets it. Clusters already
//! in the binding's own result always pass, so these rules never take a workload off a member.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use flotilla_api::work::v1alpha2::ResourceBinding;

/// WorkloadAffinity's reason, as Karmada words it.
pub const REASON_AFFINITY_GROUP: &str =
    "ResourceBinding with the same affinity group does not target this cluster";
/// WorkloadAntiAffinity's reason, as Karmada words it.
pub const REASON_ANTI_AFFINITY_GROUP: &str =
    "cluster already has workload with the same anti-affinity group";

/// What the other bindings of a binding's groups allow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadRules {
    /// Affinity: the clusters every scheduled binding of the group targets; `None` when nothing constrains.
    pub together: Option<BTreeSet<String>>,
    /// Anti-affinity: the clusters some binding of the group targets.
    pub apart: BTreeSet<String>,
}

impl WorkloadRules {
    /// The rules for `binding` given the ResourceBindings in the cache (`peers`, the binding itself may be
    /// among them), each seen through `current` (the scheduler's own newer result, if any).
    pub fn of<'a>(
        binding: &ResourceBinding,
        peers: impl IntoIterator<Item = &'a ResourceBinding>,
        current: impl Fn(&ResourceBinding) -> Vec<String>,
    ) -> Self {
        let mut rules = WorkloadRules::default();
        let Some(groups) = binding.spec.workload_affinity_groups.as_ref() else {
            return rules;
        };
        let namespace = binding.metadata.namespace.as_deref().unwrap_or_default();
        let name = binding.metadata.name.as_deref().unwrap_or_default();
        for peer in peers {
            let Some(peer_groups) = peer.spec.workload_affinity_groups.as_ref() else {
                continue;
            };
            if peer.metadata.namespace.as_deref().unwrap_or_default() != namespace
                || peer.metadata.name.as_deref().unwrap_or_default() == name
            {
                continue;
            }
            let targets = current(peer);
            if !groups.affinity_group.is_empty()
                && peer_groups.affinity_group == groups.affinity_group
                && !targets.is_empty()
            {
                let theirs: BTreeSet<String> = targets.iter().cloned().collect();
                rules.together = Some(match rules.together.take() {
                    Some(ours) => ours.intersection(&theirs).cloned().collect(),
                    None => theirs,
                });
            }
            if !groups.anti_affinity_group.is_empty()
                && peer_groups.anti_affinity_group == groups.anti_affinity_group
            {
                rules.apart.extend(targets);
            }
        }
        rules
    }

    /// Whether `cluster` may be chosen (`targeted`: already in the binding's result).
    ///
    /// # Errors
    /// The failing plugin's reason (anti-affinity first, Karmada's registration order).
    pub fn check(&self, cluster: &str, targeted: bool) -> Result<(), String> {
        if targeted {
            return Ok(());
        }
        if self.apart.contains(cluster) {
            return Err(REASON_ANTI_AFFINITY_GROUP.to_owned());
        }
        if self.together.as_ref().is_some_and(|t| !t.contains(cluster)) {
            return Err(REASON_AFFINITY_GROUP.to_owned());
        }
        Ok(())
    }
}

/// The results the scheduler wrote that its cache may not show yet (Karmada's assigning bindings), by
/// `namespace/name`, with the resourceVersion the write produced.
#[derive(Debug, Default)]
pub struct Assigning {
    written: Mutex<HashMap<String, (u64, Vec<String>)>>,
}

fn version(binding: &ResourceBinding) -> u64 {
    binding
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn key(binding: &ResourceBinding) -> String {
    format!(
        "{}/{}",
        binding.metadata.namespace.as_deref().unwrap_or_default(),
        binding.metadata.name.as_deref().unwrap_or_default()
    )
}

impl Assigning {
    /// Remembers that a write of ResourceBinding `namespace/name` producing `resource_version` set its
    /// result to `clusters`.
    pub fn record(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
        clusters: Vec<String>,
    ) {
        let version = resource_version.and_then(|v| v.parse().ok()).unwrap_or(0);
        self.lock()
            .insert(format!("{namespace}/{name}"), (version, clusters));
    }

    /// The clusters `cached` targets, or the newer result written for it. A cache entry as new as the write
    /// makes the record unnecessary, so it is dropped.
    pub fn targets(&self, cached: &ResourceBinding) -> Vec<String> {
        let mut written = self.lock();
        let key = key(cached);
        match written.get(&key) {
            Some((v, clusters)) if *v > version(cached) => clusters.clone(),
            Some(_) => {
                written.remove(&key);
                cached
                    .spec
                    .clusters
                    .iter()
                    .map(|t| t.name.clone())
                    .collect()
            }
            None => cached
                .spec
                .clusters
                .iter()
                .map(|t| t.name.clone())
                .collect(),
        }
    }

    /// Forgets a deleted binding.
    pub fn forget(&self, namespace: &str, name: &str) {
        self.lock().remove(&format!("{namespace}/{name}"));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Vec<String>)>> {
        self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
