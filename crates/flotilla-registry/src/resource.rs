//! What a served resource is ([`ResourceInfo`]: names, scope, subresources, the CRD it came from) and where its
//! objects are stored ([`ResourceInfo::key`]). The catalogue (`crate::catalog`) holds one per served
//! group/version/resource.

use std::sync::Arc;

use flotilla_store::ResKey;
use serde_json::Value;

use crate::kind_info::KindInfo;

/// The group of the newer Event API, `events.k8s.io`, whose Events are a view of the core Event storage.
pub const EVENTS_GROUP: &str = "events.k8s.io";

/// The storage both Event APIs read and write: `events.k8s.io/v1` Events are the core `v1` Events, as in
/// kube-apiserver, where both REST endpoints share one storage.
pub fn events_storage_key() -> ResKey {
    ResKey::new("", "events")
}

/// Whether `group`/`plural` is the `events.k8s.io` view of the core Event storage.
pub fn is_events_view(group: &str, plural: &str) -> bool {
    group == EVENTS_GROUP && plural == "events"
}

/// Where a resource's scale subresource finds replicas and the selector (JSON paths like `.spec.replicas`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// Path of the desired replica count.
    pub spec_replicas: String,
    /// Path of the observed replica count.
    pub status_replicas: String,
    /// Path of the label selector (a string for custom resources, a LabelSelector for built-ins).
    pub label_selector: Option<String>,
}

/// One served group/version/resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    /// API group (`""` for core).
    pub group: String,
    /// Served version.
    pub version: String,
    /// Version objects are stored in (custom resources with several versions).
    pub storage_version: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// List kind, e.g. `DeploymentList`.
    pub list_kind: String,
    /// Plural resource name used in paths.
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Whether a `status` subresource splits status from the main endpoint.
    pub status: bool,
    /// Scale subresource, if any.
    pub scale: Option<ScalePaths>,
    /// Whether `metadata.generation` is maintained.
    pub generation: bool,
    /// Whether this is a custom resource served for a CRD.
    pub custom: bool,
    /// The CRD object this resource was built from (custom resources only): printer columns, schema.
    pub crd: Option<Arc<Value>>,
}

impl ResourceInfo {
    /// `apiVersion` of objects served at this version.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `apiVersion` objects are stored with.
    pub fn storage_api_version(&self) -> String {
        if self.group.is_empty() {
            self.storage_version.clone()
        } else {
            format!("{}/{}", self.group, self.storage_version)
        }
    }

    /// The view of this resource the protocol modules take.
    pub fn kind_info(&self) -> KindInfo<'_> {
        let version_entry = self.crd.as_deref().and_then(|crd| {
            crd.pointer("/spec/versions")?
                .as_array()?
                .iter()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(self.version.as_str()))
        });
        match version_entry {
            Some(v) => KindInfo::custom(&self.group, &self.version, &self.kind, self.namespaced, v),
            None => KindInfo::builtin(&self.group, &self.version, &self.kind, self.namespaced),
        }
    }

    /// The storage key shared by every version of this resource. The built-in `events.k8s.io` Events are a view
    /// of the core Event storage (a CRD that happens to share the names is not).
    pub fn key(&self) -> ResKey {
        if !self.custom && is_events_view(&self.group, &self.plural) {
            return events_storage_key();
        }
        ResKey {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }
}
