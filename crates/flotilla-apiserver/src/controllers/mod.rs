//! Internal controllers a real cluster runs in kube-controller-manager and apiextensions (spec §9, §10):
//! bootstrap objects, the CA ConfigMaps and `kubernetes` Service every cluster publishes, CRD naming/establishing/cleanup, namespace lifecycle, garbage collection,
//! ServiceAccount token secrets and Event expiry, and kube-apiserver's own: the front-proxy trust ConfigMap
//! (`authentication`) and, started from here, the aggregator's (`crate::aggregator`). They read the store and
//! write through the registry (`crate::registry`), never through the HTTP handlers.

pub(crate) mod authentication;
pub(crate) mod crd;
pub(crate) mod events;
pub(crate) mod gc;
pub(crate) mod namespace;
pub(crate) mod published;
pub(crate) mod serviceaccount;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::catalog::ResKey;
use crate::context::Ctx;
use crate::registry;
use crate::server::{Error, ServerConfig};
use crate::status::ApiResult;

/// Creates an object of the resource `group/version/plural` if it is missing, through the registry's create
/// preparation; a resource the catalogue does not serve is skipped.
pub(crate) async fn ensure(
    ctx: &Ctx,
    group: &str,
    version: &str,
    plural: &str,
    obj: Value,
) -> ApiResult<()> {
    match ctx.catalog.get(group, version, plural) {
        Some(info) => registry::ensure(ctx, &info, obj).await,
        None => Ok(()),
    }
}

fn node(name: &str, cpu: &str, memory: &str) -> Value {
    let resources =
        json!({"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"});
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
        "spec": {},
        "status": {
            "capacity": resources, "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "simulated node is ready", "lastHeartbeatTime": crate::meta::now(), "lastTransitionTime": crate::meta::now()}],
            "addresses": [{"type": "Hostname", "address": name}],
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "v1.36.0+flotilla", "containerRuntimeVersion": "flotilla://simulated", "kernelVersion": "", "osImage": "flotilla", "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": ""},
        },
    })
}

/// Bootstraps built-in objects, registers stored CRDs and starts every internal controller.
pub(crate) async fn start(ctx: &Arc<Ctx>, config: &ServerConfig) -> Result<(), Error> {
    let fail = |what: &str| {
        let what = what.to_string();
        move |e: crate::status::ApiError| Error::Bootstrap {
            what,
            message: e.message,
        }
    };
    crd::register_stored(ctx);
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        ensure(
            ctx,
            "",
            "v1",
            "namespaces",
            json!({"metadata": {"name": ns}}),
        )
        .await
        .map_err(fail(ns))?;
    }
    // kube-apiserver's own PriorityClasses, which system pods name.
    for (name, value, description) in [
        (
            "system-node-critical",
            2_000_001_000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        (
            "system-cluster-critical",
            2_000_000_000,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
    ] {
        let class = json!({"metadata": {"name": name}, "value": value, "description": description});
        ensure(ctx, "scheduling.k8s.io", "v1", "priorityclasses", class)
            .await
            .map_err(fail(name))?;
    }
    for i in 1..=config.nodes {
        let name = format!("node-{i}");
        ensure(
            ctx,
            "",
            "v1",
            "nodes",
            node(&name, &config.node_cpu, &config.node_memory),
        )
        .await
        .map_err(fail(&name))?;
    }
    // Before serving, so the first client already sees the `kubernetes` Service and `default`'s CA ConfigMap.
    published::resync(ctx).await;
    published::bootstrap_rbac(ctx).await;
    authentication::sync(ctx).await;
    crate::aggregator::start(ctx);
    tokio::spawn(published::run(ctx.clone()));
    tokio::spawn(authentication::run(ctx.clone()));
    tokio::spawn(crd::run(ctx.clone()));
    tokio::spawn(namespace::run(ctx.clone()));
    tokio::spawn(gc::run(ctx.clone()));
    tokio::spawn(serviceaccount::run(ctx.clone()));
    tokio::spawn(events::run(ctx.clone(), config.event_ttl));
    Ok(())
}

/// Storage key of namespaces.
pub(crate) fn namespaces_key() -> ResKey {
    ResKey::new("", "namespaces")
}
