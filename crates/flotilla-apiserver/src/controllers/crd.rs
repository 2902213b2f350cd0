//! The CRD naming, establishing and cleanup controller (spec §10.2, §10.3).
//!
//! Invariant: `Established=True` is written only after the CRD's resources are in the catalogue, so a
//! client that waits for the condition can use the resource at once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::catalog::ResKey;
use crate::context::Ctx;
use crate::crd::{CLEANUP_FINALIZER, resources};
use crate::meta;
use crate::registry::delete::DeleteOpts;
use crate::registry::{self, Outcome};
use crate::watch::hub::EventType;

/// Storage key of CRDs.
pub(crate) fn key() -> ResKey {
    ResKey::new("apiextensions.k8s.io", "customresourcedefinitions")
}

fn name_of(crd: &Value) -> String {
    meta::meta_str(crd, "name").unwrap_or("").to_string()
}

/// Serves every stored CRD before the listener opens (restarts serve custom resources at once).
pub(crate) fn register_stored(ctx: &Ctx) {
    for crd in ctx.store.list(&key(), None).1 {
        if accepted_names_conflict(ctx, &crd).is_none() {
            ctx.catalog.set_crd(&name_of(&crd), resources(&crd));
        }
    }
}

/// Whether another served resource of the group already uses this CRD's plural or kind.
fn accepted_names_conflict(ctx: &Ctx, crd: &Value) -> Option<(&'static str, String)> {
    let s = |p: &str| {
        crd.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (group, plural, kind, name) = (
        s("/spec/group"),
        s("/spec/names/plural"),
        s("/spec/names/kind"),
        name_of(crd),
    );
    for info in ctx.catalog.all() {
        if info.group != group {
            continue;
        }
        let owner = info.crd.as_ref().map(|c| name_of(c)).unwrap_or_default();
        if owner == name {
            continue;
        }
        if info.plural == plural {
            return Some(("PluralConflict", format!("\"{plural}\" is already in use")));
        }
        if info.kind == kind {
            return Some(("KindConflict", format!("\"{kind}\" is already in use")));
        }
    }
    None
}

fn condition(old: &Value, ctype: &str, status: &str, reason: &str, message: &str) -> Value {
    let previous = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(ctype))
        });
    let ltt = match previous {
        Some(p) if p.get("status").and_then(Value::as_str) == Some(status) => p
            .get("lastTransitionTime")
            .cloned()
            .unwrap_or_else(|| json!(meta::now())),
        _ => json!(meta::now()),
    };
    json!({"type": ctype, "status": status, "reason": reason, "message": message, "lastTransitionTime": ltt})
}

async fn write_status(ctx: &Ctx, name: &str, uid: &str, mut make: impl FnMut(&Value) -> Value) {
    let res = registry::guaranteed_update(&ctx.store, &key(), "", name, false, |cur| {
        let Some(cur) = cur.filter(|c| meta::meta_str(c, "uid") == Some(uid)) else {
            return Ok(Outcome::Unchanged);
        };
        let mut new = cur.as_ref().clone();
        new["status"] = make(cur);
        Ok(if meta::same(cur, &new) {
            Outcome::Unchanged
        } else {
            Outcome::Put(new)
        })
    })
    .await;
    if let Err(e) = res
        && e.code != 500
    {
        tracing::debug!(crd = name, error = %e, "CRD status update skipped");
    }
}

async fn reconcile(ctx: &Arc<Ctx>, crd: Arc<Value>, cleaning: &Arc<Mutex<HashSet<String>>>) {
    let name = name_of(&crd);
    let uid = meta::meta_str(&crd, "uid").unwrap_or("").to_string();
    if meta::is_deleting(&crd) {
        let fresh = cleaning
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.clone());
        if fresh {
            let (ctx, cleaning) = (ctx.clone(), cleaning.clone());
            tokio::spawn(async move {
                cleanup(&ctx, &name, &uid).await;
                cleaning
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&name);
            });
        }
        return;
    }
    let names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some((reason, message)) = accepted_names_conflict(ctx, &crd) {
        write_status(ctx, &name, &uid, |cur| {
            let mut st = cur.get("status").cloned().unwrap_or_else(|| json!({}));
            st["conditions"] = json!([
                condition(cur, "NamesAccepted", "False", reason, &message),
                condition(
                    cur,
                    "Established",
                    "False",
                    "NotAccepted",
                    "not all names are accepted"
                ),
            ]);
            st
        })
        .await;
        return;
    }
    // Serve first, then tell the world: Established must never be visible before the routes answer.
    ctx.catalog.set_crd(&name, resources(&crd));
    write_status(ctx, &name, &uid, |cur| {
        let mut st = cur.get("status").cloned().unwrap_or_else(|| json!({}));
        st["acceptedNames"] = names.clone();
        st["conditions"] = json!([
            condition(
                cur,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found"
            ),
            condition(
                cur,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted"
            ),
        ]);
        st
    })
    .await;
}

/// Deletes every custom resource of a deleting CRD, then releases the cleanup finalizer.
async fn cleanup(ctx: &Arc<Ctx>, name: &str, uid: &str) {
    write_status(ctx, name, uid, |cur| {
        let mut st = cur.get("status").cloned().unwrap_or_else(|| json!({}));
        let mut conds: Vec<Value> = st
            .get("conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        conds.retain(|c| c.get("type").and_then(Value::as_str) != Some("Terminating"));
        conds.push(condition(
            cur,
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        ));
        st["conditions"] = json!(conds);
        st
    })
    .await;
    let Some(info) = ctx
        .catalog
        .all()
        .into_iter()
        .find(|i| i.crd.as_ref().is_some_and(|c| name_of(c) == name))
    else {
        release(ctx, name, uid).await;
        return;
    };
    let mut events = ctx.store.hub().subscribe_all();
    loop {
        let (_, items) = ctx.store.list(&info.key(), None);
        if items.is_empty() {
            break;
        }
        for obj in items.iter().filter(|o| !meta::is_deleting(o)) {
            let ns = meta::meta_str(obj, "namespace").unwrap_or("");
            let n = meta::meta_str(obj, "name").unwrap_or("");
            let _ = registry::delete(ctx, &info, ns, n, &DeleteOpts::default()).await;
        }
        // Wait for progress (a finalizer removal) or re-check after a while.
        tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            _ = events.recv() => {}
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
    release(ctx, name, uid).await;
}

async fn release(ctx: &Ctx, name: &str, uid: &str) {
    // When only our finalizer is left the CRD disappears with this write: stop serving first, so nobody sees
    // the CRD gone while its resources still answer.
    let last = ctx
        .store
        .get(&key(), "", name)
        .is_some_and(|c| meta::finalizers(&c).iter().all(|f| f == CLEANUP_FINALIZER));
    if last {
        ctx.catalog.remove_crd(name);
    }
    let res = registry::guaranteed_update(&ctx.store, &key(), "", name, false, |cur| {
        let Some(cur) = cur.filter(|c| meta::meta_str(c, "uid") == Some(uid)) else {
            return Ok(Outcome::Unchanged);
        };
        let mut fins = meta::finalizers(cur);
        fins.retain(|f| f != CLEANUP_FINALIZER);
        if fins.is_empty() {
            return Ok(Outcome::Delete);
        }
        let mut new = cur.as_ref().clone();
        new["metadata"]["finalizers"] = json!(fins);
        Ok(Outcome::Put(new))
    })
    .await;
    if res.is_ok() {
        ctx.catalog.remove_crd(name);
    }
}

/// Runs the controller until shutdown.
pub(crate) async fn run(ctx: Arc<Ctx>) {
    let cleaning = Arc::new(Mutex::new(HashSet::new()));
    let mut rx = ctx.store.hub().subscribe(&key());
    for crd in ctx.store.list(&key(), None).1 {
        reconcile(&ctx, crd, &cleaning).await;
    }
    loop {
        let ev = tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            ev = rx.recv() => ev,
        };
        match ev {
            Ok(ev) if ev.kind == EventType::Deleted => ctx.catalog.remove_crd(&name_of(&ev.object)),
            Ok(ev) => reconcile(&ctx, ev.object.clone(), &cleaning).await,
            Err(RecvError::Lagged(_)) => {
                for crd in ctx.store.list(&key(), None).1 {
                    reconcile(&ctx, crd, &cleaning).await;
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}
