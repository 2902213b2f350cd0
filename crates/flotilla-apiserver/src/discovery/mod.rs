//! Discovery documents: legacy `/api`, `/api/v1`, `/apis`, `/apis/{g}`, `/apis/{g}/{v}` and
//! aggregated `apidiscovery.k8s.io/v2`, all computed from the live catalogue so CRD changes show at once, and
//! from the APIServices (`crate::aggregator`): an aggregated group-version is listed in `/apis` and
//! `/apis/{g}` in the aggregator's order ([`order`]), with the resources its backend serves in aggregated
//! discovery (its `/apis/{g}/{v}` is the backend's own answer, proxied).

pub(crate) mod order;

use std::collections::BTreeMap;

use flotilla_apimachinery::verbs::{STORE as VERBS, SUBRESOURCE as SUB_VERBS};
use serde_json::{Value, json};

use crate::context::Ctx;
use flotilla_registry::catalog::Catalog;
use flotilla_registry::resource::ResourceInfo;
use order::{APIREGISTRATION, Entry};

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

/// A pod's subresources beyond `status`, as kube-apiserver lists them (name, kind of its object, verbs): `binding`
/// (schedulers assign pods with it), and the connect subresources `exec` and `log`, which lead to the pod's
/// kubelet. kube's others (`attach`, `eviction`, `ephemeralcontainers`, `portforward`, `proxy`, `resize`) are not
/// served.
const POD_SUBRESOURCES: [(&str, &str, &[&str]); 3] = [
    ("binding", "Binding", &["create"]),
    ("exec", "PodExecOptions", &["create", "get"]),
    ("log", "Pod", &["get"]),
];

/// The subresources of `POD_SUBRESOURCES` `info` has (all for core pods, none otherwise).
fn pod_subresources(
    info: &ResourceInfo,
) -> &'static [(&'static str, &'static str, &'static [&'static str])] {
    if !info.custom && info.group.is_empty() && info.plural == "pods" {
        &POD_SUBRESOURCES
    } else {
        &[]
    }
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

/// Whether a catalogue group-version comes from a CRD.
fn is_custom(catalog: &Catalog, group: &str, version: &str) -> bool {
    catalog
        .resources_in(group, version)
        .iter()
        .any(|i| i.custom)
}

/// Every group-version as an APIService of kube-apiserver would list it: the built-ins (those kube-apiserver
/// registers) and CRD versions this server serves, replaced by any stored APIService of the same name.
fn apiservice_entries(ctx: &Ctx) -> Vec<Entry> {
    let mut by_name: BTreeMap<String, Entry> = BTreeMap::new();
    for (group, versions) in ctx.registry.catalog.groups() {
        if group.is_empty() || group == APIREGISTRATION {
            continue;
        }
        for v in versions {
            let priority = if is_custom(&ctx.registry.catalog, &group, &v) {
                Some(order::CRD_PRIORITY)
            } else {
                order::builtin_priority(&group, &v)
            };
            if let Some(p) = priority {
                let e = Entry::new(&group, &v, p);
                by_name.insert(e.name.clone(), e);
            }
        }
    }
    for r in ctx.aggregator.index().values() {
        if !r.spec.group.is_empty() {
            by_name.insert(r.spec.name.clone(), entry_of(r));
        }
    }
    by_name.into_values().collect()
}

/// A stored APIService as discovery orders it.
fn entry_of(r: &crate::aggregator::Registered) -> Entry {
    Entry {
        name: r.spec.name.clone(),
        group: r.spec.group.clone(),
        version: r.spec.version.clone(),
        group_priority: r.spec.group_priority,
        version_priority: r.spec.version_priority,
    }
}

fn legacy_group(entries: &[Entry]) -> Value {
    let versions: Vec<String> = entries.iter().map(|e| e.version.clone()).collect();
    group_doc(&entries[0].group, &versions)
}

fn local_group(catalog: &Catalog, group: &str) -> Option<Value> {
    let (g, vs) = catalog
        .groups()
        .into_iter()
        .find(|(g, _)| g == group && !g.is_empty())?;
    Some(group_doc(&g, &vs))
}

/// `GET /apis`: `apiregistration.k8s.io` first, then every APIService's group in the aggregator's order.
pub(crate) fn api_groups(ctx: &Ctx) -> Value {
    let mut groups: Vec<Value> = local_group(&ctx.registry.catalog, APIREGISTRATION)
        .into_iter()
        .collect();
    groups.extend(
        order::legacy(apiservice_entries(ctx))
            .iter()
            .map(|g| legacy_group(g)),
    );
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/{group}`, or `None` when no APIService and no served resource has the group.
pub(crate) fn api_group(ctx: &Ctx, group: &str) -> Option<Value> {
    let entries: Vec<Entry> = apiservice_entries(ctx)
        .into_iter()
        .filter(|e| e.group == group)
        .collect();
    let mut doc = if entries.is_empty() {
        local_group(&ctx.registry.catalog, group)?
    } else {
        legacy_group(&order::legacy(entries)[0])
    };
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
        add_names(&mut r, info);
        resources.push(r);
        for (sub, kind, verbs) in pod_subresources(info) {
            resources.push(json!({"name": format!("{}/{sub}", info.plural), "singularName": "", "namespaced": true, "kind": kind, "verbs": verbs}));
        }
        if flotilla_registry::kinds::access::certificates::serves(info) {
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
    for (sub, kind, verbs) in pod_subresources(info) {
        subs.push(json!({"subresource": sub, "responseKind": {"group": "", "version": "v1", "kind": kind}, "verbs": verbs}));
    }
    if flotilla_registry::kinds::access::certificates::serves(info) {
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
    add_names(&mut r, info);
    if !subs.is_empty() {
        r["subresources"] = Value::Array(subs);
    }
    r
}

/// Adds a resource's short names and categories, when it has any.
fn add_names(r: &mut Value, info: &ResourceInfo) {
    if !info.short_names.is_empty() {
        r["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        r["categories"] = json!(info.categories);
    }
}

fn local_version(catalog: &Catalog, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = catalog
        .resources_in(group, version)
        .iter()
        .map(|i| aggregated_resource(i))
        .collect();
    json!({"version": version, "freshness": "Current", "resources": resources})
}

/// Aggregated discovery for `/api` (`core == true`) or `/apis`, at `version` (`v2` or `v2beta1`): the served
/// group-versions not taken over by an APIService, and those APIServices' entries as their backends last
/// answered (`Stale` and without resources when they did not; not yet listed before the first answer).
pub(crate) fn aggregated(ctx: &Ctx, core: bool, version: &str) -> Value {
    let catalog = &ctx.registry.catalog;
    let mut entries = Vec::new();
    let mut docs: BTreeMap<(String, String), Value> = BTreeMap::new();
    for (g, vs) in catalog.groups() {
        if g.is_empty() != core {
            continue;
        }
        for v in vs {
            // Until its backend has answered, a group-version an APIService takes over is still listed as
            // served here (kube's CRD source stands until the aggregator's replaces it).
            let taken_over = ctx.aggregator.remote(&g, &v).is_some_and(|r| {
                ctx.aggregator
                    .discovery
                    .version_entry(&r.spec.name)
                    .is_some()
            });
            if taken_over {
                continue;
            }
            let priority = if g == APIREGISTRATION {
                (order::APIREGISTRATION_PRIORITY, 0)
            } else if is_custom(catalog, &g, &v) {
                order::CRD_PRIORITY
            } else {
                order::builtin_priority(&g, &v).unwrap_or((0, 0))
            };
            docs.insert((g.clone(), v.clone()), local_version(catalog, &g, &v));
            entries.push(Entry::new(&g, &v, priority));
        }
    }
    if !core {
        for (name, r) in ctx.aggregator.index().iter() {
            if r.spec.service.is_none() || r.spec.group.is_empty() {
                continue;
            }
            if let Some(doc) = ctx.aggregator.discovery.version_entry(name) {
                docs.insert((r.spec.group.clone(), r.spec.version.clone()), doc);
                entries.push(entry_of(r));
            }
        }
    }
    let items: Vec<Value> = order::aggregated(entries)
        .into_iter()
        .map(|group| {
            let name = group[0].group.clone();
            let versions: Vec<Value> = group
                .into_iter()
                .filter_map(|e| docs.remove(&(e.group, e.version)))
                .collect();
            json!({"metadata": {"name": name}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests;
