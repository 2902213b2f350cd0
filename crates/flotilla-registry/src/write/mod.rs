//! The write path: the one way between its callers (the server's handlers and the internal controllers) and
//! the store, as kube-apiserver's generic registry stands over its storage's `GuaranteedUpdate`.
//!
//! A write reads the current object, prepares the new one with no lock held (decoding and defaulting,
//! admission, which may read the store, validation, managed fields, finalizer completion), then commits it
//! with a compare-and-swap on the resourceVersion it was prepared from ([`Store::commit`]). When another write
//! got in between, the whole preparation runs again on the newer object ([`guaranteed_update`]).
//!
//! Guarantees: no preparation runs under the store lock, so preparations may read the store and many run at
//! once; a write commits only what was prepared from the object it replaces, so no update is lost; a caller's
//! own preconditions (a `resourceVersion` in the body, DeleteOptions' preconditions) are checked inside the
//! preparation against the object actually replaced, so they fail with 409 and are never retried into success.

pub(crate) mod admit;
pub mod binding;
pub mod create;
pub mod delete;
pub mod field_validation;
pub(crate) mod hooks;
pub(crate) mod ownership;
pub mod patching;
pub mod scale;
pub mod shape;
pub(crate) mod update;
pub(crate) mod validate;

use std::sync::Arc;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::status::{ApiError, ApiResult};
use field_validation::{Findings, Mode};
use flotilla_store::ResKey;
use flotilla_store::{Change, Expect, Store, Written, compact};

pub use create::{create, ensure};
pub use delete::delete;
pub use update::{patch, update};

/// What a preparation decides, given the current object.
#[derive(Debug)]
pub enum Outcome {
    /// Store this object (create or replace).
    Put(Value),
    /// Remove the object.
    Delete,
    /// Nothing to do: answer with the current object, without a new resourceVersion or event.
    Unchanged,
}

/// How a caller writes.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// `dryRun=All`: prepare and answer, store nothing.
    pub dry_run: bool,
    /// The field manager the write records in `managedFields`.
    pub manager: &'a str,
    /// What happens to fields the kind does not declare.
    pub validation: Mode,
    /// Who writes and the options they sent (`None` for the server itself): recorded by some kinds, told to
    /// admission webhooks.
    pub requester: Option<&'a Requester>,
}

/// Who sends a write and the options they sent with it, as admission webhooks are told (`userInfo`, `options`).
#[derive(Debug, Clone, Default)]
pub struct Requester {
    /// The user.
    pub user: UserInfo,
    /// The request's CreateOptions, UpdateOptions or DeleteOptions as JSON (without apiVersion and kind).
    pub options: Value,
}

/// What a write stored, and what decoding learned about unknown fields on the way (for `Warning` headers).
#[derive(Debug)]
pub struct Saved {
    /// The store's answer.
    pub written: Written,
    /// Unknown fields dropped under `fieldValidation=Warn`.
    pub findings: Findings,
}

/// Reads the object under (`res`, `ns`, `name`), lets `prepare` decide what to do with it, and commits that
/// decision if the object is still the one read; otherwise reads again and prepares again, until a commit
/// applies or `prepare` fails. With `dry_run` nothing is committed and the prepared object is returned
/// (without a new `resourceVersion`).
///
/// `prepare` runs with no lock held, so it may read the store; it may run more than once, so it must not
/// consume its inputs. It sees the object as clients do (`managedFields` expanded).
///
/// # Errors
/// `prepare`'s error; `503` once the durable store is failing; `500` when the commit cannot be persisted, or
/// when `prepare` declines or deletes a missing object.
pub async fn guaranteed_update<F>(
    store: &Store,
    res: &ResKey,
    ns: &str,
    name: &str,
    dry_run: bool,
    mut prepare: F,
) -> ApiResult<Written>
where
    F: FnMut(Option<&Arc<Value>>) -> ApiResult<Outcome>,
{
    let mut attempts = Attempts::start(store, res, ns, name, dry_run)?;
    loop {
        let view = attempts.read();
        if let Some(written) = attempts.commit(prepare(view.as_ref())?).await? {
            return Ok(written);
        }
    }
}

/// Stores `object` as it is under the core resource `plural` in `ns`, for tests that need objects in place without
/// the write path's checks.
#[cfg(test)]
pub(crate) async fn put_for_test(ctx: &crate::context::Ctx, plural: &str, ns: &str, object: Value) {
    put_in_for_test(&ctx.store, &ResKey::new("", plural), ns, object).await;
}

/// Stores `object` as it is under `res` in `ns` of `store`, as [`put_for_test`] does for any group.
#[cfg(test)]
pub(crate) async fn put_in_for_test(store: &Store, res: &ResKey, ns: &str, object: Value) {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    guaranteed_update(store, res, ns, &name, false, |_| {
        Ok(Outcome::Put(object.clone()))
    })
    .await
    .expect("stored");
}

/// The read, prepare and commit cycle of [`guaranteed_update`] for preparations that wait (admission webhooks
/// are called from them), driven by the caller's own loop: [`Attempts::read`], prepare, [`Attempts::commit`],
/// and again from the read while `commit` answers `None`. A write prepared again after a conflict is admitted
/// again, as kube-apiserver's `GuaranteedUpdate` re-runs admission.
///
/// (A closure that returns a future borrowing its own state cannot be proven `Send` for every lifetime of its
/// argument by today's compiler, so the loop lives at the caller.)
pub(crate) struct Attempts<'a> {
    store: &'a Store,
    res: &'a ResKey,
    ns: &'a str,
    name: &'a str,
    dry_run: bool,
    read: Option<Arc<Value>>,
}

impl<'a> Attempts<'a> {
    /// Starts a write of (`res`, `ns`, `name`).
    ///
    /// # Errors
    /// `503` once the durable store is failing (not for dry runs).
    pub(crate) fn start(
        store: &'a Store,
        res: &'a ResKey,
        ns: &'a str,
        name: &'a str,
        dry_run: bool,
    ) -> ApiResult<Self> {
        if !dry_run {
            // Fail fast rather than prepare a write the store will refuse.
            store.writable()?;
        }
        Ok(Self {
            store,
            res,
            ns,
            name,
            dry_run,
            read: None,
        })
    }

    /// Reads the current object, as clients see it (`managedFields` expanded), to prepare the write from.
    pub(crate) fn read(&mut self) -> Option<Arc<Value>> {
        self.read = self.store.get(self.res, self.ns, self.name);
        self.read.as_ref().map(compact::expanded)
    }

    /// Commits what the preparation decided if the object is still the one last read: the store's answer, or
    /// `None` when another write got there first and the write must be prepared again from a new read. With
    /// `dry_run` nothing is committed and the prepared object is answered (without a new `resourceVersion`).
    ///
    /// # Errors
    /// `500` when the commit cannot be persisted, or when the preparation declines or deletes a missing object.
    pub(crate) async fn commit(&mut self, outcome: Outcome) -> ApiResult<Option<Written>> {
        let read = &self.read;
        let change = match (outcome, read) {
            (Outcome::Unchanged, Some(current)) => {
                return Ok(Some(Written {
                    object: current.clone(),
                    created: false,
                    deleted: false,
                }));
            }
            (Outcome::Unchanged, None) => {
                return Err(ApiError::internal("write declined on a missing object"));
            }
            (Outcome::Delete, None) => {
                return Err(ApiError::internal("delete of a missing object"));
            }
            (Outcome::Put(obj), _) if self.dry_run => {
                return Ok(Some(Written {
                    object: Arc::new(obj),
                    created: read.is_none(),
                    deleted: false,
                }));
            }
            (Outcome::Delete, Some(current)) if self.dry_run => {
                return Ok(Some(Written {
                    object: current.clone(),
                    created: false,
                    deleted: true,
                }));
            }
            (Outcome::Put(obj), _) => Change::Put(obj),
            (Outcome::Delete, Some(_)) => Change::Delete,
        };
        match self
            .store
            .commit(
                self.res,
                self.ns,
                self.name,
                Expect::of(read.as_deref()),
                change,
            )
            .await
        {
            Ok(written) => Ok(Some(written)),
            Err(flotilla_store::Error::Conflict) => {
                tracing::trace!(resource = %self.res.plural, ns = self.ns, name = self.name, "object changed while the write was prepared; preparing again");
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests;
