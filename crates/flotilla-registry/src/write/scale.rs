//! The scale subresource: an `autoscaling/v1` Scale view of the parent's replicas, and writes to
//! the parent through it.

use serde_json::{Value, json};

use super::ownership::Writer;
use super::shape::Shaper;
use super::update::{Via, finish_update};
use super::{Attempts, Options};
use crate::context::Ctx;
use crate::meta;
use crate::resource::{ResourceInfo, ScalePaths};
use crate::status::{ApiError, ApiResult};
use flotilla_store::Written;

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
///
/// # Errors
/// 404 when the kind has no scale subresource.
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

/// Writes the replicas of the Scale `desired` makes of the parent's current Scale to the parent `ns/name`.
/// `desired` may run more than once (once per preparation).
///
/// # Errors
/// 404 when the parent is missing or has no scale subresource, 409 on a stale `resourceVersion` in the Scale,
/// what `desired` refuses and what the parent's update refuses.
pub async fn update(
    ctx: &Ctx,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    opts: &Options<'_>,
    mut desired: impl FnMut(&Value) -> ApiResult<Value>,
) -> ApiResult<Written> {
    let p = paths(info)?.clone();
    let writer = Writer {
        manager: opts.manager,
        applied: false,
    };
    let mut shaper = Shaper::new(ctx, info, opts.validation).await;
    let key = info.key();
    let mut attempts = Attempts::start(&ctx.store, &key, ns, name, opts.dry_run)?;
    loop {
        let cur = attempts
            .read()
            .ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
        let cur = &cur;
        let scale = desired(&scale_of(info, cur)?)?;
        if let Some(rv) = scale
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            && Some(rv) != meta::meta_str(cur, "resourceVersion")
        {
            return Err(ApiError::conflict(&info.plural, &info.group, name));
        }
        let replicas = scale
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
        let outcome = finish_update(
            ctx,
            info,
            cur,
            new,
            Via {
                ep: meta::Endpoint::Main,
                writer,
                // Not sent to webhooks yet: they would be told of a Scale (autoscaling/v1) on the scale
                // subresource.
                admission: None,
            },
            &mut shaper,
        )
        .await?;
        if let Some(written) = attempts.commit(outcome).await? {
            return Ok(written);
        }
    }
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
