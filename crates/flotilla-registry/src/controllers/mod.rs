//! Internal controllers a real cluster runs in kube-controller-manager and apiextensions: bootstrap objects, the
//! CA ConfigMaps and `kubernetes` Service every cluster publishes, CRD naming/establishing/cleanup, namespace
//! lifecycle, garbage collection, ServiceAccount token secrets, Event expiry, kube-apiserver's default RBAC
//! policy, ClusterRole aggregation, and the bootstrap signer and token cleaner of bootstrap tokens. They read the store and write
//! through the write path (`crate::write`), as any other writer does. (kube-apiserver's own controllers, the
//! front-proxy trust ConfigMap and the aggregator's, belong to the server.)

pub(crate) mod bootstrap_tokens;
pub(crate) mod clusterrole_aggregation;
pub(crate) mod crd;
pub(crate) mod events;
pub(crate) mod gc;
pub(crate) mod namespace;
pub(crate) mod published;
pub(crate) mod rbac_defaults;
pub mod runtime;
pub(crate) mod serviceaccount;

use std::sync::Arc;

use serde_json::{Value, json};

use std::time::Duration;

use flotilla_store::ResKey;

use crate::context::Ctx;
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::write::{self, Outcome};

/// What the internal controllers bootstrap and how long Events live.
#[derive(Debug, Clone)]
pub struct Config {
    /// Number of Node objects to seed (`node-1` .. `node-N`).
    pub nodes: usize,
    /// Allocatable CPU of each seeded node.
    pub node_cpu: String,
    /// Allocatable memory of each seeded node.
    pub node_memory: String,
    /// How long an Event lives after its last write (upstream's default: one hour).
    pub event_ttl: Duration,
}

/// A built-in object the server could not create before serving.
#[derive(Debug, thiserror::Error)]
#[error("failed to bootstrap {what}: {message}")]
pub struct BootstrapError {
    /// The object.
    pub what: String,
    /// Why.
    pub message: String,
}

/// Creates an object of the resource `group/version/plural` if it is missing, through the write path's create
/// preparation; a resource the catalogue does not serve is skipped.
///
/// # Errors
/// The create's, but for the object existing already.
pub async fn ensure(
    ctx: &Ctx,
    group: &str,
    version: &str,
    plural: &str,
    obj: Value,
) -> ApiResult<()> {
    match ctx.catalog.get(group, version, plural) {
        Some(info) => write::ensure(ctx, &info, obj).await,
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
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "simulated node is ready", "lastHeartbeatTime": meta::now(), "lastTransitionTime": meta::now()}],
            "addresses": [{"type": "Hostname", "address": name}],
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "v1.36.0+flotilla", "containerRuntimeVersion": "flotilla://simulated", "kernelVersion": "", "osImage": "flotilla", "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": ""},
        },
    })
}

/// Bootstraps built-in objects, registers stored CRDs and starts every internal controller.
///
/// # Errors
/// A [`BootstrapError`] naming the built-in object that could not be created.
pub async fn start(ctx: &Arc<Ctx>, config: &Config) -> Result<(), BootstrapError> {
    let fail = |what: &str| {
        let what = what.to_string();
        move |e: ApiError| BootstrapError {
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
    runtime::once(ctx, &mut published::Publisher).await;
    if let Err(e) = rbac_defaults::ensure(ctx).await {
        tracing::warn!(error = %e, "failed to create kube-apiserver's bootstrap RBAC objects");
    }
    tokio::spawn(runtime::run(ctx.clone(), published::Publisher));
    tokio::spawn(runtime::run(ctx.clone(), crd::Crds));
    tokio::spawn(runtime::run(ctx.clone(), namespace::Namespaces));
    tokio::spawn(runtime::run(ctx.clone(), gc::Gc::default()));
    tokio::spawn(runtime::run(ctx.clone(), serviceaccount::Tokens));
    tokio::spawn(runtime::run(
        ctx.clone(),
        clusterrole_aggregation::Aggregation,
    ));
    tokio::spawn(runtime::run(ctx.clone(), bootstrap_tokens::Signer));
    tokio::spawn(runtime::run(ctx.clone(), bootstrap_tokens::Cleaner));
    let (expiry_ctx, ttl) = (ctx.clone(), config.event_ttl);
    tokio::spawn(async move {
        if let Err(e) = events::drop_unshared(&expiry_ctx).await {
            tracing::warn!(error = %e, "failed to remove Events kept in their old storage");
        }
        runtime::run(expiry_ctx, events::Expiry::new(ttl)).await;
    });
    Ok(())
}

/// Sets each of `fields` (`None`: absent) on `ns/name` of `res` where the stored object differs; an object
/// being deleted is left alone.
///
/// # Errors
/// The write's.
pub async fn restore(
    ctx: &Ctx,
    res: &ResKey,
    ns: &str,
    name: &str,
    fields: &[(&str, Option<&Value>)],
) -> ApiResult<()> {
    write::guaranteed_update(&ctx.store, res, ns, name, false, |cur| {
        let Some(cur) = cur.filter(|c| !meta::is_deleting(c)) else {
            return Ok(Outcome::Unchanged);
        };
        if fields.iter().all(|(k, want)| cur.get(*k) == *want) {
            return Ok(Outcome::Unchanged);
        }
        let mut new = cur.as_ref().clone();
        if let Some(obj) = new.as_object_mut() {
            for (k, want) in fields {
                match want {
                    Some(v) => obj.insert((*k).to_string(), (*v).clone()),
                    None => obj.remove(*k),
                };
            }
        }
        Ok(Outcome::Put(new))
    })
    .await
    .map(|_| ())
}

/// The first failure of several steps that each run whatever became of the others (a controller that keeps
/// several objects keeps the rest when one write fails).
#[derive(Default)]
pub(crate) struct Steps(Option<ApiError>);

impl Steps {
    /// Notes a step's result.
    pub(crate) fn note<T>(&mut self, result: ApiResult<T>) {
        if let Err(e) = result {
            self.0.get_or_insert(e);
        }
    }

    /// The first failure, if any.
    pub(crate) fn finish(self) -> ApiResult<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// A deletion whose object is already gone did what it was for.
pub(crate) fn gone_is_fine<T>(result: ApiResult<T>) -> ApiResult<()> {
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Who a controller that kube-controller-manager runs writes as: its ServiceAccount in `kube-system`. Its writes
/// go through admission like any client's, so a validating webhook judges them as it judges anyone's (Karmada's
/// deletion protection refuses the namespace controller's delete of a protected object, as on a real cluster).
pub(crate) fn acting_as(controller: &str, options: Value) -> write::Requester {
    write::Requester {
        user: crate::auth::UserInfo::service_account("kube-system", controller, ""),
        options,
    }
}

/// Storage key of namespaces.
pub fn namespaces_key() -> ResKey {
    ResKey::new("", "namespaces")
}
