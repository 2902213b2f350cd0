//! Event expiry: Events of both APIs (`v1` and `events.k8s.io/v1`, one storage) disappear a TTL after their last
//! write, as kube-apiserver's etcd lease makes them (`--event-ttl`, one hour by default), so recorders cannot
//! grow the store without bound.
//!
//! The last write time is tracked in memory from the committed changes; Events found at start count from
//! then, which at worst keeps them one TTL longer than upstream would.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_store::hub::Event;
use tokio::time::Instant;

use super::gone_is_fine;
use super::runtime::{Next, Reconciler, Watches};
use crate::status::{ApiError, ApiResult};

use crate::context::Ctx;
use crate::write::delete::DeleteOpts;
use crate::write::{self, Outcome};
use flotilla_store::ObjRef;
use flotilla_store::ResKey;
use flotilla_store::hub::EventType;

// Both Event APIs read and write one storage (`crate::kinds::core::events`).
fn event_resources() -> [ResKey; 1] {
    [crate::resource::events_storage_key()]
}

/// Removes `events.k8s.io` Events a data dir kept in their own storage from before both APIs shared one: no
/// endpoint reaches them any more, so they would otherwise never expire.
pub(crate) async fn drop_unshared(ctx: &Ctx) -> ApiResult<()> {
    let old = ResKey::new(crate::resource::EVENTS_GROUP, "events");
    for obj in ctx.store.list(&old, None).1 {
        let r = obj_ref(&old, &obj);
        write::guaranteed_update(&ctx.store, &old, &r.namespace, &r.name, false, |cur| {
            Ok(if cur.is_some() {
                Outcome::Delete
            } else {
                Outcome::Unchanged
            })
        })
        .await?;
    }
    Ok(())
}

fn obj_ref(res: &ResKey, obj: &serde_json::Value) -> ObjRef {
    let s = |k: &str| {
        obj.pointer(&format!("/metadata/{k}"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    ObjRef {
        res: res.clone(),
        namespace: s("namespace"),
        name: s("name"),
    }
}

/// Event expiry; its keys are Events, each due one TTL after its last write.
pub(crate) struct Expiry {
    ttl: Duration,
    written: HashMap<ObjRef, Instant>,
}

impl Expiry {
    /// Expiry of Events not written for `ttl`.
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            written: HashMap::new(),
        }
    }
}

impl Reconciler for Expiry {
    type Key = ObjRef;

    fn name(&self) -> &'static str {
        "event-expiry"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(event_resources().to_vec())
    }

    /// Every stored Event, counted as written now: missed writes count as fresh, since expiring late is harmless
    /// and early is not.
    fn resync(&mut self, ctx: &Ctx) -> Vec<ObjRef> {
        let now = Instant::now();
        let mut keys = Vec::new();
        for res in &event_resources() {
            for obj in ctx.store.list(res, None).1 {
                let r = obj_ref(res, &obj);
                self.written.insert(r.clone(), now);
                keys.push(r);
            }
        }
        keys
    }

    fn observe(&mut self, _ctx: &Ctx, ev: &Event) -> Vec<ObjRef> {
        let r = obj_ref(&ev.res, &ev.object);
        if ev.kind == EventType::Deleted {
            self.written.remove(&r);
            return Vec::new();
        }
        self.written.insert(r.clone(), Instant::now());
        vec![r]
    }

    /// Deletes the Event once its TTL has passed since its last write; until then, asks to be back when it has.
    async fn reconcile(&self, ctx: &Arc<Ctx>, r: &ObjRef) -> Result<Next, ApiError> {
        let Some(written) = self.written.get(r) else {
            return Ok(Next::Done);
        };
        let age = written.elapsed();
        if age < self.ttl {
            return Ok(Next::After(self.ttl - age));
        }
        let Some(info) = ctx.catalog.by_key(&r.res) else {
            return Ok(Next::Done);
        };
        gone_is_fine(
            write::delete(ctx, &info, &r.namespace, &r.name, &DeleteOpts::default()).await,
        )?;
        Ok(Next::Done)
    }
}
