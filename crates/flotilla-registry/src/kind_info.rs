//! [`KindInfo`]: what the pure protocol modules need to know about the resource a request addresses.

use serde_json::Value;

/// The served resource a request addresses, as the protocol modules (fields, patch, table, schema, defaults)
/// need it. Cheap to build per request: everything is borrowed.
#[derive(Debug, Clone, Copy)]
pub struct KindInfo<'a> {
    /// API group, empty for the core group.
    pub group: &'a str,
    /// API version, e.g. `v1`.
    pub version: &'a str,
    /// Kind, e.g. `Deployment`.
    pub kind: &'a str,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// For a custom resource: the CRD's `spec.versions[i]` entry for this version (schema, printer columns,
    /// selectable fields, subresources). `None` for built-in kinds.
    pub crd_version: Option<&'a Value>,
}

impl<'a> KindInfo<'a> {
    /// A built-in kind.
    pub fn builtin(group: &'a str, version: &'a str, kind: &'a str, namespaced: bool) -> Self {
        Self {
            group,
            version,
            kind,
            namespaced,
            crd_version: None,
        }
    }

    /// A custom resource served from `crd_version` (one entry of the CRD's `spec.versions`).
    pub fn custom(
        group: &'a str,
        version: &'a str,
        kind: &'a str,
        namespaced: bool,
        crd_version: &'a Value,
    ) -> Self {
        Self {
            group,
            version,
            kind,
            namespaced,
            crd_version: Some(crd_version),
        }
    }

    /// Whether this is a custom resource.
    pub fn is_custom(&self) -> bool {
        self.crd_version.is_some()
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The `openAPIV3Schema` of a custom resource version, if declared.
    pub fn crd_schema(&self) -> Option<&'a Value> {
        self.crd_version
            .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
    }
}
