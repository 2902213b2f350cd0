//! The scale subresource (spec §7.5): an `autoscaling/v1` Scale view of the parent's replicas.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::patching::{self, PatchInput, Writer};
use super::{Req, body};
use crate::catalog::{ResourceInfo, ScalePaths};
use crate::kind_info::KindInfo;
use crate::meta;
use crate::server::Ctx;
use crate::status::{ApiError, ApiResult, json_response};

fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .fold(String::new(), |mut acc, seg| {
            acc.push('/');
            acc.push_str(seg);
            acc
        })
}

/// Renders a LabelSelector object as a selector string.
fn selector_string(v: &Value) -> String {
    if let Some(s) = v.as_str() {
        return s.to_string();
    }
    let mut parts = Vec::new();
    if let Some(ml) = v.get("matchLabels").and_then(Value::as_object) {
        for (k, val) in ml {
            parts.push(format!("{k}={}", val.as_str().unwrap_or("")));
        }
    }
    if let Some(exprs) = v.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => parts.push(format!("{key} in ({})", values.join(","))),
                "NotIn" => parts.push(format!("{key} notin ({})", values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.join(",")
}

fn paths(info: &ResourceInfo) -> ApiResult<&ScalePaths> {
    info.scale.as_ref().ok_or_else(ApiError::no_route)
}

/// The Scale object of a parent.
pub fn scale_of(info: &ResourceInfo, obj: &Value) -> ApiResult<Value> {
    let p = paths(info)?;
    let spec = obj
        .pointer(&pointer(&p.spec_replicas))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = obj
        .pointer(&pointer(&p.status_replicas))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut md = json!({});
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = obj.pointer(&format!("/metadata/{k}")) {
            md[k] = v.clone();
        }
    }
    let mut st = json!({"replicas": status});
    if let Some(sel) = p
        .label_selector
        .as_ref()
        .and_then(|l| obj.pointer(&pointer(l)))
    {
        st["selector"] = json!(selector_string(sel));
    }
    Ok(
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": md, "spec": {"replicas": spec}, "status": st}),
    )
}

/// GET .../scale.
pub fn get(ctx: &Ctx, info: &ResourceInfo, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.as_deref().unwrap_or("");
    let obj = ctx
        .store
        .get(&info.key(), req.ns(), name)
        .ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
    Ok(json_response(StatusCode::OK, &scale_of(info, &obj)?))
}

async fn write_scale(
    ctx: &Ctx,
    info: &ResourceInfo,
    req: &Req,
    make: impl FnOnce(&Value) -> ApiResult<Value>,
) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let dry = req.dry_run("UpdateOptions")?;
    let p = paths(info)?.clone();
    let mut shaper = crate::handlers::shape::Shaper::new(
        ctx,
        info,
        crate::handlers::field_validation::Mode::Ignore,
    )
    .await;
    let w = ctx
        .store
        .write(&info.key(), req.ns(), &name, dry, |cur| {
            let cur = cur.ok_or_else(|| ApiError::not_found(&info.plural, &info.group, &name))?;
            let desired = make(&scale_of(info, cur)?)?;
            if let Some(rv) = desired
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
                && Some(rv) != meta::meta_str(cur, "resourceVersion")
            {
                return Err(ApiError::conflict(&info.plural, &info.group, &name));
            }
            let replicas = desired
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let mut new = cur.as_ref().clone();
            let ptr = pointer(&p.spec_replicas);
            let (parent, field) = ptr.rsplit_once('/').unwrap_or(("", "replicas"));
            let mut target = &mut new;
            for seg in parent.split('/').filter(|s| !s.is_empty()) {
                if !target.get(seg).is_some_and(Value::is_object) {
                    target[seg] = json!({});
                }
                target = &mut target[seg];
            }
            target[field] = json!(replicas);
            let manager = req.field_manager();
            let writer = Writer {
                manager: &manager,
                applied: false,
            };
            crate::handlers::write::finish_update(
                ctx,
                info,
                cur,
                new,
                meta::Endpoint::Main,
                writer,
                &mut shaper,
            )
        })
        .await?;
    Ok(json_response(StatusCode::OK, &scale_of(info, &w.object)?))
}

/// PUT .../scale.
pub async fn update(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let body = body::decode_object(req, true)?;
    write_scale(ctx, info, req, move |_| Ok(body)).await
}

/// PATCH .../scale: the patch applies to the `autoscaling/v1` Scale view, whose new replicas reach the parent.
pub async fn patch(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let scale_kind = KindInfo::builtin("autoscaling", "v1", "Scale", info.namespaced);
    let ptype = patching::negotiate(&body::media_type(req), &scale_kind)?;
    let manager = req.field_manager();
    let input = PatchInput {
        ptype,
        body: &req.body,
        writer: Writer {
            manager: &manager,
            applied: false,
        },
        force: true,
        ep: meta::Endpoint::Main,
    };
    write_scale(ctx, info, req, |scale| {
        patching::apply_to(info, &scale_kind, Some(scale), &input)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_objects_render_as_strings() {
        let s = selector_string(
            &json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}),
        );
        assert_eq!(s, "app=web,tier in (a,b)");
    }
}
