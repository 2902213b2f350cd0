use serde_json::json;

use super::*;
use crate::context::Ctx;

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| {
            g.pointer("/metadata/name")
                .or_else(|| g.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[test]
fn legacy_documents_have_required_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::for_test(dir.path());
    let c = &ctx.registry.catalog;
    let api = api_versions("127.0.0.1:6443");
    assert_eq!(
        api["serverAddressByClientCIDRs"][0]["clientCIDR"],
        "0.0.0.0/0"
    );
    let apis = api_groups(&ctx);
    assert!(apis["groups"].as_array().is_some_and(|g| {
        g.iter()
            .all(|g| !g["versions"].as_array().is_some_and(Vec::is_empty))
    }));
    assert!(
        apis["groups"]
            .as_array()
            .is_some_and(|g| g.iter().all(|g| g["name"] != ""))
    );
    let apps = resource_list(c, "apps", "v1").expect("apps/v1");
    let names: Vec<&str> = apps["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        names.contains(&"deployments")
            && names.contains(&"deployments/scale")
            && names.contains(&"deployments/status")
    );
    assert!(
        apps["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|r| r["singularName"].is_string())
    );
    assert!(resource_list(c, "apps", "v9").is_none());
    assert_eq!(
        api_group(&ctx, "apps").expect("apps")["preferredVersion"]["version"],
        "v1"
    );
    assert_eq!(
        api_group(&ctx, APIREGISTRATION).expect("served")["versions"][0]["version"],
        "v1"
    );
    assert!(api_group(&ctx, "nope.example.com").is_none());
}

/// kube-apiserver 1.37's `/apis` of a fresh cluster, in order (`kubectl get --raw /apis`), limited to the groups
/// this server serves.
const KUBE_ORDER: [&str; 19] = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
];

#[test]
fn groups_come_in_kube_apiservers_order_in_both_discoveries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::for_test(dir.path());
    let want: Vec<&str> = KUBE_ORDER
        .iter()
        .copied()
        .filter(|g| {
            ctx.registry
                .catalog
                .groups()
                .iter()
                .any(|(have, _)| have == g)
        })
        .collect();
    assert_eq!(names(&api_groups(&ctx), "groups"), want);
    assert_eq!(names(&aggregated(&ctx, false, "v2"), "items"), want);
    let autoscaling = api_group(&ctx, "autoscaling").expect("autoscaling");
    assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
}

#[test]
fn every_builtin_group_version_has_kube_apiservers_priority() {
    let c = Catalog::with_builtins();
    for (group, versions) in c.groups() {
        for v in versions {
            if group != APIREGISTRATION {
                assert!(
                    order::builtin_priority(&group, &v).is_some(),
                    "{group}/{v} has no priority"
                );
            }
        }
    }
}

#[test]
fn aggregated_splits_core_and_groups() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::for_test(dir.path());
    let core = aggregated(&ctx, true, "v2");
    assert_eq!(core["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(core["items"][0]["metadata"]["name"], "");
    let groups = aggregated(&ctx, false, "v2");
    assert!(
        groups["items"]
            .as_array()
            .is_some_and(|i| i.iter().any(|g| g["metadata"]["name"] == "apps"))
    );
    assert_eq!(groups["items"][0]["metadata"]["name"], APIREGISTRATION);
    assert_eq!(
        groups["items"][0]["versions"][0],
        json!({"version": "v1", "freshness": "Current", "resources": groups["items"][0]["versions"][0]["resources"]})
    );
}

#[test]
fn every_built_in_is_listed_once_by_its_group_versions_discovery() {
    let catalog = flotilla_registry::catalog::Catalog::with_builtins();
    for info in catalog.all().into_iter().filter(|i| !i.custom) {
        let list = resource_list(&catalog, &info.group, &info.version)
            .unwrap_or_else(|| panic!("{}/{} has no discovery document", info.group, info.version));
        let listed = list["resources"].as_array().into_iter().flatten();
        assert_eq!(
            listed
                .filter(|e| e["name"] == info.plural.as_str()
                    && e["kind"] == info.kind.as_str()
                    && e["namespaced"] == info.namespaced)
                .count(),
            1,
            "{} {} is listed once by discovery",
            info.api_version(),
            info.kind
        );
    }
}

/// Pods list the subresources served beside `status` in both discoveries, by name, with kube's kinds and verbs.
#[test]
fn pods_list_binding_exec_and_log_as_kube_apiserver_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::for_test(dir.path());
    let core = resource_list(&ctx.registry.catalog, "", "v1").expect("v1");
    let pods: Vec<&Value> = core["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("pods/")))
        .collect();
    assert_eq!(
        pods.iter()
            .map(|r| (r["name"].clone(), r["kind"].clone(), r["verbs"].clone()))
            .collect::<Vec<_>>(),
        [
            (json!("pods/binding"), json!("Binding"), json!(["create"])),
            (
                json!("pods/exec"),
                json!("PodExecOptions"),
                json!(["create", "get"])
            ),
            (json!("pods/log"), json!("Pod"), json!(["get"])),
            (json!("pods/status"), json!("Pod"), json!(SUB_VERBS)),
        ]
    );
    let aggregated = aggregated(&ctx, true, "v2");
    let pod = aggregated["items"][0]["versions"][0]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["resource"] == "pods")
        .expect("pods");
    let subresources: Vec<&str> = pod["subresources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["subresource"].as_str())
        .collect();
    assert_eq!(subresources, ["binding", "exec", "log", "status"]);
    assert_eq!(
        pod["subresources"][1]["responseKind"],
        json!({"group": "", "version": "v1", "kind": "PodExecOptions"})
    );
}
