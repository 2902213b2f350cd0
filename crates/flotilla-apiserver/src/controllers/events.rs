//! Event expiry (spec §9.4): Events of both APIs (`v1` and `events.k8s.io/v1`) disappear a TTL after their last
//! write, as the real server's etcd lease does (one hour by default), so recorders cannot grow the store
//! without bound.
//!
//! The last write time is tracked in memory from the committed events; Events found at start count from
//! then, which at worst keeps them one TTL longer than upstream would.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::catalog::ResKey;
use crate::context::Ctx;
use crate::registry::delete::DeleteOpts;
use crate::registry::{self, Outcome};
use crate::store::ObjRef;
use crate::watch::hub::EventType;

// Both Event APIs read and write one storage (`crate::event_views`).
fn event_resources() -> [ResKey; 1] {
    [crate::event_views::storage_key()]
}

/// Removes `events.k8s.io` Events a data dir kept in their own storage from before both APIs shared one: no
/// endpoint reaches them any more, so they would otherwise never expire.
async fn drop_unshared(ctx: &Ctx) {
    let old = ResKey::new(crate::event_views::EVENTS_GROUP, "events");
    for obj in ctx.store.list(&old, None).1 {
        let r = obj_ref(&old, &obj);
        let _ =
            registry::guaranteed_update(&ctx.store, &old, &r.namespace, &r.name, false, |cur| {
                Ok(if cur.is_some() {
                    Outcome::Delete
                } else {
                    Outcome::Unchanged
                })
            })
            .await;
    }
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

/// Deletes every Event not written for `ttl`, until shutdown.
pub(crate) async fn run(ctx: Arc<Ctx>, ttl: Duration) {
    drop_unshared(&ctx).await;
    let resources = event_resources();
    let mut rx = ctx.store.hub().subscribe_all();
    let mut written: HashMap<ObjRef, Instant> = HashMap::new();
    let start = Instant::now();
    for res in &resources {
        for obj in ctx.store.list(res, None).1 {
            written.insert(obj_ref(res, &obj), start);
        }
    }
    // Sweep often enough that an Event outlives its TTL by at most a quarter of it (capped at a minute).
    let mut sweep =
        tokio::time::interval((ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(60)));
    loop {
        tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            ev = rx.recv() => match ev {
                Ok(ev) if resources.contains(&ev.res) => {
                    let r = obj_ref(&ev.res, &ev.object);
                    if ev.kind == EventType::Deleted {
                        written.remove(&r);
                    } else {
                        written.insert(r, Instant::now());
                    }
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => {
                    // Missed writes count as fresh: expiring late is harmless, early is not.
                    let now = Instant::now();
                    for res in &resources {
                        for obj in ctx.store.list(res, None).1 {
                            written.insert(obj_ref(res, &obj), now);
                        }
                    }
                }
                Err(RecvError::Closed) => return,
            },
            _ = sweep.tick() => {
                let expired: Vec<ObjRef> = written
                    .iter()
                    .filter(|(_, at)| at.elapsed() >= ttl)
                    .map(|(r, _)| r.clone())
                    .collect();
                for r in expired {
                    written.remove(&r);
                    let Some(info) = ctx.catalog.by_key(&r.res) else { continue };
                    let _ = registry::delete(&ctx, &info, &r.namespace, &r.name, &DeleteOpts::default()).await;
                }
            }
        }
    }
}
