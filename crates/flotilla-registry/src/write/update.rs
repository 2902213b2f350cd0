//! Updates and patches: PUT of an object, its status or a Namespace's finalize subresource,
//! and PATCH of every type, including server-side apply that creates a missing object. Each is prepared from
//! the object it replaces and committed only over that object ([`super::guaranteed_update`]).

use std::sync::Arc;

use serde_json::{Value, json};

use super::admit::Admission;
use super::create::{admit_create, check_namespace_field, check_type, prepare_new};
use super::hooks;
use super::ownership::{self, Writer};
use super::patching::{self, PatchInput};
use super::shape::Shaper;
use super::{Attempts, Options, Outcome, Saved};
use crate::admission::webhooks::Operation;
use crate::context::Ctx;
use crate::meta::{self, Endpoint};
use crate::patch::PatchType;
use crate::resource::ResourceInfo;
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

/// How an update arrives: its endpoint, its writer and, for requests (not the server's own writes), its
/// admission webhooks.
#[derive(Clone, Copy)]
pub(crate) struct Via<'a> {
    /// The endpoint.
    pub ep: Endpoint,
    /// Who writes, for managed fields.
    pub writer: Writer<'a>,
    /// The write's admission webhooks.
    pub admission: Option<&'a Admission<'a>>,
}

/// The common tail of every update: merge with the stored object, hooks, mutating admission webhooks, field
/// ownership, validation, validating admission webhooks, finalizer completion and no-op suppression.
///
/// # Errors
/// What decoding, the kind's hooks, validation and the webhooks refuse.
pub(crate) async fn finish_update(
    ctx: &Ctx,
    info: &ResourceInfo,
    cur: &Arc<Value>,
    new: Value,
    via: Via<'_>,
    shaper: &mut Shaper,
) -> ApiResult<Outcome> {
    let Via {
        ep,
        writer,
        admission,
    } = via;
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
    hooks::on_update(ctx, info, cur, &mut new, ep)?;
    // A status write that leaves out counters (or an object stored before it had a status) still holds the
    // zero status kube-apiserver's types always serialise.
    crate::defaults::fill_status(&mut new, crate::kinds::zero_status(&info.kind_info()));
    // Ownership first: fields that admission webhooks change are not the writer's.
    match applied_managed {
        Some(mf) => {
            meta::meta_mut(&mut new)?.insert("managedFields".into(), mf);
        }
        None => ownership::record_ownership(info, Some(cur), &mut new, writer, ep),
    }
    if let Some(admission) = admission {
        admission
            .mutate(Operation::Update, Some(cur), &mut new, shaper)
            .await?;
        crate::auth::rbac::escalation::check_write(
            &ctx.store,
            info,
            &admission.requester.user,
            crate::meta::meta_str(cur, "namespace").unwrap_or(""),
            Some(cur),
            &new,
        )?;
    }
    crate::write::validate::object(info, &new, Some(cur))?;
    if let Some(admission) = admission {
        admission
            .validate(Operation::Update, Some(cur), Some(&new))
            .await?;
    }
    if meta::is_deleting(&new) && meta::finalizers(&new).is_empty() && hooks::may_remove(info, &new)
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
    let admission = Admission::of(ctx, info, ns, name, ep, opts.dry_run, opts.requester);
    let key = info.key();
    let mut attempts = Attempts::start(&ctx.store, &key, ns, name, opts.dry_run)?;
    let written = loop {
        let read = attempts.read();
        shaper.restart();
        let cur = read.ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
        check_precondition(info, name, &cur, requested_rv.as_deref())?;
        let new = if ep == Endpoint::Finalize {
            hooks::finalize_namespace(&cur, &obj)
        } else {
            obj.clone()
        };
        let outcome = finish_update(
            ctx,
            info,
            &cur,
            new,
            Via {
                ep,
                writer,
                admission: admission.as_ref(),
            },
            &mut shaper,
        )
        .await?;
        if let Some(written) = attempts.commit(outcome).await? {
            break written;
        }
    };
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
    let admission = Admission::of(ctx, info, ns, name, input.ep, opts.dry_run, opts.requester);
    let key = info.key();
    let mut attempts = Attempts::start(&ctx.store, &key, ns, name, opts.dry_run)?;
    let written = loop {
        let read = attempts.read();
        shaper.restart();
        let outcome = match read {
            None if !upsert => return Err(ApiError::not_found(&info.plural, &info.group, name)),
            None => {
                // Server-side apply creates a missing object (upsert), prepared and admitted as a create.
                let mut obj = patching::apply_to(info, &kind, None, input, opts.manager)?;
                if meta::meta_str(&obj, "name").is_some_and(|n| n != name) {
                    return Err(ApiError::bad_request(
                        "the name of the object does not match the name on the URL",
                    ));
                }
                meta::meta_mut(&mut obj)?.insert("name".into(), json!(name));
                prepare_new(
                    ctx,
                    info,
                    &mut obj,
                    ns,
                    &mut shaper,
                    None,
                    admission.as_ref(),
                )
                .await?;
                admit_create(ctx, info, ns, name)?;
                if let Some(admission) = &admission {
                    admission
                        .validate(Operation::Create, None, Some(&obj))
                        .await?;
                }
                Outcome::Put(obj)
            }
            Some(cur) => {
                // The patch applies to the object as this endpoint serves it (an events.k8s.io Event is stored
                // in the core shape).
                let base = super::shape::converted(info, &cur);
                let mut new =
                    patching::apply_to(info, &kind, Some(base.as_ref()), input, opts.manager)?;
                if !new.is_object() {
                    return Err(ApiError::bad_request("the patch result is not an object"));
                }
                check_type(info, &mut new)?;
                check_precondition(info, name, &cur, meta::meta_str(&new, "resourceVersion"))?;
                if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.insert("name".into(), json!(name));
                }
                check_namespace_field(info, &mut new, ns)?;
                finish_update(
                    ctx,
                    info,
                    &cur,
                    new,
                    Via {
                        ep: input.ep,
                        writer,
                        admission: admission.as_ref(),
                    },
                    &mut shaper,
                )
                .await?
            }
        };
        if let Some(written) = attempts.commit(outcome).await? {
            break written;
        }
    };
    Ok(Saved {
        written,
        findings: shaper.into_findings(),
    })
}
