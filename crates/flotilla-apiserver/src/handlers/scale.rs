//! The scale subresource: the request side. The Scale view and writes through it are
//! `flotilla_registry::write::scale`.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;

use super::{Req, body};
use crate::context::Ctx;
use crate::wire::json_response;
use flotilla_registry::kind_info::KindInfo;
use flotilla_registry::meta;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::write::Options;
use flotilla_registry::write::field_validation::Mode;
use flotilla_registry::write::patching::{self, PatchInput};
use flotilla_registry::write::scale::{self, scale_of};

/// GET .../scale.
pub(crate) fn get(ctx: &Ctx, info: &ResourceInfo, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.as_deref().unwrap_or("");
    let obj = ctx
        .registry
        .store
        .get(&info.key(), req.ns(), name)
        .ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
    Ok(json_response(StatusCode::OK, &scale_of(info, &obj)?))
}

async fn write_scale(
    ctx: &Ctx,
    info: &ResourceInfo,
    req: &Req,
    manager: &str,
    desired: impl FnMut(&serde_json::Value) -> ApiResult<serde_json::Value>,
) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let requester = req.requester();
    let opts = Options {
        dry_run: req.dry_run("UpdateOptions")?,
        manager,
        validation: Mode::Ignore,
        requester: Some(&requester),
    };
    let written = scale::update(&ctx.registry, info, req.ns(), &name, &opts, desired).await?;
    Ok(json_response(
        StatusCode::OK,
        &scale_of(info, &written.object)?,
    ))
}

/// PUT .../scale.
pub(crate) async fn update(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let body = body::decode_object(req, true)?;
    let manager = req.field_manager();
    write_scale(ctx, info, req, &manager, move |_| Ok(body.clone())).await
}

/// PATCH .../scale: the patch applies to the `autoscaling/v1` Scale view, whose new replicas reach the parent.
pub(crate) async fn patch(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let scale_kind = KindInfo::builtin("autoscaling", "v1", "Scale", info.namespaced);
    let ptype = patching::negotiate(&body::media_type(req), &scale_kind)?;
    let manager = req.field_manager();
    let input = PatchInput {
        ptype,
        body: &req.body,
        force: true,
        ep: meta::Endpoint::Main,
    };
    write_scale(ctx, info, req, &manager, |scale| {
        patching::apply_to(info, &scale_kind, Some(scale), &input, &manager)
    })
    .await
}
