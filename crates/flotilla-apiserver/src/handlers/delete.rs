//! delete and deletecollection (spec §7.10, §7.11): preconditions, propagation finalizers, deletion marking.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::filter::Filter;
use super::read::list_response;
use super::{Req, body, object_response, served};
use crate::catalog::ResourceInfo;
use crate::kinds;
use crate::meta;
use crate::server::Ctx;
use crate::status::{ApiError, ApiResult, json_response};
use crate::store::{Outcome, Written};

/// Finalizer the garbage collector honours for foreground deletion.
pub const FOREGROUND: &str = "foregroundDeletion";
/// Finalizer the garbage collector honours for orphaning.
pub const ORPHAN: &str = "orphan";

/// Propagation policy of a deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Delete now; dependents later.
    Background,
    /// Dependents first.
    Foreground,
    /// Leave dependents.
    Orphan,
}

/// Decoded DeleteOptions.
#[derive(Debug, Clone)]
pub struct DeleteOpts {
    /// Propagation.
    pub propagation: Propagation,
    /// uid precondition.
    pub uid: Option<String>,
    /// resourceVersion precondition.
    pub rv: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

impl Default for DeleteOpts {
    fn default() -> Self {
        Self {
            propagation: Propagation::Background,
            uid: None,
            rv: None,
            dry_run: false,
        }
    }
}

fn propagation(policy: Option<&str>, orphan: Option<bool>) -> ApiResult<Propagation> {
    match policy.filter(|p| !p.is_empty()) {
        Some("Background") => Ok(Propagation::Background),
        Some("Foreground") => Ok(Propagation::Foreground),
        Some("Orphan") => Ok(Propagation::Orphan),
        Some(p) => Err(ApiError::invalid_options(
            "DeleteOptions",
            "propagationPolicy",
            &format!(
                "Unsupported value: \"{p}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            ),
        )),
        None => Ok(if orphan == Some(true) {
            Propagation::Orphan
        } else {
            Propagation::Background
        }),
    }
}

/// DeleteOptions from the body when present, else from the query (spec §7.10).
pub fn parse_opts(req: &Req) -> ApiResult<DeleteOpts> {
    if let Some(b) = body::decode_delete_options(req)? {
        let dry: Vec<&str> = b
            .get("dryRun")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(bad) = dry.iter().find(|d| **d != "All") {
            return Err(ApiError::invalid_options(
                "DeleteOptions",
                "dryRun",
                &format!("Unsupported value: \"{bad}\": supported values: \"All\""),
            ));
        }
        let s = |p: &str| b.pointer(p).and_then(Value::as_str).map(str::to_string);
        return Ok(DeleteOpts {
            propagation: propagation(
                b.get("propagationPolicy").and_then(Value::as_str),
                b.get("orphanDependents").and_then(Value::as_bool),
            )?,
            uid: s("/preconditions/uid"),
            rv: s("/preconditions/resourceVersion"),
            dry_run: !dry.is_empty(),
        });
    }
    Ok(DeleteOpts {
        propagation: propagation(
            req.query.get("propagationPolicy"),
            req.query
                .flag("orphanDependents")
                .map_err(ApiError::bad_request)?,
        )?,
        uid: None,
        rv: None,
        dry_run: req.dry_run("DeleteOptions")?,
    })
}

/// Deletes or marks one object; shared by the handlers and the internal controllers.
pub async fn delete_object(
    ctx: &Ctx,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    opts: &DeleteOpts,
) -> ApiResult<Written> {
    ctx.store
        .write(&info.key(), ns, name, opts.dry_run, |cur| {
            let cur = cur.ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
            let uid = meta::meta_str(cur, "uid").unwrap_or("");
            if let Some(p) = opts.uid.as_deref().filter(|p| !p.is_empty() && *p != uid) {
                return Err(ApiError::conflict_msg(&info.plural, &info.group, name, &format!("Precondition failed: UID in precondition: {p}, UID in object meta: {uid}")));
            }
            let rv = meta::meta_str(cur, "resourceVersion").unwrap_or("");
            if let Some(p) = opts.rv.as_deref().filter(|p| !p.is_empty() && *p != rv) {
                return Err(ApiError::conflict_msg(&info.plural, &info.group, name, &format!("Precondition failed: ResourceVersion in precondition: {p}, ResourceVersion in object meta: {rv}")));
            }
            kinds::admit_delete(info, cur)?;
            let mut obj = cur.as_ref().clone();
            let mut fins = meta::finalizers(&obj);
            let gc_fin = match opts.propagation {
                Propagation::Foreground => Some(FOREGROUND),
                Propagation::Orphan => Some(ORPHAN),
                Propagation::Background => None,
            };
            let already = meta::is_deleting(&obj);
            let mut changed = false;
            if let Some(f) = gc_fin
                && !fins.iter().any(|x| x == f)
            {
                fins.retain(|x| x != FOREGROUND && x != ORPHAN);
                fins.push(f.to_string());
                changed = true;
            }
            if !already
                && let Some(f) = kinds::deletion_finalizer(info)
                && !fins.iter().any(|x| x == f)
            {
                fins.push(f.to_string());
                changed = true;
            }
            if fins.is_empty() && !kinds::pending_finalization(info, &obj) {
                return Ok(Outcome::Delete);
            }
            if already && !changed {
                return Ok(Outcome::Unchanged);
            }
            let m = meta::meta_mut(&mut obj)?;
            m.insert("finalizers".into(), json!(fins));
            if !already {
                m.insert("deletionTimestamp".into(), json!(meta::now()));
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
                if let Some(g) = m.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
                    m.insert("generation".into(), json!(g + 1));
                }
                kinds::on_mark_deleted(info, &mut obj);
            }
            Ok(Outcome::Put(obj))
        })
        .await
}

/// The `Status` a completed deletion returns.
pub fn success_status(info: &ResourceInfo, obj: &Value) -> Value {
    let mut details =
        json!({"name": meta::meta_str(obj, "name").unwrap_or(""), "kind": info.plural});
    if !info.group.is_empty() {
        details["group"] = json!(info.group);
    }
    if let Some(uid) = meta::meta_str(obj, "uid") {
        details["uid"] = json!(uid);
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

/// DELETE of one object.
pub async fn delete(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let opts = parse_opts(req)?;
    let w = delete_object(ctx, info, req.ns(), &name, &opts).await?;
    if w.deleted {
        return Ok(json_response(
            StatusCode::OK,
            &success_status(info, &w.object),
        ));
    }
    Ok(object_response(StatusCode::OK, info, &w.object))
}

/// DELETE of a collection.
pub async fn delete_collection(
    ctx: &Ctx,
    info: &Arc<ResourceInfo>,
    req: &Req,
) -> ApiResult<Response> {
    let opts = parse_opts(req)?;
    let filter = Filter::parse(info, req)?;
    let (rv, items) = ctx.store.list(&info.key(), filter.namespace());
    let mut out = Vec::new();
    for obj in items.iter().filter(|o| filter.matches(o)) {
        let ns = meta::meta_str(obj, "namespace").unwrap_or("").to_string();
        let name = meta::meta_str(obj, "name").unwrap_or("").to_string();
        match delete_object(ctx, info, &ns, &name, &opts).await {
            Ok(w) => out.push(served(info, &w.object)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let meta = json!({"resourceVersion": ctx.store.current_rv().max(rv).to_string()});
    Ok(list_response(
        &info.list_kind,
        &info.api_version(),
        &meta,
        out.into_iter(),
    ))
}
