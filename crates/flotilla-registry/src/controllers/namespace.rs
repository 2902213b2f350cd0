//! The namespace controller, as kube-controller-manager's: a namespace marked for deletion has its content
//! deleted (each object honouring its own finalizers, each delete admitted as the controller's ServiceAccount's,
//! so that a validating webhook may refuse it), reports what remains in its `NamespaceContentRemaining`
//! condition, and once nothing remains its `kubernetes` finalizer is released, which removes it. (What every
//! active namespace holds, the `default` ServiceAccount and the CA ConfigMap, is kept by `super::published`.)

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_store::hub::{Event, EventType};
use serde_json::{Value, json};

use super::runtime::{Next, Reconciler, Watches};
use super::{Steps, acting_as, gone_is_fine, namespaces_key};
use crate::context::Ctx;
use crate::meta;
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use crate::write::delete::DeleteOpts;
use crate::write::{self, Outcome};

/// The ServiceAccount kube-controller-manager's namespace controller deletes a namespace's content as.
const NAMESPACE_CONTROLLER: &str = "namespace-controller";

/// The namespace controller; its keys are namespace names.
pub(crate) struct Namespaces;

fn namespaced_resources(ctx: &Ctx) -> Vec<Arc<ResourceInfo>> {
    let mut by_key = HashMap::new();
    for info in ctx.catalog.all().into_iter().filter(|i| i.namespaced) {
        by_key.entry(info.key()).or_insert(info);
    }
    by_key.into_values().collect()
}

fn is_terminating(ctx: &Ctx, name: &str) -> bool {
    ctx.store
        .get(&namespaces_key(), "", name)
        .is_some_and(|ns| meta::is_deleting(&ns))
}

async fn set_condition(ctx: &Ctx, name: &str, remaining: usize) -> ApiResult<()> {
    write::guaranteed_update(&ctx.store, &namespaces_key(), "", name, false, |cur| {
        let Some(cur) = cur else {
            return Ok(Outcome::Unchanged);
        };
        let mut new = cur.as_ref().clone();
        let (status, reason, message) = if remaining > 0 {
            (
                "True",
                "SomeResourcesRemain",
                format!("Some resources are remaining: {remaining} objects"),
            )
        } else {
            (
                "False",
                "ContentDeleted",
                "All content successfully removed".to_string(),
            )
        };
        let same = cur
            .pointer("/status/conditions/0/status")
            .and_then(Value::as_str)
            == Some(status);
        if same {
            return Ok(Outcome::Unchanged);
        }
        new["status"]["conditions"] = json!([{"type": "NamespaceContentRemaining", "status": status, "reason": reason, "message": message, "lastTransitionTime": meta::now()}]);
        Ok(Outcome::Put(new))
    })
    .await
    .map(|_| ())
}

/// Releases the `kubernetes` finalizer of an emptied namespace, which removes it when no other finalizer holds
/// it.
async fn release(ctx: &Ctx, name: &str) -> ApiResult<()> {
    write::guaranteed_update(&ctx.store, &namespaces_key(), "", name, false, |cur| {
        let Some(cur) = cur.filter(|c| meta::is_deleting(c)) else {
            return Ok(Outcome::Unchanged);
        };
        let mut new = cur.as_ref().clone();
        new["spec"]["finalizers"] = json!([]);
        if meta::finalizers(&new).is_empty() {
            return Ok(Outcome::Delete);
        }
        Ok(Outcome::Put(new))
    })
    .await
    .map(|_| ())
}

impl Reconciler for Namespaces {
    type Key = String;

    fn name(&self) -> &'static str {
        "namespace"
    }

    /// Every change: a terminating namespace is looked at again whenever its content changes (an object gone,
    /// a finalizer released).
    fn watches(&self) -> Watches {
        Watches::All
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&namespaces_key(), None)
            .1
            .iter()
            .filter(|ns| meta::is_deleting(ns))
            .filter_map(|ns| meta::meta_str(ns, "name").map(str::to_string))
            .collect()
    }

    fn observe(&mut self, ctx: &Ctx, ev: &Event) -> Vec<String> {
        if ev.res == namespaces_key() {
            let deleting = ev.kind != EventType::Deleted && meta::is_deleting(&ev.object);
            return deleting
                .then(|| meta::meta_str(&ev.object, "name").map(str::to_string))
                .flatten()
                .into_iter()
                .collect();
        }
        match meta::meta_str(&ev.object, "namespace") {
            Some(ns) if !ns.is_empty() && is_terminating(ctx, ns) => vec![ns.to_string()],
            _ => Vec::new(),
        }
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, name: &String) -> Result<Next, ApiError> {
        if !is_terminating(ctx, name) {
            return Ok(Next::Done);
        }
        let mut remaining = 0;
        let mut deletions = Steps::default();
        for info in namespaced_resources(ctx) {
            let (_, items) = ctx.store.list(&info.key(), Some(name));
            remaining += items.len();
            for obj in items.iter().filter(|o| !meta::is_deleting(o)) {
                let n = meta::meta_str(obj, "name").unwrap_or("");
                let opts = DeleteOpts {
                    requester: Some(acting_as(
                        NAMESPACE_CONTROLLER,
                        json!({"propagationPolicy": "Background"}),
                    )),
                    ..DeleteOpts::default()
                };
                deletions.note(gone_is_fine(
                    write::delete(ctx, &info, name, n, &opts).await,
                ));
            }
        }
        set_condition(ctx, name, remaining).await?;
        deletions.finish()?;
        if remaining == 0 {
            release(ctx, name).await?;
        }
        Ok(Next::Done)
    }
}
