//! Deletes: preconditions, propagation finalizers, deletion marking while finalizers remain, and
//! removal once none do.

use serde_json::{Value, json};

use super::admit::Admission;
use super::hooks;
use super::{Attempts, Outcome, Requester};
use crate::admission::webhooks::Operation;
use crate::context::Ctx;
use crate::meta::{self, Endpoint};
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use flotilla_store::Written;

/// Finalizer the garbage collector honours for foreground deletion.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";
/// Finalizer the garbage collector honours for orphaning.
pub(crate) const ORPHAN: &str = "orphan";

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
    /// Who deletes (`None` for the server's own controllers, whose deletions are not sent to webhooks).
    pub requester: Option<Requester>,
}

impl Default for DeleteOpts {
    fn default() -> Self {
        Self {
            propagation: Propagation::Background,
            uid: None,
            rv: None,
            dry_run: false,
            requester: None,
        }
    }
}

/// What deleting `cur` does: remove it, mark it (deletion timestamp, propagation finalizer), or nothing when it
/// is already marked that way.
fn decide(info: &ResourceInfo, name: &str, cur: &Value, opts: &DeleteOpts) -> ApiResult<Outcome> {
    let uid = meta::meta_str(cur, "uid").unwrap_or("");
    if let Some(p) = opts.uid.as_deref().filter(|p| !p.is_empty() && *p != uid) {
        return Err(ApiError::conflict_msg(
            &info.plural,
            &info.group,
            name,
            &format!("Precondition failed: UID in precondition: {p}, UID in object meta: {uid}"),
        ));
    }
    let rv = meta::meta_str(cur, "resourceVersion").unwrap_or("");
    if let Some(p) = opts.rv.as_deref().filter(|p| !p.is_empty() && *p != rv) {
        return Err(ApiError::conflict_msg(
            &info.plural,
            &info.group,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {p}, ResourceVersion in object meta: {rv}"
            ),
        ));
    }
    hooks::admit_delete(info, cur)?;
    let mut obj = cur.clone();
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
        && let Some(f) = hooks::deletion_finalizer(info)
        && !fins.iter().any(|x| x == f)
    {
        fins.push(f.to_string());
        changed = true;
    }
    if fins.is_empty() && !hooks::pending_finalization(info, &obj) {
        return Ok(Outcome::Delete);
    }
    if already && !changed {
        return Ok(Outcome::Unchanged);
    }
    let m = meta::meta_mut(&mut obj)?;
    if fins.is_empty() {
        m.remove("finalizers");
    } else {
        m.insert("finalizers".into(), json!(fins));
    }
    if !already {
        m.insert("deletionTimestamp".into(), json!(meta::now()));
        if !hooks::marks_deletion_plainly(info) {
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            if let Some(g) = m
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                m.insert("generation".into(), json!(g + 1));
            }
        }
        hooks::on_mark_deleted(info, &mut obj);
    }
    Ok(Outcome::Put(obj))
}

/// Deletes or marks the object `ns/name`; for the HTTP handlers and the internal controllers alike.
///
/// # Errors
/// 404 when it is missing, 409 when a precondition fails, 403 for a namespace that may not be deleted.
pub async fn delete(
    ctx: &Ctx,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    opts: &DeleteOpts,
) -> ApiResult<Written> {
    let admission = Admission::of(
        ctx,
        info,
        ns,
        name,
        Endpoint::Main,
        opts.dry_run,
        opts.requester.as_ref(),
    );
    let key = info.key();
    let mut attempts = Attempts::start(&ctx.store, &key, ns, name, opts.dry_run)?;
    loop {
        let cur = attempts
            .read()
            .ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
        let outcome = decide(info, name, &cur, opts)?;
        // kube-apiserver asks the validating webhooks about a deletion once its preconditions hold, with the
        // object being deleted as oldObject; a deletion that is already under way is not asked about again.
        if let Some(admission) = &admission
            && !matches!(outcome, Outcome::Unchanged)
        {
            admission
                .validate(Operation::Delete, Some(&cur), None)
                .await?;
        }
        if let Some(written) = attempts.commit(outcome).await? {
            return Ok(written);
        }
    }
}
