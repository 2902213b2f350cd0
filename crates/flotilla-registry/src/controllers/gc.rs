//! The garbage collector, as kube-controller-manager's: deletes dependents whose owners are all gone (an owner is
//! resolved by uid, so an object with the owner's name but another uid counts as absent; a namespaced owner only
//! owns dependents of its own namespace), and completes the deletions of owners that wait for their dependents:
//! `orphan` (the owner references to it are removed from every dependent, then the finalizer) and
//! `foregroundDeletion` (every dependent is deleted in the foreground too, and the finalizer is released once no
//! dependent that blocks its owner's deletion remains).
//!
//! It keeps an index from owner uid to dependents, fed by every committed change.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::runtime::{Next, Reconciler, Watches};
use super::{acting_as, gone_is_fine};
use crate::context::Ctx;
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::write::delete::{DeleteOpts, FOREGROUND, ORPHAN, Propagation};
use crate::write::{self, Outcome};
use flotilla_store::ObjRef;
use flotilla_store::hub::{Event, EventType};

/// The ServiceAccount kube-controller-manager's garbage collector deletes dependents as (its deletes are
/// admitted like any client's).
const GARBAGE_COLLECTOR: &str = "generic-garbage-collector";

/// One owner reference.
struct OwnerRef {
    uid: String,
    block: bool,
}

fn owners(obj: &Value) -> Vec<OwnerRef> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| {
                    Some(OwnerRef {
                        uid: r.get("uid")?.as_str()?.to_string(),
                        block: r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn obj_ref(ev: &Event) -> ObjRef {
    ObjRef {
        res: ev.res.clone(),
        namespace: meta::meta_str(&ev.object, "namespace")
            .unwrap_or("")
            .to_string(),
        name: meta::meta_str(&ev.object, "name").unwrap_or("").to_string(),
    }
}

/// What the collector looks at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Work {
    /// Check whether a dependent still has an owner.
    Dependent(ObjRef),
    /// Advance a deleting owner's foreground or orphan finalizer.
    Owner(ObjRef),
}

/// The garbage collector: the index from owner uid to dependents.
#[derive(Default)]
pub(crate) struct Gc {
    dependents: HashMap<String, HashSet<ObjRef>>,
}

impl Reconciler for Gc {
    type Key = Work;

    fn name(&self) -> &'static str {
        "garbage-collector"
    }

    fn watches(&self) -> Watches {
        Watches::All
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<Work> {
        self.dependents.clear();
        let mut work = Vec::new();
        for (r, obj) in ctx.store.all_objects() {
            let os = owners(&obj);
            if !os.is_empty() {
                work.push(Work::Dependent(r.clone()));
            }
            for o in os {
                self.dependents.entry(o.uid).or_default().insert(r.clone());
            }
            if waits_for_dependents(&obj) {
                work.push(Work::Owner(r));
            }
        }
        work
    }

    fn observe(&mut self, ctx: &Ctx, ev: &Event) -> Vec<Work> {
        let mut work = Vec::new();
        let r = obj_ref(ev);
        let prev_owners = ev.prev.as_deref().map(owners).unwrap_or_default();
        for o in &prev_owners {
            if let Some(set) = self.dependents.get_mut(&o.uid) {
                set.remove(&r);
                if set.is_empty() {
                    self.dependents.remove(&o.uid);
                }
            }
        }
        let new_owners = owners(&ev.object);
        if ev.kind != EventType::Deleted {
            for o in &new_owners {
                self.dependents
                    .entry(o.uid.clone())
                    .or_default()
                    .insert(r.clone());
            }
            if !new_owners.is_empty() {
                work.push(Work::Dependent(r.clone()));
            }
            if waits_for_dependents(&ev.object) {
                work.push(Work::Owner(r.clone()));
            }
        } else if let Some(uid) = meta::meta_str(&ev.object, "uid")
            && let Some(deps) = self.dependents.get(uid)
        {
            work.extend(deps.iter().cloned().map(Work::Dependent));
        }
        // A dependent changing or going away may unblock an owner waiting in foreground deletion.
        for o in prev_owners.iter().chain(new_owners.iter()) {
            if let Some(or) = ctx.store.by_uid(&o.uid) {
                work.push(Work::Owner(or));
            }
        }
        work
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, work: &Work) -> Result<Next, ApiError> {
        match work {
            Work::Dependent(r) => check_dependent(ctx, r).await?,
            Work::Owner(r) => {
                let deps: Vec<ObjRef> = ctx
                    .store
                    .get(&r.res, &r.namespace, &r.name)
                    .and_then(|o| meta::meta_str(&o, "uid").map(str::to_string))
                    .and_then(|uid| self.dependents.get(&uid).cloned())
                    .map(|s| s.into_iter().collect())
                    .unwrap_or_default();
                process_owner(ctx, r, &deps).await?;
            }
        }
        Ok(Next::Done)
    }
}

/// Whether `obj` is being deleted and waits for its dependents (orphan or foreground deletion).
fn waits_for_dependents(obj: &Value) -> bool {
    meta::is_deleting(obj)
        && meta::finalizers(obj)
            .iter()
            .any(|f| f == FOREGROUND || f == ORPHAN)
}

async fn check_dependent(ctx: &Ctx, r: &ObjRef) -> ApiResult<()> {
    let Some(obj) = ctx.store.get(&r.res, &r.namespace, &r.name) else {
        return Ok(());
    };
    let os = owners(&obj);
    if os.is_empty() || meta::is_deleting(&obj) {
        return Ok(());
    }
    let present = os.iter().any(|o| {
        ctx.store
            .by_uid(&o.uid)
            .is_some_and(|or| or.namespace.is_empty() || or.namespace == r.namespace)
    });
    if present {
        return Ok(());
    }
    let Some(info) = ctx.catalog.by_key(&r.res) else {
        return Ok(());
    };
    let opts = DeleteOpts {
        requester: Some(acting_as(
            GARBAGE_COLLECTOR,
            json!({"propagationPolicy": "Background"}),
        )),
        ..DeleteOpts::default()
    };
    gone_is_fine(write::delete(ctx, &info, &r.namespace, &r.name, &opts).await)
}

async fn remove_finalizer(ctx: &Ctx, r: &ObjRef, fin: &str) -> ApiResult<()> {
    write::guaranteed_update(&ctx.store, &r.res, &r.namespace, &r.name, false, |cur| {
        let Some(cur) = cur else {
            return Ok(Outcome::Unchanged);
        };
        let mut fins = meta::finalizers(cur);
        if !fins.iter().any(|f| f == fin) {
            return Ok(Outcome::Unchanged);
        }
        fins.retain(|f| f != fin);
        if fins.is_empty() && meta::is_deleting(cur) {
            return Ok(Outcome::Delete);
        }
        let mut new = cur.as_ref().clone();
        new["metadata"]["finalizers"] = json!(fins);
        meta::normalize(&mut new);
        Ok(Outcome::Put(new))
    })
    .await
    .map(|_| ())
}

/// Advances an owner's orphan or foreground deletion. The orphan finalizer is removed only once every
/// dependent has been released, so a dependent whose release failed never keeps an owner reference to an
/// owner that is gone.
async fn process_owner(ctx: &Ctx, r: &ObjRef, deps: &[ObjRef]) -> ApiResult<()> {
    let Some(owner) = ctx.store.get(&r.res, &r.namespace, &r.name) else {
        return Ok(());
    };
    if !meta::is_deleting(&owner) {
        return Ok(());
    }
    let uid = meta::meta_str(&owner, "uid").unwrap_or("").to_string();
    let fins = meta::finalizers(&owner);
    if fins.iter().any(|f| f == ORPHAN) {
        for d in deps {
            write::guaranteed_update(&ctx.store, &d.res, &d.namespace, &d.name, false, |cur| {
                let Some(cur) = cur else {
                    return Ok(Outcome::Unchanged);
                };
                let mut new = cur.as_ref().clone();
                if let Some(refs) = new
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|o| o.get("uid").and_then(Value::as_str) != Some(uid.as_str()));
                }
                meta::normalize(&mut new);
                Ok(if meta::same(cur, &new) {
                    Outcome::Unchanged
                } else {
                    Outcome::Put(new)
                })
            })
            .await?;
        }
        remove_finalizer(ctx, r, ORPHAN).await?;
    } else if fins.iter().any(|f| f == FOREGROUND) {
        let mut blocking = false;
        for d in deps {
            let Some(dep) = ctx.store.get(&d.res, &d.namespace, &d.name) else {
                continue;
            };
            let Some(info) = ctx.catalog.by_key(&d.res) else {
                continue;
            };
            if !meta::is_deleting(&dep) {
                let opts = DeleteOpts {
                    propagation: Propagation::Foreground,
                    requester: Some(acting_as(
                        GARBAGE_COLLECTOR,
                        json!({"propagationPolicy": "Foreground"}),
                    )),
                    ..DeleteOpts::default()
                };
                gone_is_fine(write::delete(ctx, &info, &d.namespace, &d.name, &opts).await)?;
            }
            if let Some(still) = ctx.store.get(&d.res, &d.namespace, &d.name)
                && owners(&still).iter().any(|o| o.uid == uid && o.block)
            {
                blocking = true;
            }
        }
        if !blocking {
            remove_finalizer(ctx, r, FOREGROUND).await?;
        }
    }
    Ok(())
}
