//! APIService objects as the aggregator reads them: group, version, priorities, the backing service (with the
//! port defaulted to 443, as kube-apiserver defaults it) and the TLS settings used to reach it.

use base64::Engine;
use serde_json::Value;

/// A Service an APIService names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ServiceRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Port (443 when the spec leaves it out).
    pub port: i64,
}

/// The parts of an APIService the aggregator acts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiService {
    /// `metadata.name` (`<version>.<group>`).
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.version`.
    pub version: String,
    /// `spec.groupPriorityMinimum`.
    pub group_priority: i64,
    /// `spec.versionPriority`.
    pub version_priority: i64,
    /// `spec.service`: `None` for a Local APIService.
    pub service: Option<ServiceRef>,
    /// `spec.caBundle`, decoded (or why it could not be decoded).
    pub ca_bundle: Result<Vec<u8>, String>,
    /// `spec.insecureSkipTLSVerify`.
    pub insecure: bool,
}

/// The name of the APIService for `group`/`version`.
pub(crate) fn name_of(group: &str, version: &str) -> String {
    format!("{version}.{group}")
}

/// Whether the APIService object's `Available` condition is `True`.
pub(crate) fn is_available(obj: &Value) -> bool {
    condition(obj, "Available")
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// The condition of `type_` in the object's status.
pub(crate) fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

impl ApiService {
    /// Reads an APIService object; `None` without a version or when its name is not `<version>.<group>` (which
    /// kube-apiserver's validation refuses to store).
    pub(crate) fn parse(obj: &Value) -> Option<Self> {
        let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
        let int = |p: &str| obj.pointer(p).and_then(Value::as_i64).unwrap_or(0);
        let name = s("/metadata/name");
        let version = s("/spec/version");
        if version.is_empty() || name != name_of(s("/spec/group"), version) {
            return None;
        }
        let service = obj
            .pointer("/spec/service")
            .filter(|v| v.is_object())
            .map(|svc| ServiceRef {
                namespace: svc
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
                name: svc.get("name").and_then(Value::as_str).unwrap_or("").into(),
                port: svc.get("port").and_then(Value::as_i64).unwrap_or(443),
            });
        let ca_bundle = base64::engine::general_purpose::STANDARD
            .decode(s("/spec/caBundle"))
            .map_err(|e| format!("spec.caBundle is not base64: {e}"));
        Some(Self {
            name: name.into(),
            group: s("/spec/group").into(),
            version: version.into(),
            group_priority: int("/spec/groupPriorityMinimum"),
            version_priority: int("/spec/versionPriority"),
            service,
            ca_bundle,
            insecure: obj
                .pointer("/spec/insecureSkipTLSVerify")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// The server name the backend's certificate must carry (`<service>.<namespace>.svc`).
    pub(crate) fn server_name(&self) -> Option<String> {
        self.service
            .as_ref()
            .map(|s| format!("{}.{}.svc", s.name, s.namespace))
    }

    /// Whether `other` is reached with the same TLS client (service, CA bundle and verification).
    pub(crate) fn same_transport(&self, other: &Self) -> bool {
        self.service == other.service
            && self.ca_bundle == other.ca_bundle
            && self.insecure == other.insecure
    }

    /// `/apis/<group>/<version>`.
    pub(crate) fn path(&self) -> String {
        format!("/apis/{}/{}", self.group, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_spec_with_kubes_defaults() {
        let obj = json!({"metadata": {"name": "v1alpha1.cluster.karmada.io"},
            "spec": {"group": "cluster.karmada.io", "version": "v1alpha1", "groupPriorityMinimum": 2000,
                     "versionPriority": 10, "caBundle": "aGVsbG8=",
                     "service": {"namespace": "karmada-system", "name": "karmada-aggregated-apiserver"}},
            "status": {"conditions": [{"type": "Available", "status": "True"}]}});
        let a = ApiService::parse(&obj).expect("parses");
        assert_eq!(a.path(), "/apis/cluster.karmada.io/v1alpha1");
        assert_eq!(a.service.as_ref().map(|s| s.port), Some(443));
        assert_eq!(a.ca_bundle.as_deref(), Ok(&b"hello"[..]));
        assert_eq!(
            a.server_name().as_deref(),
            Some("karmada-aggregated-apiserver.karmada-system.svc")
        );
        assert_eq!((a.group_priority, a.version_priority), (2000, 10));
        assert!(is_available(&obj));
        let local =
            json!({"metadata": {"name": "v1.apps"}, "spec": {"group": "apps", "version": "v1"}});
        let local = ApiService::parse(&local).expect("parses");
        assert!(local.service.is_none() && local.server_name().is_none());
        assert!(!is_available(
            &json!({"status": {"conditions": [{"type": "Available", "status": "False"}]}})
        ));
        assert!(ApiService::parse(&json!({"metadata": {"name": "x"}})).is_none());
        let misnamed =
            json!({"metadata": {"name": "v2.apps"}, "spec": {"group": "apps", "version": "v1"}});
        assert!(ApiService::parse(&misnamed).is_none());
    }
}
