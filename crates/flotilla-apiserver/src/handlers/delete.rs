//! delete and deletecollection: the request side (DeleteOptions, the answers). What a
//! deletion does is `flotilla_registry::write::delete`.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::filter::Filter;
use super::read::list_response;
use super::{Req, body, object_response, served};
use crate::context::Ctx;
use crate::wire::json_response;
use flotilla_registry::meta;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::write::{self, delete::DeleteOpts, delete::Propagation};

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

/// DeleteOptions from the body when present, else from the query.
pub(crate) fn parse_opts(req: &Req) -> ApiResult<DeleteOpts> {
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
            requester: Some(requester(req, &b)),
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
        requester: Some(requester(req, &json!({}))),
    })
}

/// The requester of a deletion: the user and the DeleteOptions as sent (the query's `dryRun` when the body
/// has none), as admission webhooks are told them.
fn requester(req: &Req, body: &Value) -> flotilla_registry::write::Requester {
    let mut options = body.as_object().cloned().unwrap_or_default();
    options.remove("apiVersion");
    options.remove("kind");
    let dry_run = req.query.all("dryRun");
    if !dry_run.is_empty() && !options.contains_key("dryRun") {
        options.insert("dryRun".into(), json!(dry_run));
    }
    flotilla_registry::write::Requester {
        user: req.user_info(),
        options: Value::Object(options),
    }
}

/// The `Status` a completed deletion returns.
pub(crate) fn success_status(info: &ResourceInfo, obj: &Value) -> Value {
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
pub(crate) async fn delete(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let opts = parse_opts(req)?;
    let w = write::delete(&ctx.registry, info, req.ns(), &name, &opts).await?;
    if w.deleted {
        return Ok(json_response(
            StatusCode::OK,
            &success_status(info, &w.object),
        ));
    }
    Ok(object_response(StatusCode::OK, info, &w.object))
}

/// DELETE of a collection.
pub(crate) async fn delete_collection(
    ctx: &Ctx,
    info: &Arc<ResourceInfo>,
    req: &Req,
) -> ApiResult<Response> {
    let opts = parse_opts(req)?;
    let filter = Filter::parse(info, req)?;
    let (rv, items) = ctx.registry.store.list(&info.key(), filter.namespace());
    let mut out = Vec::new();
    for obj in items.iter().filter(|o| filter.matches(o)) {
        let ns = meta::meta_str(obj, "namespace").unwrap_or("").to_string();
        let name = meta::meta_str(obj, "name").unwrap_or("").to_string();
        match write::delete(&ctx.registry, info, &ns, &name, &opts).await {
            Ok(w) => out.push(served(info, &w.object)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let meta = json!({"resourceVersion": ctx.registry.store.current_rv().max(rv).to_string()});
    Ok(list_response(
        &info.list_kind,
        &info.api_version(),
        &meta,
        out.into_iter(),
    ))
}
