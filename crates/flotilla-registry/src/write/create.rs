//! Creates: the preparation of a new object (type, namespace, decoding and defaulting, server
//! fields, mutating admission, validation), the admission checks of a create (namespace and CRD lifecycle), and
//! the create itself, with `generateName`.

use serde_json::{Value, json};

use super::admit::Admission;
use super::field_validation::Mode;
use super::hooks;
use super::ownership::{self, Writer};
use super::shape::Shaper;
use super::{Options, Outcome, Saved, guaranteed_update};
use crate::admission::webhooks::Operation;
use crate::context::Ctx;
use crate::meta::{self, Endpoint};
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use flotilla_store::ResKey;

/// How many names a `generateName` create tries before giving up, as upstream.
const GENERATE_ATTEMPTS: usize = 8;

/// Records `manager` as the owner of every field of `obj`, as a create records it, for an object the server
/// answers without storing (access reviews carry their requester's `managedFields`).
pub fn record_created_fields(info: &ResourceInfo, obj: &mut Value, manager: &str) {
    let writer = Writer {
        manager,
        applied: false,
    };
    ownership::record_ownership(info, None, obj, writer, Endpoint::Main);
}

/// Checks `apiVersion`/`kind` against the endpoint and sets them to the stored form.
///
/// # Errors
/// 400 when the object names another version or kind.
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

/// Reconciles the body's namespace with the path's.
///
/// # Errors
/// 400 when the body names another namespace.
pub(crate) fn check_namespace_field(
    info: &ResourceInfo,
    obj: &mut Value,
    ns: &str,
) -> ApiResult<()> {
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

/// Namespace existence and lifecycle admission for creates.
fn admit_namespace(ctx: &Ctx, info: &ResourceInfo, ns: &str, name: &str) -> ApiResult<()> {
    if !info.namespaced {
        return Ok(());
    }
    let nsobj = ctx
        .store
        .get(&ResKey::new("", "namespaces"), "", ns)
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

/// Refuses creates of custom resources while their CRD is terminating, as upstream's
/// `forbidCreateAdmission` does.
fn admit_custom(ctx: &Ctx, info: &ResourceInfo, name: &str) -> ApiResult<()> {
    let Some(crd_name) = info.crd.as_deref().and_then(|c| meta::meta_str(c, "name")) else {
        return Ok(());
    };
    let terminating = ctx
        .store
        .get(&crate::kinds::platform::crd::key(), "", crd_name)
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
///
/// # Errors
/// 404 for a missing namespace, 403 for a terminating namespace or CRD.
pub(crate) fn admit_create(ctx: &Ctx, info: &ResourceInfo, ns: &str, name: &str) -> ApiResult<()> {
    admit_namespace(ctx, info, ns, name)?;
    admit_custom(ctx, info, name)
}

/// Prepares a new object for storage, in kube-apiserver's order: type, namespace, decoding and defaulting,
/// the writer's field ownership (`writer`; what admission adds next is owned by no one), built-in mutating
/// admission (which reads the store), mutating admission webhooks (each result decoded and defaulted again),
/// the server's fields and the kind's create strategy, validation.
///
/// # Errors
/// What each step refuses: 400 for a malformed object, 403 from admission, 422 from validation, a webhook's
/// denial or failure.
pub(crate) async fn prepare_new(
    ctx: &Ctx,
    info: &ResourceInfo,
    obj: &mut Value,
    ns: &str,
    shaper: &mut Shaper,
    writer: Option<Writer<'_>>,
    admission: Option<&Admission<'_>>,
) -> ApiResult<()> {
    check_type(info, obj)?;
    check_namespace_field(info, obj, ns)?;
    let sent_without_labels = obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_none_or(serde_json::Map::is_empty);
    shaper.decode(info, obj, None)?;
    if let Some(writer) = writer {
        ownership::record_ownership(info, None, obj, writer, Endpoint::Main);
    }
    crate::admission::admit_create(&ctx.store, info, obj)?;
    if let Some(admission) = admission {
        admission
            .mutate(Operation::Create, None, obj, shaper)
            .await?;
        crate::auth::rbac::escalation::check_write(
            &ctx.store,
            info,
            &admission.requester.user,
            ns,
            None,
            obj,
        )?;
    }
    meta::prepare_create(info, obj)?;
    hooks::on_create(
        info,
        obj,
        admission.map(|a| &a.requester.user),
        sent_without_labels,
    )?;
    // After the client's status is dropped and the kind's own initial status set: the rest of the zero status
    // its Go type always serialises.
    crate::defaults::fill_status(obj, crate::kinds::zero_status(&info.kind_info()));
    crate::write::validate::object(info, obj, None)?;
    Ok(())
}

/// Creates `obj` in `ns`: named by `metadata.name`, or by `generateName` plus a random suffix (another suffix
/// when one is taken, as upstream).
///
/// A generated name is chosen before the preparation, so validation sees it (the name is then required).
///
/// # Errors
/// 422 without a name or generateName, 409 when the name is taken, and what preparation refuses.
pub async fn create(
    ctx: &Ctx,
    info: &ResourceInfo,
    ns: &str,
    mut obj: Value,
    opts: &Options<'_>,
) -> ApiResult<Saved> {
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
    let mut shaper = Shaper::new(ctx, info, opts.validation).await;
    let writer = Writer {
        manager: opts.manager,
        applied: false,
    };
    let attempts = if name.is_empty() {
        GENERATE_ATTEMPTS
    } else {
        1
    };
    for attempt in 0..attempts {
        // The name comes first, as upstream's BeforeCreate does: defaults derived from it (a Namespace's name
        // label), admission and validation see the name the object gets.
        let this_name = if name.is_empty() {
            meta::generate_name(&generate)
        } else {
            name.clone()
        };
        let mut candidate = if attempts == 1 {
            std::mem::take(&mut obj)
        } else {
            obj.clone()
        };
        meta::meta_mut(&mut candidate)?.insert("name".into(), json!(this_name));
        shaper.restart();
        let admission = Admission::of(
            ctx,
            info,
            ns,
            &this_name,
            Endpoint::Main,
            opts.dry_run,
            opts.requester,
        );
        prepare_new(
            ctx,
            info,
            &mut candidate,
            ns,
            &mut shaper,
            Some(writer),
            admission.as_ref(),
        )
        .await?;
        admit_create(ctx, info, ns, &this_name)?;
        if let Some(admission) = &admission {
            admission
                .validate(Operation::Create, None, Some(&candidate))
                .await?;
        }
        // A create commits only over nothing: a conflict means the name was taken meanwhile, which the next
        // preparation reports.
        let mut candidate = Some(candidate);
        let res = guaranteed_update(
            &ctx.store,
            &info.key(),
            ns,
            &this_name,
            opts.dry_run,
            |cur| {
                if cur.is_some() {
                    return Err(ApiError::already_exists(
                        &info.plural,
                        &info.group,
                        &this_name,
                    ));
                }
                candidate
                    .take()
                    .map(Outcome::Put)
                    .ok_or_else(|| ApiError::internal("create prepared twice over nothing"))
            },
        )
        .await;
        match res {
            Ok(written) => {
                return Ok(Saved {
                    written,
                    findings: shaper.into_findings(),
                });
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

/// Creates an object if it is missing, through the create preparation (internal controllers' bootstrap and
/// published objects). A `status` in `obj` is kept: internal seeding may set it directly (Nodes report their
/// capacity).
///
/// # Errors
/// What preparation refuses, and store failures.
pub async fn ensure(ctx: &Ctx, info: &ResourceInfo, mut obj: Value) -> ApiResult<()> {
    let ns = meta::meta_str(&obj, "namespace").unwrap_or("").to_string();
    let name = meta::meta_str(&obj, "name").unwrap_or("").to_string();
    if ctx.store.get(&info.key(), &ns, &name).is_some() {
        return Ok(());
    }
    let status = obj.get("status").cloned();
    let mut shaper = Shaper::new(ctx, info, Mode::Ignore).await;
    prepare_new(ctx, info, &mut obj, &ns, &mut shaper, None, None).await?;
    if let Some(s) = status {
        obj["status"] = s;
    }
    guaranteed_update(&ctx.store, &info.key(), &ns, &name, false, |cur| {
        Ok(if cur.is_some() {
            Outcome::Unchanged
        } else {
            Outcome::Put(obj.clone())
        })
    })
    .await
    .map(|_| ())
}
