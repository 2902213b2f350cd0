//! The resources the scenarios read, as untyped objects (so a test sees exactly what a user's `kubectl get -o
//! yaml` shows), and small readers for the fields they check.

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Client, ResourceExt};
use serde_json::Value;

/// A resource the scenarios use: group, version, kind, plural.
#[derive(Clone, Copy, Debug)]
pub struct Res(
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub &'static str,
);

/// `apps/v1 Deployment`.
pub const DEPLOYMENT: Res = Res("apps", "v1", "Deployment", "deployments");
/// `workload.example.io/v1alpha1 Workload`.
pub const WORKLOAD: Res = Res("workload.example.io", "v1alpha1", "Workload", "workloads");
/// `work.karmada.io/v1alpha2 ResourceBinding`.
pub const RESOURCE_BINDING: Res = Res(
    "work.karmada.io",
    "v1alpha2",
    "ResourceBinding",
    "resourcebindings",
);
/// `work.karmada.io/v1alpha2 ClusterResourceBinding`.
pub const CLUSTER_RESOURCE_BINDING: Res = Res(
    "work.karmada.io",
    "v1alpha2",
    "ClusterResourceBinding",
    "clusterresourcebindings",
);
/// `apps.karmada.io/v1alpha1 WorkloadRebalancer`.
pub const WORKLOAD_REBALANCER: Res = Res(
    "apps.karmada.io",
    "v1alpha1",
    "WorkloadRebalancer",
    "workloadrebalancers",
);
/// `work.karmada.io/v1alpha1 Work`.
pub const WORK: Res = Res("work.karmada.io", "v1alpha1", "Work", "works");
/// `apiextensions.k8s.io/v1 CustomResourceDefinition`.
pub const CRD: Res = Res(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
);
/// `cluster.karmada.io/v1alpha1 Cluster`.
pub const CLUSTER: Res = Res("cluster.karmada.io", "v1alpha1", "Cluster", "clusters");
/// `v1 ConfigMap`.
pub const CONFIG_MAP: Res = Res("", "v1", "ConfigMap", "configmaps");
/// `v1 Namespace`.
pub const NAMESPACE: Res = Res("", "v1", "Namespace", "namespaces");
/// `v1 Event`.
pub const EVENT: Res = Res("", "v1", "Event", "events");

impl Res {
    fn api_resource(self) -> ApiResource {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(self.0, self.1, self.2), self.3)
    }

    /// The API of this resource in `namespace` (`None`: cluster-scoped or all namespaces).
    pub fn api(self, client: &Client, namespace: Option<&str>) -> Api<DynamicObject> {
        match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &self.api_resource()),
            None => Api::all_with(client.clone(), &self.api_resource()),
        }
    }

    /// The object `name`, `Ok(None)` when it does not exist, `Err(text)` when it could not be read.
    pub async fn get(
        self,
        client: &Client,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, String> {
        match self.api(client, namespace).get_opt(name).await {
            Ok(found) => Ok(found.map(|o| to_value(&o))),
            Err(e) => Err(format!("failed to read {} {name}: {e}", self.2)),
        }
    }

    /// Every object of this resource in `namespace`, as JSON.
    pub async fn list(
        self,
        client: &Client,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, String> {
        match self.api(client, namespace).list(&Default::default()).await {
            Ok(list) => Ok(list.items.iter().map(to_value).collect()),
            Err(e) => Err(format!("failed to list {}: {e}", self.3)),
        }
    }
}

/// A Deployment `web` with one replica of image `nginx` and label `app: web`, as the scenarios create it.
pub fn web_deployment() -> Value {
    serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}
            }
        }
    })
}

/// An object as JSON.
pub fn to_value(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or_else(|_| Value::String(object.name_any()))
}

/// The integer at `pointer`, if any.
pub fn int(object: &Value, pointer: &str) -> Option<i64> {
    object.pointer(pointer).and_then(Value::as_i64)
}

/// The string at `pointer`, if any.
pub fn text<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str)
}

/// The binding's `status.aggregatedStatus` item of `cluster`.
pub fn aggregated_item<'a>(binding: &'a Value, cluster: &str) -> Option<&'a Value> {
    binding
        .pointer("/status/aggregatedStatus")
        .and_then(Value::as_array)?
        .iter()
        .find(|i| i.get("clusterName").and_then(Value::as_str) == Some(cluster))
}

/// `(cluster, replicas)` of a binding's `spec.clusters`, sorted by cluster.
pub fn target_clusters(binding: &Value) -> Vec<(String, i64)> {
    let mut out: Vec<(String, i64)> = binding
        .pointer("/spec/clusters")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        c.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        c.get("replicas").and_then(Value::as_i64).unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A compact one-line rendering for wait states and dumps.
pub fn brief(object: &Value) -> String {
    let mut shown = object.clone();
    if let Some(meta) = shown.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    // A Cluster's API enablements are long and rarely the point.
    if let Some(status) = shown.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("apiEnablements");
    }
    shown.to_string()
}
