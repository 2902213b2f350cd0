//! Updates and patches (spec §7.3–7.9): PUT of an object, its status or a Namespace's finalize subresource,
//! and PATCH of every type, including server-side apply that creates a missing object. Each is prepared from
//! the object it replaces and committed only over that object ([`super::guaranteed_update`]).

use std::sync::Arc;

use serde_json::{Value, json};

use super::create::{admit_create, check_namespace_field, check_type, prepare_new};
use super::patching::{self, PatchInput, Writer};
use super::shape::Shaper;
use super::{Options, Outcome, Saved, guaranteed_update};
use crate::catalog::ResourceInfo;
use crate::context::Ctx;
use crate::kinds;
use crate::meta::{self, Endpoint};
use crate::patch::PatchType;
use crate::status::{ApiError, ApiResult};

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

/// The common tail of every update: merge with the stored object, hooks, field ownership, validation,
/// finalizer completion and no-op suppression.
///
/// # Errors
/// What decoding, the kind's hooks and validation refuse.
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
    // A status write that leaves out counters (or an object stored before it had a status) still holds the
    // zero status kube-apiserver's types always serialise.
    crate::defaults::fill_status(&mut new, &info.kind_info());
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

/// Replaces the object `ns/name` (its main endpoint, its status, or a Namespace's `spec.finalizers` through
/// `Endpoint::Finalize`) with `obj`.
///
/// # Errors
/// 400 when the body names another object, 404 when it is missing, 409 on a stale `resourceVersion`, and what
/// preparation refuses.
pub async fn update(
    ctx: &Ctx,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    mut obj: Value,
    ep: Endpoint,
    opts: &Options<'_>,
) -> ApiResult<Saved> {
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
    check_namespace_field(info, &mut obj, ns)?;
    let requested_rv = meta::meta_str(&obj, "resourceVersion").map(str::to_string);
    let writer = Writer {
        manager: opts.manager,
        applied: false,
    };
    let mut shaper = Shaper::new(ctx, info, opts.validation).await;
    let written = guaranteed_update(&ctx.store, &info.key(), ns, name, opts.dry_run, |cur| {
        shaper.restart();
        let cur = cur.ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
        check_precondition(info, name, cur, requested_rv.as_deref())?;
        let new = if ep == Endpoint::Finalize {
            kinds::finalize_namespace(cur, &obj)
        } else {
            obj.clone()
        };
        finish_update(ctx, info, cur, new, ep, writer, &mut shaper)
    })
    .await?;
    Ok(Saved {
        written,
        findings: shaper.into_findings(),
    })
}

/// Patches the object `ns/name` (or its status); server-side apply on the main endpoint creates it when
/// missing, through the same preparation and admission as a create.
///
/// # Errors
/// 404 when the object is missing (and the patch cannot create it), the patch engines' refusals (400, 409
/// apply conflict, 415, 422), 409 on a stale `resourceVersion` in the patched object, and what preparation
/// refuses.
pub async fn patch(
    ctx: &Ctx,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    input: &PatchInput<'_>,
    opts: &Options<'_>,
) -> ApiResult<Saved> {
    let kind = info.kind_info();
    let writer = Writer {
        manager: opts.manager,
        applied: input.ptype == PatchType::Apply,
    };
    let upsert = input.ptype == PatchType::Apply && input.ep == Endpoint::Main;
    let mut shaper = Shaper::new(ctx, info, opts.validation).await;
    let written = guaranteed_update(&ctx.store, &info.key(), ns, name, opts.dry_run, |cur| {
        shaper.restart();
        let Some(cur) = cur else {
            if !upsert {
                return Err(ApiError::not_found(&info.plural, &info.group, name));
            }
            // Server-side apply creates a missing object (upsert), prepared and admitted as a create.
            let mut obj = patching::apply_to(info, &kind, None, input, opts.manager)?;
            if meta::meta_str(&obj, "name").is_some_and(|n| n != name) {
                return Err(ApiError::bad_request(
                    "the name of the object does not match the name on the URL",
                ));
            }
            meta::meta_mut(&mut obj)?.insert("name".into(), json!(name));
            prepare_new(ctx, info, &mut obj, ns, &mut shaper, opts.user)?;
            admit_create(ctx, info, ns, name)?;
            return Ok(Outcome::Put(obj));
        };
        // The patch applies to the object as this endpoint serves it (an events.k8s.io Event is stored in the
        // core shape).
        let base = super::shape::converted(info, cur);
        let mut new = patching::apply_to(info, &kind, Some(base.as_ref()), input, opts.manager)?;
        if !new.is_object() {
            return Err(ApiError::bad_request("the patch result is not an object"));
        }
        check_type(info, &mut new)?;
        check_precondition(info, name, cur, meta::meta_str(&new, "resourceVersion"))?;
        if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("name".into(), json!(name));
        }
        check_namespace_field(info, &mut new, ns)?;
        finish_update(ctx, info, cur, new, input.ep, writer, &mut shaper)
    })
    .await?;
    Ok(Saved {
        written,
        findings: shaper.into_findings(),
    })
}
