//! create (POST), update (PUT) and patch (PATCH), including status and namespace finalize (spec §7.2–7.9).

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::field_validation::Mode;
use super::shape::Shaper;
use super::{Req, body, object_response};
use crate::catalog::ResourceInfo;
use crate::handlers::patching::{self, PatchInput, Writer};
use crate::kinds;
use crate::meta::{self, Endpoint};
use crate::patch::PatchType;
use crate::server::Ctx;
use crate::status::{ApiError, ApiResult};
use crate::store::Outcome;

/// Checks `apiVersion`/`kind` against the endpoint and sets them to the stored form.
pub fn check_type(info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    let want_av = info.api_version();
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    if (!av.is_empty() && av != want_av) || (!kind.is_empty() && kind != info.kind) {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({want_av}) or the kind ({kind}) does not match {}",
            info.kind
        )));
    }
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!(info.storage_api_version()));
        m.insert("kind".into(), json!(info.kind));
    }
    Ok(())
}

/// Reconciles the body's namespace with the path's (spec §5.4).
pub fn check_namespace_field(info: &ResourceInfo, obj: &mut Value, ns: &str) -> ApiResult<()> {
    let meta = meta::meta_mut(obj)?;
    if !info.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    match meta.get("namespace").and_then(Value::as_str) {
        Some(b) if !b.is_empty() && b != ns => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => {
            meta.insert("namespace".into(), json!(ns));
            Ok(())
        }
    }
}

/// Namespace existence and lifecycle admission for creates (spec §5.6).
pub fn admit_namespace(ctx: &Ctx, info: &ResourceInfo, ns: &str, name: &str) -> ApiResult<()> {
    if !info.namespaced {
        return Ok(());
    }
    let nsobj = ctx
        .store
        .get(&crate::catalog::ResKey::new("", "namespaces"), "", ns)
        .ok_or_else(|| ApiError::not_found("namespaces", "", ns))?;
    if meta::is_deleting(&nsobj) {
        let mut d = serde_json::Map::new();
        d.insert("name".into(), json!(name));
        if !info.group.is_empty() {
            d.insert("group".into(), json!(info.group));
        }
        d.insert("kind".into(), json!(info.plural));
        d.insert(
            "causes".into(),
            json!([{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]),
        );
        return Err(ApiError::forbidden(format!(
            "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
            crate::status::qualified(&info.plural, &info.group)
        ))
        .with_details(d));
    }
    Ok(())
}

/// Refuses creates of custom resources while their CRD is terminating (spec §10.3), as upstream's
/// `forbidCreateAdmission` does.
pub fn admit_custom(ctx: &Ctx, info: &ResourceInfo, name: &str) -> ApiResult<()> {
    let Some(crd_name) = info.crd.as_deref().and_then(|c| meta::meta_str(c, "name")) else {
        return Ok(());
    };
    let terminating = ctx
        .store
        .get(&crate::controllers::crd::key(), "", crd_name)
        .is_none_or(|crd| meta::is_deleting(&crd));
    if !terminating {
        return Ok(());
    }
    let mut d = serde_json::Map::new();
    d.insert("name".into(), json!(name));
    d.insert("group".into(), json!(info.group));
    d.insert("kind".into(), json!(info.plural));
    Err(ApiError::forbidden(format!(
        "{} \"{name}\" is forbidden: create not allowed while custom resource definition is terminating",
        crate::status::qualified(&info.plural, &info.group)
    ))
    .with_details(d))
}

/// Every admission check of a create: namespace existence and lifecycle, CRD lifecycle.
pub fn admit_create(ctx: &Ctx, info: &ResourceInfo, ns: &str, name: &str) -> ApiResult<()> {
    admit_namespace(ctx, info, ns, name)?;
    admit_custom(ctx, info, name)
}

/// Prepares a new object for storage: type, namespace, defaulting, kind hooks, validation, server fields.
pub fn prepare_new(
    ctx: &Ctx,
    info: &ResourceInfo,
    obj: &mut Value,
    ns: &str,
    shaper: &mut Shaper,
) -> ApiResult<()> {
    check_type(info, obj)?;
    check_namespace_field(info, obj, ns)?;
    shaper.decode(info, obj, None)?;
    meta::prepare_create(info, obj)?;
    kinds::on_create(ctx, info, obj)?;
    crate::validate::object(info, obj, None)?;
    Ok(())
}

/// POST to a collection.
pub async fn create(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    if info.namespaced && req.rp.namespace.is_none() {
        return Err(ApiError::method_not_allowed(
            "create",
            &info.plural,
            &info.group,
        ));
    }
    let dry = req.dry_run("CreateOptions")?;
    let mut obj = body::decode_object(req, info.custom)?;
    let ns = req.ns().to_string();
    let name = meta::meta_str(&obj, "name").unwrap_or("").to_string();
    let generate = meta::meta_str(&obj, "generateName")
        .unwrap_or("")
        .to_string();
    if name.is_empty() && generate.is_empty() {
        return Err(ApiError::invalid_field(
            &info.kind,
            &info.group,
            "",
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    let mut shaper = Shaper::new(ctx, info, Mode::of(req, "CreateOptions")?).await;
    prepare_new(ctx, info, &mut obj, &ns, &mut shaper)?;
    let manager = req.field_manager();
    patching::record_ownership(
        info,
        None,
        &mut obj,
        Writer {
            manager: &manager,
            applied: false,
        },
        Endpoint::Main,
    );
    admit_create(
        ctx,
        info,
        &ns,
        if name.is_empty() { &generate } else { &name },
    )?;
    let attempts = if name.is_empty() { 8 } else { 1 };
    for attempt in 0..attempts {
        let mut candidate = obj.clone();
        let this_name = if name.is_empty() {
            meta::generate_name(&generate)
        } else {
            name.clone()
        };
        meta::meta_mut(&mut candidate)?.insert("name".into(), json!(this_name));
        if name.is_empty() {
            // Defaults that derive from the name (a Namespace's name label) see the generated one.
            shaper.decode(info, &mut candidate, None)?;
            crate::validate::object(info, &candidate, None)?;
        }
        let res = ctx
            .store
            .write(&info.key(), &ns, &this_name, dry, |cur| {
                if cur.is_some() {
                    return Err(ApiError::already_exists(
                        &info.plural,
                        &info.group,
                        &this_name,
                    ));
                }
                Ok(Outcome::Put(candidate))
            })
            .await;
        match res {
            Ok(w) => {
                let response = object_response(StatusCode::CREATED, info, &w.object);
                return Ok(shaper.findings().annotate(response));
            }
            Err(e) if e.code == 409 && !name.is_empty() => return Err(e),
            Err(e) if e.code == 409 && attempt + 1 < attempts => continue,
            Err(e) if e.code == 409 => {
                let mut d = e.details.clone().unwrap_or_default();
                d.insert("retryAfterSeconds".into(), json!(1));
                return Err(ApiError::new(
                    409,
                    "AlreadyExists",
                    format!(
                        "{}, the server was not able to generate a unique name for the object",
                        e.message
                    ),
                )
                .with_details(d));
            }
            Err(e) => return Err(e),
        }
    }
    Err(ApiError::internal("name generation failed"))
}

fn endpoint(req: &Req) -> Endpoint {
    if req.rp.sub.as_deref() == Some("status") {
        Endpoint::Status
    } else {
        Endpoint::Main
    }
}

/// Compares a request's resourceVersion precondition with the stored object.
fn check_precondition(
    info: &ResourceInfo,
    name: &str,
    cur: &Value,
    requested: Option<&str>,
) -> ApiResult<()> {
    match requested.filter(|r| !r.is_empty()) {
        None => Ok(()),
        Some(r) => {
            if r.parse::<u64>().is_err() {
                return Err(ApiError::bad_request(format!(
                    "invalid resourceVersion {r:?}"
                )));
            }
            if Some(r) != meta::meta_str(cur, "resourceVersion") {
                return Err(ApiError::conflict(&info.plural, &info.group, name));
            }
            Ok(())
        }
    }
}

/// The common tail of update and patch: merge with the stored object, hooks, field ownership, validation,
/// finalizer completion and no-op suppression.
pub fn finish_update(
    ctx: &Ctx,
    info: &ResourceInfo,
    cur: &Arc<Value>,
    new: Value,
    ep: Endpoint,
    writer: Writer<'_>,
    shaper: &mut Shaper,
) -> ApiResult<Outcome> {
    // Server-side apply computed the new ownership itself; the status endpoint keeps only status from the
    // request, so carry the applied managedFields over explicitly.
    let applied_managed = writer
        .applied
        .then(|| new.pointer("/metadata/managedFields").cloned())
        .flatten();
    let mut new = new;
    // Defaulting happens at decode, before the spec comparison that decides the generation.
    shaper.decode(info, &mut new, Some(cur))?;
    let mut new = meta::merge_update(info, cur, new, ep)?;
    if let Some(m) = new.as_object_mut() {
        m.insert("apiVersion".into(), json!(info.storage_api_version()));
        m.insert("kind".into(), json!(info.kind));
    }
    kinds::on_update(ctx, info, cur, &mut new, ep)?;
    match applied_managed {
        Some(mf) => {
            meta::meta_mut(&mut new)?.insert("managedFields".into(), mf);
        }
        None => patching::record_ownership(info, Some(cur), &mut new, writer, ep),
    }
    crate::validate::object(info, &new, Some(cur))?;
    if meta::is_deleting(&new) && meta::finalizers(&new).is_empty() && kinds::may_remove(info, &new)
    {
        return Ok(Outcome::Delete);
    }
    if meta::same(cur, &new) {
        return Ok(Outcome::Unchanged);
    }
    Ok(Outcome::Put(new))
}

/// PUT of an object, its status, or a namespace's finalize subresource.
pub async fn update(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let dry = req.dry_run("UpdateOptions")?;
    let mut obj = body::decode_object(req, info.custom)?;
    check_type(info, &mut obj)?;
    match meta::meta_str(&obj, "name") {
        Some(n) if !n.is_empty() && n != name => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        _ => {
            meta::meta_mut(&mut obj)?.insert("name".into(), json!(name));
        }
    }
    let ns = req.ns().to_string();
    check_namespace_field(info, &mut obj, &ns)?;
    let requested_rv = meta::meta_str(&obj, "resourceVersion").map(str::to_string);
    let finalize = req.rp.sub.as_deref() == Some("finalize");
    let ep = endpoint(req);
    let manager = req.field_manager();
    let writer = Writer {
        manager: &manager,
        applied: false,
    };
    let mut shaper = Shaper::new(ctx, info, Mode::of(req, "UpdateOptions")?).await;
    let w = ctx
        .store
        .write(&info.key(), &ns, &name, dry, |cur| {
            let cur = cur.ok_or_else(|| ApiError::not_found(&info.plural, &info.group, &name))?;
            check_precondition(info, &name, cur, requested_rv.as_deref())?;
            let new = if finalize {
                kinds::finalize_namespace(cur, &obj)
            } else {
                obj
            };
            finish_update(
                ctx,
                info,
                cur,
                new,
                if finalize { Endpoint::Finalize } else { ep },
                writer,
                &mut shaper,
            )
        })
        .await?;
    Ok(shaper
        .findings()
        .annotate(object_response(StatusCode::OK, info, &w.object)))
}

/// PATCH of an object or its status.
pub async fn patch(ctx: &Ctx, info: &Arc<ResourceInfo>, req: &Req) -> ApiResult<Response> {
    let name = req.rp.name.clone().unwrap_or_default();
    let kind = info.kind_info();
    let ptype = patching::negotiate(&body::media_type(req), &kind)?;
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
    let dry = !dry_run.is_empty();
    if req.body.len() > crate::server::MAX_BODY {
        return Err(ApiError::too_large("the patch is larger than 3 MiB"));
    }
    let ns = req.ns().to_string();
    let ep = endpoint(req);
    let field_manager = manager.unwrap_or_else(|| req.field_manager());
    let input = PatchInput {
        ptype,
        body: &req.body,
        writer: Writer {
            manager: &field_manager,
            applied: ptype == PatchType::Apply,
        },
        force: force == Some(true),
        ep,
    };
    // Admission reads the store, which the write closure must not do (it runs under the store lock), so an
    // upsert's admission is decided up front.
    let mut shaper = Shaper::new(ctx, info, Mode::of(req, "PatchOptions")?).await;
    let admission = if ptype == PatchType::Apply && ep == Endpoint::Main {
        admit_create(ctx, info, &ns, &name)
    } else {
        Ok(())
    };
    let w = ctx
        .store
        .write(&info.key(), &ns, &name, dry, |cur| {
            let Some(cur) = cur else {
                if ptype != PatchType::Apply || ep != Endpoint::Main {
                    return Err(ApiError::not_found(&info.plural, &info.group, &name));
                }
                // Server-side apply creates a missing object (upsert).
                let mut obj = patching::apply_to(info, &kind, None, &input)?;
                if meta::meta_str(&obj, "name").is_some_and(|n| n != name) {
                    return Err(ApiError::bad_request(
                        "the name of the object does not match the name on the URL",
                    ));
                }
                meta::meta_mut(&mut obj)?.insert("name".into(), json!(name));
                prepare_new(ctx, info, &mut obj, &ns, &mut shaper)?;
                admission?;
                return Ok(Outcome::Put(obj));
            };
            // The patch applies to the object as this endpoint serves it (an events.k8s.io Event is stored
            // in the core shape).
            let base = super::converted(info, cur);
            let mut new = patching::apply_to(info, &kind, Some(base.as_ref()), &input)?;
            if !new.is_object() {
                return Err(ApiError::bad_request("the patch result is not an object"));
            }
            check_type(info, &mut new)?;
            check_precondition(info, &name, cur, meta::meta_str(&new, "resourceVersion"))?;
            if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("name".into(), json!(name));
            }
            check_namespace_field(info, &mut new, &ns)?;
            finish_update(ctx, info, cur, new, ep, input.writer, &mut shaper)
        })
        .await?;
    let code = if w.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(shaper
        .findings()
        .annotate(object_response(code, info, &w.object)))
}
