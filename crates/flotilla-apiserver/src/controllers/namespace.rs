//! The namespace controller (spec §9.1): deletes the content of a terminating namespace, honouring each
//! object's finalizers, then releases the `kubernetes` finalizer. (What every active namespace holds, the
//! `default` ServiceAccount and the CA ConfigMap, is kept by `super::published`.)

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::namespaces_key;
use crate::catalog::ResourceInfo;
use crate::context::Ctx;
use crate::meta;
use crate::registry::delete::DeleteOpts;
use crate::registry::{self, Outcome};
use crate::watch::hub::EventType;

fn namespaced_resources(ctx: &Ctx) -> Vec<Arc<ResourceInfo>> {
    let mut by_key = HashMap::new();
    for info in ctx.catalog.all().into_iter().filter(|i| i.namespaced) {
        by_key.entry(info.key()).or_insert(info);
    }
    by_key.into_values().collect()
}

async fn set_condition(ctx: &Ctx, name: &str, remaining: usize) {
    let _ = registry::guaranteed_update(&ctx.store, &namespaces_key(), "", name, false, |cur| {
            let Some(cur) = cur else { return Ok(Outcome::Unchanged) };
            let mut new = cur.as_ref().clone();
            let (status, reason, message) = if remaining > 0 {
                ("True", "SomeResourcesRemain", format!("Some resources are remaining: {remaining} objects"))
            } else {
                ("False", "ContentDeleted", "All content successfully removed".to_string())
            };
            let same = cur.pointer("/status/conditions/0/status").and_then(Value::as_str) == Some(status);
            if same {
                return Ok(Outcome::Unchanged);
            }
            new["status"]["conditions"] = json!([{"type": "NamespaceContentRemaining", "status": status, "reason": reason, "message": message, "lastTransitionTime": meta::now()}]);
            Ok(Outcome::Put(new))
        })
        .await;
}

async fn finalize(ctx: &Arc<Ctx>, name: &str) {
    let mut events = ctx.store.hub().subscribe_all();
    loop {
        let mut remaining = 0;
        for info in namespaced_resources(ctx) {
            let (_, items) = ctx.store.list(&info.key(), Some(name));
            remaining += items.len();
            for obj in items.iter().filter(|o| !meta::is_deleting(o)) {
                let n = meta::meta_str(obj, "name").unwrap_or("");
                let _ = registry::delete(ctx, &info, name, n, &DeleteOpts::default()).await;
            }
        }
        set_condition(ctx, name, remaining).await;
        if remaining == 0 {
            break;
        }
        tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            _ = events.recv() => {}
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
    let _ = registry::guaranteed_update(&ctx.store, &namespaces_key(), "", name, false, |cur| {
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
    .await;
}

fn handle(ctx: &Arc<Ctx>, ns: &Value, busy: &Arc<Mutex<HashSet<String>>>) {
    let name = meta::meta_str(ns, "name").unwrap_or("").to_string();
    if meta::is_deleting(ns)
        && busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.clone())
    {
        let (ctx, busy) = (ctx.clone(), busy.clone());
        tokio::spawn(async move {
            finalize(&ctx, &name).await;
            busy.lock().unwrap_or_else(|e| e.into_inner()).remove(&name);
        });
    }
}

/// Runs the controller until shutdown.
pub(crate) async fn run(ctx: Arc<Ctx>) {
    let busy = Arc::new(Mutex::new(HashSet::new()));
    let mut rx = ctx.store.hub().subscribe(&namespaces_key());
    for ns in ctx.store.list(&namespaces_key(), None).1 {
        handle(&ctx, &ns, &busy);
    }
    loop {
        let ev = tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            ev = rx.recv() => ev,
        };
        match ev {
            Ok(ev) if ev.kind == EventType::Deleted => {}
            Ok(ev) if ev.kind == EventType::Added || meta::is_deleting(&ev.object) => {
                handle(&ctx, &ev.object, &busy)
            }
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => {
                for ns in ctx.store.list(&namespaces_key(), None).1 {
                    if meta::is_deleting(&ns) {
                        handle(&ctx, &ns, &busy);
                    }
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}
