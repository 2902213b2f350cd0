//! create (POST), update (PUT) and patch (PATCH), including status and namespace finalize: the
//! request side. What a write does is `flotilla_registry::write`.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::json;

use super::field_validation::{annotate, mode};
use super::{Req, body, object_response};
use crate::context::Ctx;
use crate::wire::json_response;
use flotilla_registry::meta::Endpoint;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::write::patching::{self, PatchInput};
use flotilla_registry::write::{self, Options, Saved};

/// The answer to a write: the stored object, with a `Warning` per unknown field.
fn answer(code: StatusCode, info: &ResourceInfo, saved: &Saved) -> Response {
    annotate(
        &saved.findings,
        object_response(code, info, &saved.written.object),
    )
}

/// POST to a collection.
pub(crate) async fn create(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    if info.namespaced && req.rp.namespace.is_none() {
        return Err(ApiError::method_not_allowed(
            "create",
            &info.plural,
            &info.group,
        ));
    }
    let dry_run = req.dry_run("CreateOptions")?;
    let obj = body::decode_object(req, info.custom)?;
    let manager = req.field_manager();
    let requester = req.requester();
    let opts = Options {
        dry_run,
        manager: &manager,
        validation: mode(req, "CreateOptions")?,
        requester: Some(&requester),
    };
    let saved = write::create(&ctx.registry, info, req.ns(), obj, &opts).await?;
    Ok(answer(StatusCode::CREATED, info, &saved))
}

/// POST of a pod's `binding`: a scheduler assigns the pod to a Node (`flotilla_registry::write::binding`), answered
/// with kube-apiserver's Status `Success`.
pub(crate) async fn bind(ctx: &Ctx, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let dry_run = req.dry_run("CreateOptions")?;
    let binding = body::decode_object(req, false)?;
    write::binding::bind(&ctx.registry, req.ns(), &name, &binding, dry_run).await?;
    Ok(json_response(
        StatusCode::CREATED,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}

/// The endpoint of a PATCH, or of a PUT other than to a Namespace's `finalize`.
fn endpoint(req: &Req) -> Endpoint {
    match req.rp.sub.as_deref() {
        Some("status") => Endpoint::Status,
        Some("approval") => Endpoint::Approval,
        _ => Endpoint::Main,
    }
}

/// PUT of an object, its status, or a namespace's finalize subresource.
pub(crate) async fn update(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let dry_run = req.dry_run("UpdateOptions")?;
    let obj = body::decode_object(req, info.custom)?;
    let manager = req.field_manager();
    let requester = req.requester();
    let opts = Options {
        dry_run,
        manager: &manager,
        validation: mode(req, "UpdateOptions")?,
        requester: Some(&requester),
    };
    let ep = if req.rp.sub.as_deref() == Some("finalize") {
        Endpoint::Finalize
    } else {
        endpoint(req)
    };
    let saved = write::update(&ctx.registry, info, req.ns(), &name, obj, ep, &opts).await?;
    Ok(answer(StatusCode::OK, info, &saved))
}

/// PATCH of an object or its status.
pub(crate) async fn patch(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let ptype = patching::negotiate(&body::media_type(req), &info.kind_info())?;
    let force = req.query.flag("force").map_err(ApiError::bad_request)?;
    let manager = req
        .query
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let dry_run: Vec<String> = req
        .query
        .all("dryRun")
        .into_iter()
        .map(str::to_string)
        .collect();
    patching::validate_options(
        ptype,
        manager.as_deref(),
        force,
        &dry_run,
        req.query.get("fieldValidation"),
    )?;
    if req.body.len() > crate::wire::MAX_BODY {
        return Err(ApiError::too_large("the patch is larger than 3 MiB"));
    }
    let manager = manager.unwrap_or_else(|| req.field_manager());
    let requester = req.requester();
    let input = PatchInput {
        ptype,
        body: &req.body,
        force: force == Some(true),
        ep: endpoint(req),
    };
    let opts = Options {
        dry_run: !dry_run.is_empty(),
        manager: &manager,
        validation: mode(req, "PatchOptions")?,
        requester: Some(&requester),
    };
    let saved = write::patch(&ctx.registry, info, req.ns(), &name, &input, &opts).await?;
    let code = if saved.written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(answer(code, info, &saved))
}
