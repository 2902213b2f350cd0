//! The CRD naming, establishing and cleanup controller, as apiextensions-apiserver's: a CRD whose plural and
//! kind no other resource of its group uses gets `NamesAccepted` and `Established` and its resources are served;
//! one whose names conflict gets `NamesAccepted=False` (`PluralConflict` or `KindConflict`) and is not served.
//! A CRD marked for deletion is `Terminating` (`InstanceDeletionInProgress`) while its custom resources are
//! deleted, and its `customresourcecleanup.apiextensions.k8s.io` finalizer is released once none remains.
//!
//! Invariant: `Established=True` is written only after the CRD's resources are in the catalogue, so a
//! client that waits for the condition can use the resource at once.

use std::sync::Arc;

use serde_json::{Value, json};

use super::runtime::{Next, Reconciler, Watches};
use super::{Steps, gone_is_fine};
use crate::context::Ctx;
use crate::kinds::platform::crd::{CLEANUP_FINALIZER, key, resources};
use crate::meta;
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use crate::write::delete::DeleteOpts;
use crate::write::{self, Outcome};
use flotilla_store::hub::Event;

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

async fn write_status(
    ctx: &Ctx,
    name: &str,
    uid: &str,
    mut make: impl FnMut(&Value) -> Value,
) -> ApiResult<()> {
    write::guaranteed_update(&ctx.store, &key(), "", name, false, |cur| {
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
    .await
    .map(|_| ())
}

/// Names, establishes and serves a CRD that is not being deleted.
async fn establish(ctx: &Ctx, crd: &Arc<Value>) -> ApiResult<()> {
    let name = name_of(crd);
    let uid = meta::meta_str(crd, "uid").unwrap_or("").to_string();
    let names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some((reason, message)) = accepted_names_conflict(ctx, crd) {
        return write_status(ctx, &name, &uid, |cur| {
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
    }
    // Serve first, then tell the world: Established must never be visible before the routes answer.
    ctx.catalog.set_crd(&name, resources(crd));
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
    .await
}

/// One step of a deleting CRD's cleanup: `Terminating`, every custom resource deleted, and once none remains,
/// the cleanup finalizer released. The deletions' changes bring the CRD back here until it is empty.
async fn cleanup(ctx: &Ctx, name: &str, uid: &str) -> ApiResult<()> {
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
    .await?;
    let Some(info) = served(ctx, name) else {
        return release(ctx, name, uid).await;
    };
    let (_, items) = ctx.store.list(&info.key(), None);
    if items.is_empty() {
        return release(ctx, name, uid).await;
    }
    let mut deletions = Steps::default();
    for obj in items.iter().filter(|o| !meta::is_deleting(o)) {
        let ns = meta::meta_str(obj, "namespace").unwrap_or("");
        let n = meta::meta_str(obj, "name").unwrap_or("");
        deletions.note(gone_is_fine(
            write::delete(ctx, &info, ns, n, &DeleteOpts::default()).await,
        ));
    }
    deletions.finish()
}

/// A resource the catalogue serves for the CRD `name`.
fn served(ctx: &Ctx, name: &str) -> Option<Arc<ResourceInfo>> {
    ctx.catalog
        .all()
        .into_iter()
        .find(|i| i.crd.as_ref().is_some_and(|c| name_of(c) == name))
}

async fn release(ctx: &Ctx, name: &str, uid: &str) -> ApiResult<()> {
    // When only our finalizer is left the CRD disappears with this write: stop serving first, so nobody sees
    // the CRD gone while its resources still answer.
    let last = ctx
        .store
        .get(&key(), "", name)
        .is_some_and(|c| meta::finalizers(&c).iter().all(|f| f == CLEANUP_FINALIZER));
    if last {
        ctx.catalog.remove_crd(name);
    }
    write::guaranteed_update(&ctx.store, &key(), "", name, false, |cur| {
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
    .await?;
    ctx.catalog.remove_crd(name);
    Ok(())
}

/// The CRD controller; its keys are CRD names.
pub(crate) struct Crds;

impl Reconciler for Crds {
    type Key = String;

    fn name(&self) -> &'static str {
        "customresourcedefinition"
    }

    /// Every change: CRDs, and the custom resources of a CRD being deleted (its cleanup goes on as they go).
    fn watches(&self) -> Watches {
        Watches::All
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&key(), None)
            .1
            .iter()
            .map(|crd| name_of(crd))
            .collect()
    }

    fn observe(&mut self, ctx: &Ctx, ev: &Event) -> Vec<String> {
        if ev.res == key() {
            return vec![name_of(&ev.object)];
        }
        let Some(crd) = ctx.catalog.by_key(&ev.res).and_then(|i| i.crd.clone()) else {
            return Vec::new();
        };
        let name = name_of(&crd);
        let deleting = ctx
            .store
            .get(&key(), "", &name)
            .is_some_and(|c| meta::is_deleting(&c));
        if deleting { vec![name] } else { Vec::new() }
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, name: &String) -> Result<Next, ApiError> {
        let Some(crd) = ctx.store.get(&key(), "", name) else {
            ctx.catalog.remove_crd(name);
            return Ok(Next::Done);
        };
        if meta::is_deleting(&crd) {
            let uid = meta::meta_str(&crd, "uid").unwrap_or("").to_string();
            cleanup(ctx, name, &uid).await?;
        } else {
            establish(ctx, &crd).await?;
        }
        Ok(Next::Done)
    }
}
