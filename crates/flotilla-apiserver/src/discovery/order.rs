//! The order of groups and versions in discovery, as kube-apiserver's aggregator gives it: every group-version
//! is an APIService with a group priority and a version priority (the built-ins' from kube-apiserver's table,
//! `1000`/`100` for a CRD's, a stored APIService's own), and `apiregistration.k8s.io` always comes first.
//!
//! Legacy discovery (`/apis`, `/apis/<group>`) sorts APIServices by group priority (highest first), then name,
//! and lists each group where its first APIService falls, versions by version priority then by version
//! (kube-aware: GA before beta before alpha, higher numbers first); the first version is the preferred one.
//! Aggregated discovery sorts groups by their highest group priority, then group name, versions the same way.

use std::cmp::Ordering;

/// The group kube-aggregator serves itself, listed first.
pub(crate) const APIREGISTRATION: &str = "apiregistration.k8s.io";
/// Its priority in aggregated discovery (above the 20000 any APIService may have).
pub(crate) const APIREGISTRATION_PRIORITY: i64 = 20001;
/// The priorities kube-apiserver registers a CRD's group-versions with.
pub(crate) const CRD_PRIORITY: (i64, i64) = (1000, 100);

/// kube-apiserver 1.37's group and version priorities of its built-in group-versions
/// (`cmd/kube-apiserver/app/aggregator.go` and `DefaultGenericAPIServicePriorities`).
const BUILTIN: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("events.k8s.io", "v1beta1", 17750, 5),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authentication.k8s.io", "v1beta1", 17700, 9),
    ("authentication.k8s.io", "v1alpha1", 17700, 1),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v2beta1", 17500, 9),
    ("autoscaling", "v2beta2", 17500, 1),
    ("batch", "v1", 17400, 15),
    ("batch", "v1beta1", 17400, 9),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("certificates.k8s.io", "v1beta1", 17300, 9),
    ("certificates.k8s.io", "v1alpha1", 17300, 1),
    ("networking.k8s.io", "v1", 17200, 15),
    ("networking.k8s.io", "v1beta1", 17200, 9),
    ("policy", "v1", 17100, 15),
    ("policy", "v1beta1", 17100, 9),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("storage.k8s.io", "v1beta1", 16800, 9),
    ("storage.k8s.io", "v1alpha1", 16800, 1),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1beta1", 16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1", 16700, 9),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("scheduling.k8s.io", "v1beta1", 16600, 9),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("coordination.k8s.io", "v1beta1", 16500, 13),
    ("node.k8s.io", "v1", 16300, 15),
    ("node.k8s.io", "v1beta1", 16300, 9),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("resource.k8s.io", "v1", 16200, 21),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("storagemigration.k8s.io", "v1", 15800, 15),
];

/// The priorities kube-apiserver gives a built-in group-version, if it lists it.
pub(crate) fn builtin_priority(group: &str, version: &str) -> Option<(i64, i64)> {
    BUILTIN
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|(_, _, gp, vp)| (*gp, *vp))
}

/// One group-version with its priorities, as an APIService names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The APIService name (`<version>.<group>`).
    pub name: String,
    /// Group.
    pub group: String,
    /// Version.
    pub version: String,
    /// `groupPriorityMinimum`.
    pub group_priority: i64,
    /// `versionPriority`.
    pub version_priority: i64,
}

impl Entry {
    /// An entry named as kube names the APIService of `group`/`version`.
    pub(crate) fn new(group: &str, version: &str, priorities: (i64, i64)) -> Self {
        Self {
            name: format!("{version}.{group}"),
            group: group.into(),
            version: version.into(),
            group_priority: priorities.0,
            version_priority: priorities.1,
        }
    }
}

/// `(major, type, minor)` of a Kubernetes version (`v<major>[alpha|beta<minor>]`), type 0 alpha, 1 beta, 2 GA.
fn parse_kube_version(v: &str) -> Option<(u64, u8, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let major = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    let (kind, minor) = if tail.is_empty() {
        return Some((major, 2, 0));
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (0, n)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (1, n)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, kind, minor.parse().ok()?))
}

/// apimachinery's `CompareKubeAwareVersionStrings`: `Greater` when `a` sorts before `b`.
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (parse_kube_version(a), parse_kube_version(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((amaj, akind, amin)), Some((bmaj, bkind, bmin))) => akind
            .cmp(&bkind)
            .then(amaj.cmp(&bmaj))
            .then(amin.cmp(&bmin)),
    }
}

fn by_version(a: &Entry, b: &Entry) -> Ordering {
    b.version_priority
        .cmp(&a.version_priority)
        .then_with(|| compare_versions(&b.version, &a.version))
}

/// kube-aggregator's `SortedByGroupAndVersion`: groups in the order of their best APIService (group priority,
/// then APIService name), each group's versions by version priority, then version.
pub(crate) fn legacy(mut entries: Vec<Entry>) -> Vec<Vec<Entry>> {
    entries.sort_by(|a, b| {
        b.group_priority
            .cmp(&a.group_priority)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut groups: Vec<Vec<Entry>> = Vec::new();
    for e in entries {
        match groups.iter_mut().find(|g| g[0].group == e.group) {
            Some(g) => g.push(e),
            None => groups.push(vec![e]),
        }
    }
    for g in &mut groups {
        g.sort_by(by_version);
    }
    groups
}

/// Aggregated discovery's order: groups by their highest group priority, then name; versions as in legacy.
pub(crate) fn aggregated(entries: Vec<Entry>) -> Vec<Vec<Entry>> {
    let mut groups: Vec<Vec<Entry>> = Vec::new();
    for e in entries {
        match groups.iter_mut().find(|g| g[0].group == e.group) {
            Some(g) => g.push(e),
            None => groups.push(vec![e]),
        }
    }
    let best = |g: &Vec<Entry>| g.iter().map(|e| e.group_priority).max().unwrap_or(0);
    groups.sort_by(|a, b| {
        best(b)
            .cmp(&best(a))
            .then_with(|| a[0].group.cmp(&b[0].group))
    });
    for g in &mut groups {
        g.sort_by(by_version);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(groups: &[Vec<Entry>]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| g.iter().map(|e| e.name.clone()).collect())
            .collect()
    }

    #[test]
    fn kube_aware_versions_order_ga_beta_alpha_then_strings() {
        let mut v = vec![
            "v1alpha1", "foo", "v2", "v1beta2", "v1", "bar", "v1beta1", "v10", "v1beta",
        ];
        v.sort_by(|a, b| compare_versions(b, a));
        assert_eq!(
            v,
            [
                "v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "bar", "foo", "v1beta"
            ]
        );
    }

    #[test]
    fn a_high_priority_apiservice_leads_its_group_and_is_preferred() {
        let entries = vec![
            Entry::new("apps", "v1", (17800, 15)),
            Entry::new("cluster.karmada.io", "storage", CRD_PRIORITY),
            Entry::new("cluster.karmada.io", "v1alpha1", (2000, 200)),
            Entry::new("work.karmada.io", "v1alpha2", CRD_PRIORITY),
            Entry::new("work.karmada.io", "v1alpha1", CRD_PRIORITY),
            Entry::new("a.example.com", "v1", CRD_PRIORITY),
        ];
        assert_eq!(
            names(&legacy(entries.clone())),
            [
                vec!["v1.apps"],
                vec!["v1alpha1.cluster.karmada.io", "storage.cluster.karmada.io"],
                vec!["v1.a.example.com"],
                vec!["v1alpha2.work.karmada.io", "v1alpha1.work.karmada.io"],
            ]
        );
        assert_eq!(names(&aggregated(entries.clone())), names(&legacy(entries)));
    }

    #[test]
    fn legacy_ties_break_on_the_apiservice_name_aggregated_on_the_group() {
        // `v1.zeta.io` sorts before `v2.alpha.io` by name; by group, alpha comes first.
        let entries = vec![
            Entry::new("alpha.io", "v2", (500, 1)),
            Entry::new("zeta.io", "v1", (500, 1)),
        ];
        assert_eq!(names(&legacy(entries.clone()))[0], ["v1.zeta.io"]);
        assert_eq!(names(&aggregated(entries))[0], ["v2.alpha.io"]);
    }
}
