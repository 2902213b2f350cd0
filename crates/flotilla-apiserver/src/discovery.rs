//! Discovery documents (spec §3): legacy `/api`, `/api/v1`, `/apis`, `/apis/{g}`, `/apis/{g}/{v}` and
//! aggregated `apidiscovery.k8s.io/v2`, all computed from the live catalogue so CRD changes show at once.

use serde_json::{Value, json};

use crate::catalog::{Catalog, ResourceInfo};

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const SUB_VERBS: [&str; 3] = ["get", "patch", "update"];

fn verbs(info: &ResourceInfo) -> Vec<&'static str> {
    if crate::handlers::review::is_review(info) {
        return vec!["create"];
    }
    if info.group.is_empty() && info.plural == "namespaces" {
        // Namespaces are not deletable as a collection.
        return VERBS
            .iter()
            .copied()
            .filter(|v| *v != "deletecollection")
            .collect();
    }
    VERBS.to_vec()
}

/// `GET /api`.
pub(crate) fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(Value::Null);
    json!({"name": name, "versions": vs, "preferredVersion": preferred})
}

/// `GET /apis`.
pub(crate) fn api_groups(catalog: &Catalog) -> Value {
    let groups: Vec<Value> = catalog
        .groups()
        .iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_doc(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/{group}`, or `None` when the group is not served.
pub(crate) fn api_group(catalog: &Catalog, group: &str) -> Option<Value> {
    let (g, vs) = catalog
        .groups()
        .into_iter()
        .find(|(g, _)| g == group && !g.is_empty())?;
    let mut doc = group_doc(&g, &vs);
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("kind".into(), json!("APIGroup"));
        obj.insert("apiVersion".into(), json!("v1"));
    }
    Some(doc)
}

/// `GET /api/v1` or `/apis/{g}/{v}`, or `None` when the group-version is not served.
pub(crate) fn resource_list(catalog: &Catalog, group: &str, version: &str) -> Option<Value> {
    let infos = catalog.resources_in(group, version);
    if infos.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for info in &infos {
        let mut r = json!({
            "name": info.plural,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": verbs(info),
        });
        if let Some(obj) = r.as_object_mut() {
            if !info.short_names.is_empty() {
                obj.insert("shortNames".into(), json!(info.short_names));
            }
            if !info.categories.is_empty() {
                obj.insert("categories".into(), json!(info.categories));
            }
        }
        resources.push(r);
        if crate::certificates::serves(info) {
            resources.push(json!({"name": format!("{}/approval", info.plural), "singularName": "", "namespaced": info.namespaced, "kind": info.kind, "verbs": SUB_VERBS}));
        }
        if info.status {
            resources.push(json!({"name": format!("{}/status", info.plural), "singularName": "", "namespaced": info.namespaced, "kind": info.kind, "verbs": SUB_VERBS}));
        }
        if info.scale.is_some() {
            resources.push(json!({"name": format!("{}/scale", info.plural), "singularName": "", "namespaced": info.namespaced, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": SUB_VERBS}));
        }
        if info.group.is_empty() && info.plural == "namespaces" {
            resources.push(json!({"name": "namespaces/finalize", "singularName": "", "namespaced": false, "kind": "Namespace", "verbs": ["update"]}));
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

fn aggregated_resource(info: &ResourceInfo) -> Value {
    let kind = json!({"group": info.group, "version": info.version, "kind": info.kind});
    let mut subs = Vec::new();
    if crate::certificates::serves(info) {
        subs.push(json!({"subresource": "approval", "responseKind": kind, "verbs": SUB_VERBS}));
    }
    if info.status {
        subs.push(json!({"subresource": "status", "responseKind": kind, "verbs": SUB_VERBS}));
    }
    if info.scale.is_some() {
        subs.push(json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": SUB_VERBS}));
    }
    if info.group.is_empty() && info.plural == "namespaces" {
        subs.push(json!({"subresource": "finalize", "responseKind": kind, "verbs": ["update"]}));
    }
    let mut r = json!({
        "resource": info.plural,
        "responseKind": kind,
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.singular,
        "verbs": verbs(info),
    });
    if let Some(obj) = r.as_object_mut() {
        if !info.short_names.is_empty() {
            obj.insert("shortNames".into(), json!(info.short_names));
        }
        if !info.categories.is_empty() {
            obj.insert("categories".into(), json!(info.categories));
        }
        if !subs.is_empty() {
            obj.insert("subresources".into(), Value::Array(subs));
        }
    }
    r
}

/// Aggregated discovery for `/api` (`core == true`) or `/apis`, at `version` (`v2` or `v2beta1`).
pub(crate) fn aggregated(catalog: &Catalog, core: bool, version: &str) -> Value {
    let mut items = Vec::new();
    for (g, vs) in catalog.groups() {
        if g.is_empty() != core {
            continue;
        }
        let versions: Vec<Value> = vs
            .iter()
            .map(|v| {
                let resources: Vec<Value> = catalog
                    .resources_in(&g, v)
                    .iter()
                    .map(|i| aggregated_resource(i))
                    .collect();
                json!({"version": v, "freshness": "Current", "resources": resources})
            })
            .collect();
        items.push(json!({"metadata": {"name": g}, "versions": versions}));
    }
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_documents_have_required_fields() {
        let c = Catalog::with_builtins();
        let api = api_versions("127.0.0.1:6443");
        assert_eq!(
            api["serverAddressByClientCIDRs"][0]["clientCIDR"],
            "0.0.0.0/0"
        );
        let apis = api_groups(&c);
        assert!(apis["groups"].as_array().is_some_and(|g| {
            g.iter()
                .all(|g| !g["versions"].as_array().is_some_and(Vec::is_empty))
        }));
        assert!(
            apis["groups"]
                .as_array()
                .is_some_and(|g| g.iter().all(|g| g["name"] != ""))
        );
        let apps = resource_list(&c, "apps", "v1").expect("apps/v1");
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
        assert!(resource_list(&c, "apps", "v9").is_none());
        assert_eq!(
            api_group(&c, "apps").expect("apps")["preferredVersion"]["version"],
            "v1"
        );
    }

    #[test]
    fn aggregated_splits_core_and_groups() {
        let c = Catalog::with_builtins();
        let core = aggregated(&c, true, "v2");
        assert_eq!(core["items"].as_array().map(Vec::len), Some(1));
        assert_eq!(core["items"][0]["metadata"]["name"], "");
        let groups = aggregated(&c, false, "v2");
        assert!(
            groups["items"]
                .as_array()
                .is_some_and(|i| i.iter().any(|g| g["metadata"]["name"] == "apps"))
        );
    }
}
