//! The registry: the one write path between its callers (the HTTP handlers and the internal controllers) and
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

pub mod create;
pub mod delete;
pub mod field_validation;
pub mod patching;
pub mod scale;
pub mod shape;
pub mod update;

use std::sync::Arc;

use serde_json::Value;

use crate::admission::webhooks::UserInfo;
use crate::catalog::ResKey;
use crate::status::{ApiError, ApiResult};
use crate::store::{Change, CommitError, Expect, Store, Written, compact};
use field_validation::{Findings, Mode};

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
    /// Who writes (`None` for the server itself): recorded by some kinds, told to admission webhooks.
    pub user: Option<&'a UserInfo>,
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
    if !dry_run {
        // Fail fast rather than prepare a write the store will refuse.
        store.writable()?;
    }
    loop {
        let read = store.get(res, ns, name);
        let view = read.as_ref().map(compact::expanded);
        let change = match (prepare(view.as_ref())?, &read) {
            (Outcome::Unchanged, Some(current)) => {
                return Ok(Written {
                    object: current.clone(),
                    created: false,
                    deleted: false,
                });
            }
            (Outcome::Unchanged, None) => {
                return Err(ApiError::internal("write declined on a missing object"));
            }
            (Outcome::Delete, None) => {
                return Err(ApiError::internal("delete of a missing object"));
            }
            (Outcome::Put(obj), _) if dry_run => {
                return Ok(Written {
                    object: Arc::new(obj),
                    created: read.is_none(),
                    deleted: false,
                });
            }
            (Outcome::Delete, Some(current)) if dry_run => {
                return Ok(Written {
                    object: current.clone(),
                    created: false,
                    deleted: true,
                });
            }
            (Outcome::Put(obj), _) => Change::Put(obj),
            (Outcome::Delete, Some(_)) => Change::Delete,
        };
        match store
            .commit(res, ns, name, Expect::of(read.as_deref()), change)
            .await
        {
            Ok(written) => return Ok(written),
            Err(CommitError::Conflict) => {
                tracing::trace!(resource = %res.plural, ns, name, "object changed while the write was prepared; preparing again");
            }
            Err(CommitError::Failed(e)) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests;
