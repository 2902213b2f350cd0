//! API discovery over any API server (control plane or member): every served group version, its resources,
//! verbs and scope, and which version of each group is preferred.
//!
//! Unlike kube's `Discovery::run`, one failing group does not fail the whole run: its name is reported so the
//! cluster status controller can report its `CompleteAPIEnablements` condition `Partial` and the detector keeps
//! what it found.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::Client;
use kube::api::ApiResource;
use kube::core::GroupVersionKind;

/// One served resource (a plural under a group version), without sub-resources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedResource {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// The verbs the resource supports.
    pub verbs: Vec<String>,
    /// Whether this is the preferred version of its group.
    pub preferred: bool,
    /// Whether a `status` sub-resource is served.
    pub has_status: bool,
}

impl ServedResource {
    /// Whether the resource supports `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// The group, version and kind.
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(
            &self.resource.group,
            &self.resource.version,
            &self.resource.kind,
        )
    }
}

/// What one discovery run found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Discovered {
    /// Every served resource of every served group version.
    pub resources: Vec<ServedResource>,
    /// Group versions whose resource list could not be read.
    pub failed: Vec<String>,
}

/// Runs discovery; fails only when the group lists themselves cannot be read.
///
/// # Errors
/// The client error of `/api` or `/apis`.
pub(crate) async fn discover(client: &Client) -> Result<Discovered, kube::Error> {
    let mut found = Discovered::default();
    let core = client.list_core_api_versions().await?;
    for (i, version) in core.versions.iter().enumerate() {
        match client.list_core_api_resources(version).await {
            Ok(list) => collect(&mut found.resources, "", version, i == 0, &list),
            Err(err) => {
                tracing::debug!(version, error = %err, "core discovery failed");
                found.failed.push(version.clone());
            }
        }
    }
    let groups = client.list_api_groups().await?;
    for group in &groups.groups {
        let preferred = group.preferred_version.as_ref().map(|v| v.version.as_str());
        for version in &group.versions {
            match client
                .list_api_group_resources(&version.group_version)
                .await
            {
                Ok(list) => collect(
                    &mut found.resources,
                    &group.name,
                    &version.version,
                    preferred.is_some_and(|p| p == version.version),
                    &list,
                ),
                Err(err) => {
                    tracing::debug!(group_version = %version.group_version, error = %err, "discovery failed");
                    found.failed.push(version.group_version.clone());
                }
            }
        }
    }
    Ok(found)
}

/// Appends the resources of one group version's list (sub-resources are folded into `has_status`).
pub(crate) fn collect(
    out: &mut Vec<ServedResource>,
    group: &str,
    version: &str,
    preferred: bool,
    list: &APIResourceList,
) {
    let subresources: BTreeSet<&str> = list
        .resources
        .iter()
        .filter(|r| r.name.contains('/'))
        .map(|r| r.name.as_str())
        .collect();
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
        out.push(ServedResource {
            resource: ApiResource {
                group: group.to_owned(),
                version: version.to_owned(),
                api_version: api_version.clone(),
                kind: r.kind.clone(),
                plural: r.name.clone(),
            },
            namespaced: r.namespaced,
            verbs: r.verbs.clone(),
            preferred,
            has_status: subresources.contains(format!("{}/status", r.name).as_str()),
        });
    }
}

/// Looks up one kind in one group version of a server (a single request).
///
/// # Errors
/// The client error; `Ok(None)` when the group version is served but lacks the kind.
pub(crate) async fn resolve_kind(
    client: &Client,
    gvk: &GroupVersionKind,
) -> Result<Option<ServedResource>, kube::Error> {
    let list = if gvk.group.is_empty() {
        client.list_core_api_resources(&gvk.version).await?
    } else {
        client
            .list_api_group_resources(&format!("{}/{}", gvk.group, gvk.version))
            .await?
    };
    let mut found = Vec::new();
    collect(&mut found, &gvk.group, &gvk.version, false, &list);
    Ok(found.into_iter().find(|r| r.resource.kind == gvk.kind))
}
