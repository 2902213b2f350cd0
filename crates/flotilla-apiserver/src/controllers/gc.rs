//! The garbage collector (spec §9.2): deletes dependents whose owners are all gone, and completes
//! foreground and orphan deletions of owners.
//!
//! It keeps an index from owner uid to dependents, fed by every committed event, and resolves owners by
//! uid in the store: an object with the owner's name but another uid counts as absent.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::context::Ctx;
use crate::meta;
use crate::registry::delete::{DeleteOpts, FOREGROUND, ORPHAN, Propagation};
use crate::registry::{self, Outcome};
use crate::store::ObjRef;
use crate::watch::hub::{Event, EventType};

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

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Work {
    /// Check whether a dependent still has an owner.
    Dependent(ObjRef),
    /// Advance a deleting owner's foreground or orphan finalizer.
    Owner(ObjRef),
}

#[derive(Default)]
struct Gc {
    dependents: HashMap<String, HashSet<ObjRef>>,
    queue: VecDeque<Work>,
    queued: HashSet<Work>,
}

impl Gc {
    fn push(&mut self, w: Work) {
        if self.queued.insert(w.clone()) {
            self.queue.push_back(w);
        }
    }

    fn resync(&mut self, ctx: &Ctx) {
        self.dependents.clear();
        for (r, obj) in ctx.store.all_objects() {
            let os = owners(&obj);
            if !os.is_empty() {
                self.push(Work::Dependent(r.clone()));
            }
            for o in os {
                self.dependents.entry(o.uid).or_default().insert(r.clone());
            }
            let fins = meta::finalizers(&obj);
            if meta::is_deleting(&obj) && fins.iter().any(|f| f == FOREGROUND || f == ORPHAN) {
                self.push(Work::Owner(r));
            }
        }
    }

    fn observe(&mut self, ctx: &Ctx, ev: &Event) {
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
                self.push(Work::Dependent(r.clone()));
            }
            let fins = meta::finalizers(&ev.object);
            if meta::is_deleting(&ev.object) && fins.iter().any(|f| f == FOREGROUND || f == ORPHAN)
            {
                self.push(Work::Owner(r.clone()));
            }
        } else if let Some(uid) = meta::meta_str(&ev.object, "uid")
            && let Some(deps) = self.dependents.get(uid)
        {
            for d in deps.clone() {
                self.push(Work::Dependent(d));
            }
        }
        // A dependent changing or going away may unblock an owner waiting in foreground deletion.
        for o in prev_owners.iter().chain(new_owners.iter()) {
            if let Some(or) = ctx.store.by_uid(&o.uid) {
                self.push(Work::Owner(or));
            }
        }
    }

    async fn process(&mut self, ctx: &Ctx) {
        while let Some(w) = self.queue.pop_front() {
            self.queued.remove(&w);
            match w {
                Work::Dependent(r) => check_dependent(ctx, &r).await,
                Work::Owner(r) => {
                    let deps: Vec<ObjRef> = ctx
                        .store
                        .get(&r.res, &r.namespace, &r.name)
                        .and_then(|o| meta::meta_str(&o, "uid").map(str::to_string))
                        .and_then(|uid| self.dependents.get(&uid).cloned())
                        .map(|s| s.into_iter().collect())
                        .unwrap_or_default();
                    process_owner(ctx, &r, &deps).await;
                }
            }
        }
    }
}

async fn check_dependent(ctx: &Ctx, r: &ObjRef) {
    let Some(obj) = ctx.store.get(&r.res, &r.namespace, &r.name) else {
        return;
    };
    let os = owners(&obj);
    if os.is_empty() || meta::is_deleting(&obj) {
        return;
    }
    let present = os.iter().any(|o| {
        ctx.store
            .by_uid(&o.uid)
            .is_some_and(|or| or.namespace.is_empty() || or.namespace == r.namespace)
    });
    if present {
        return;
    }
    let Some(info) = ctx.catalog.by_key(&r.res) else {
        return;
    };
    if !info.namespaced && os.iter().any(|_| false) {
        return;
    }
    let _ = registry::delete(ctx, &info, &r.namespace, &r.name, &DeleteOpts::default()).await;
}

async fn remove_finalizer(ctx: &Ctx, r: &ObjRef, fin: &str) {
    let _ = registry::guaranteed_update(&ctx.store, &r.res, &r.namespace, &r.name, false, |cur| {
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
    .await;
}

async fn process_owner(ctx: &Ctx, r: &ObjRef, deps: &[ObjRef]) {
    let Some(owner) = ctx.store.get(&r.res, &r.namespace, &r.name) else {
        return;
    };
    if !meta::is_deleting(&owner) {
        return;
    }
    let uid = meta::meta_str(&owner, "uid").unwrap_or("").to_string();
    let fins = meta::finalizers(&owner);
    if fins.iter().any(|f| f == ORPHAN) {
        for d in deps {
            let _ = registry::guaranteed_update(
                &ctx.store,
                &d.res,
                &d.namespace,
                &d.name,
                false,
                |cur| {
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
                },
            )
            .await;
        }
        remove_finalizer(ctx, r, ORPHAN).await;
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
                    ..DeleteOpts::default()
                };
                let _ = registry::delete(ctx, &info, &d.namespace, &d.name, &opts).await;
            }
            if let Some(still) = ctx.store.get(&d.res, &d.namespace, &d.name)
                && owners(&still).iter().any(|o| o.uid == uid && o.block)
            {
                blocking = true;
            }
        }
        if !blocking {
            remove_finalizer(ctx, r, FOREGROUND).await;
        }
    }
}

/// Runs the collector until shutdown.
pub(crate) async fn run(ctx: Arc<Ctx>) {
    let mut rx = ctx.store.hub().subscribe_all();
    let mut gc = Gc::default();
    gc.resync(&ctx);
    loop {
        gc.process(&ctx).await;
        let ev = tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            ev = rx.recv() => ev,
        };
        match ev {
            Ok(ev) => {
                gc.observe(&ctx, &ev);
                // Fold whatever else is queued into this round.
                loop {
                    match rx.try_recv() {
                        Ok(ev) => gc.observe(&ctx, &ev),
                        Err(TryRecvError::Lagged(_)) => gc.resync(&ctx),
                        Err(_) => break,
                    }
                }
            }
            Err(RecvError::Lagged(_)) => gc.resync(&ctx),
            Err(RecvError::Closed) => return,
        }
    }
}
