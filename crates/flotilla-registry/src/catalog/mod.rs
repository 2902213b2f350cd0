//! The resource catalogue: every resource the server serves, built-in (the table of `crate::write::hooks`) and custom
//! (the resources each established CRD contributes, `crate::write::hooks::platform::crd`).
//!
//! Invariant: a resource is in the catalogue exactly when its REST paths and discovery answer, so a CRD is
//! marked Established only after [`Catalog::set_crd`] has returned.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use flotilla_store::ResKey;

use crate::kinds::{BUILTINS, Builtin};
use crate::resource::{ResourceInfo, ScalePaths};

#[derive(Default)]
struct Inner {
    /// (group, version, plural) → resource. Built-ins and CRDs.
    resources: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
    /// Order of groups for discovery: built-ins first, then CRD groups in order of appearance.
    group_order: Vec<String>,
    /// Resources contributed by each CRD (by CRD name), to remove them on deletion.
    by_crd: BTreeMap<String, Vec<(String, String, String)>>,
}

/// The live catalogue, shared by routing, discovery and the internal controllers.
#[derive(Default)]
pub struct Catalog {
    inner: RwLock<Inner>,
}

impl Catalog {
    /// A catalogue holding the built-in resources.
    pub fn with_builtins() -> Self {
        let mut inner = Inner::default();
        for entry in BUILTINS.iter() {
            let info = builtin(entry);
            if !inner.group_order.contains(&info.group) {
                inner.group_order.push(info.group.clone());
            }
            inner.resources.insert(
                (
                    info.group.clone(),
                    info.version.clone(),
                    info.plural.clone(),
                ),
                Arc::new(info),
            );
        }
        Self {
            inner: RwLock::new(inner),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Looks up a served resource by group, version and plural.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.read()
            .resources
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Any served version of a stored resource (the storage version first).
    pub fn by_key(&self, key: &ResKey) -> Option<Arc<ResourceInfo>> {
        let inner = self.read();
        let mut found = None;
        for ((g, _, p), info) in inner.resources.iter() {
            if *g == key.group && *p == key.plural {
                if info.version == info.storage_version {
                    return Some(info.clone());
                }
                found.get_or_insert_with(|| info.clone());
            }
        }
        found
    }

    /// Finds a resource by group and kind (for owner references), any served version.
    pub fn by_group_kind(&self, group: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        let inner = self.read();
        inner
            .resources
            .values()
            .find(|i| i.group == group && i.kind == kind)
            .cloned()
    }

    /// Every served resource.
    pub fn all(&self) -> Vec<Arc<ResourceInfo>> {
        self.read().resources.values().cloned().collect()
    }

    /// Groups in discovery order, each with its versions sorted by Kubernetes version priority.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let inner = self.read();
        let mut out = Vec::new();
        for g in &inner.group_order {
            let mut versions: Vec<String> = Vec::new();
            for (rg, v, _) in inner.resources.keys() {
                if rg == g && !versions.contains(v) {
                    versions.push(v.clone());
                }
            }
            if versions.is_empty() {
                continue;
            }
            versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
            out.push((g.clone(), versions));
        }
        out
    }

    /// Resources served in one group-version, sorted by plural.
    pub fn resources_in(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.read()
            .resources
            .values()
            .filter(|i| i.group == group && i.version == version)
            .cloned()
            .collect()
    }

    /// Replaces the resources a CRD contributes (all its served versions).
    pub fn set_crd(&self, crd_name: &str, infos: Vec<ResourceInfo>) {
        let mut inner = self.write();
        if let Some(old) = inner.by_crd.remove(crd_name) {
            for k in old {
                inner.resources.remove(&k);
            }
        }
        let mut keys = Vec::new();
        for info in infos {
            if !inner.group_order.contains(&info.group) {
                inner.group_order.push(info.group.clone());
            }
            let k = (
                info.group.clone(),
                info.version.clone(),
                info.plural.clone(),
            );
            keys.push(k.clone());
            inner.resources.insert(k, Arc::new(info));
        }
        inner.by_crd.insert(crd_name.to_string(), keys);
    }

    /// Removes everything a CRD contributed.
    pub fn remove_crd(&self, crd_name: &str) {
        let mut inner = self.write();
        if let Some(old) = inner.by_crd.remove(crd_name) {
            for k in old {
                inner.resources.remove(&k);
            }
        }
    }

    /// Whether a CRD's resources are currently served.
    pub fn serves_crd(&self, crd_name: &str) -> bool {
        self.read().by_crd.contains_key(crd_name)
    }
}

/// The catalogue entry of a built-in (`crate::write::hooks`).
fn builtin(entry: &Builtin) -> ResourceInfo {
    let spec = &entry.resource;
    ResourceInfo {
        group: spec.group.into(),
        version: spec.version.into(),
        storage_version: spec.stored_as.unwrap_or(spec.version).into(),
        kind: spec.kind.into(),
        list_kind: format!("{}List", spec.kind),
        plural: spec.plural.into(),
        singular: spec.kind.to_lowercase(),
        namespaced: spec.namespaced,
        short_names: spec.short.iter().map(|s| s.to_string()).collect(),
        categories: if spec.all { vec!["all".into()] } else { vec![] },
        status: spec.status,
        scale: spec.scale.then(|| ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".spec.selector".into()),
        }),
        generation: spec.generation,
        custom: false,
        crd: None,
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first; other strings last.
pub fn version_priority(v: &str) -> (u8, u64, u64) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(major) = digits.parse::<u64>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    let (level, num) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        return (0, 0, 0);
    };
    match num.parse::<u64>() {
        Ok(n) => (level, major, n),
        Err(_) => (0, 0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_have_core_and_apps() {
        let c = Catalog::with_builtins();
        let d = c.get("apps", "v1", "deployments").expect("deployments");
        assert!(d.namespaced && d.status && d.scale.is_some() && d.generation);
        assert_eq!(d.short_names, vec!["deploy"]);
        assert!(c.get("", "v1", "namespaces").is_some_and(|n| !n.namespaced));
        assert_eq!(c.groups()[0].0, "");
    }

    #[test]
    fn version_priority_orders_ga_beta_alpha() {
        let mut v = vec!["v1alpha1", "v2", "v1beta2", "v1", "v1beta1", "foo"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(v, vec!["v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]);
    }

    #[test]
    fn crd_resources_come_and_go() {
        let c = Catalog::with_builtins();
        let mut info = builtin(&BUILTINS[1]);
        info.group = "example.io".into();
        info.plural = "foos".into();
        c.set_crd("foos.example.io", vec![info]);
        assert!(c.get("example.io", "v1", "foos").is_some());
        assert!(c.groups().iter().any(|(g, _)| g == "example.io"));
        c.remove_crd("foos.example.io");
        assert!(c.get("example.io", "v1", "foos").is_none());
        assert!(!c.groups().iter().any(|(g, _)| g == "example.io"));
    }
}
