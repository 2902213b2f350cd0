//! The one way controllers change an object they read: read, change, write with the `resourceVersion` read
//! (optimistic concurrency), and on a write conflict read afresh and change again; plus the finalizer helpers
//! built on it.
//!
//! Why not server-side apply: the fields controllers write here are shared with other writers (finalizer
//! lists, the policy claim labels, conditions and aggregated status that several controllers fill), and
//! objects written before by update keep those fields owned by the update managers, which an apply cannot
//! remove. A read-modify-write on the current object has the semantics each caller had before.
//!
//! Guarantees: `change` always gets the object as stored (the first attempt may use a copy the caller already
//! holds); nothing is written when `change` reports no change; a conflict is retried with a fresh read at
//! most [`ATTEMPTS`] times in all, after which the error policy takes over with a `Waiting` error.
//!
//! The changes are functions of an owned object returning a future (not async closures over `&mut K`):
//! futures of async closures with higher-ranked lifetimes are not provably `Send` with today's compiler,
//! and every reconcile runs on its own task.

use std::fmt::Debug;

use flotilla_client::api_error::is_not_found;
use kube::api::PostParams;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Attempts in all before an object that keeps changing under a write is left to the error policy.
pub(crate) const ATTEMPTS: usize = 5;

/// What a change made of an object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Edit<K> {
    /// The object with the change, to write.
    Changed(K),
    /// Nothing to change; the object as it was.
    Unchanged(K),
}

impl<K> Edit<K> {
    /// `Changed(obj)` when `changed`, else `Unchanged(obj)`.
    pub(crate) fn of(obj: K, changed: bool) -> Self {
        if changed {
            Edit::Changed(obj)
        } else {
            Edit::Unchanged(obj)
        }
    }
}

/// What a write did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Written<K> {
    /// The object was created; what the server stored.
    Created(K),
    /// The object was changed; what the server stored.
    Updated(K),
    /// The change asked for nothing; the object as read.
    Unchanged(K),
    /// The object does not exist ([`update`] only: [`create_or_update`] creates it).
    Gone,
}

impl<K> Written<K> {
    /// Whether the server stored a new version.
    pub(crate) fn wrote(&self) -> bool {
        matches!(self, Written::Created(_) | Written::Updated(_))
    }

    /// The object as stored, if it exists.
    pub(crate) fn object(self) -> Option<K> {
        match self {
            Written::Created(k) | Written::Updated(k) | Written::Unchanged(k) => Some(k),
            Written::Gone => None,
        }
    }
}

/// Which part of the object a write replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// The object (metadata and spec; the server ignores status where a status subresource exists).
    Object,
    /// The status subresource.
    Status,
}

/// Runs `attempt` until it ends with anything but a write conflict (409, which also covers a create that
/// found the object existing), at most [`ATTEMPTS`] times. Each attempt gets the state the previous one
/// returned and whether it follows a conflict (so it reads the object afresh instead of using a copy).
///
/// # Errors
/// The attempt's error; `Waiting` for `what` to stop changing when every attempt conflicted.
pub(crate) async fn retry_on_conflict<S, T, F, Fut>(
    what: &str,
    state: S,
    mut attempt: F,
) -> Result<T>
where
    F: FnMut(S, bool) -> Fut,
    Fut: Future<Output = (S, Result<T>)>,
{
    let mut state = state;
    for n in 0..ATTEMPTS {
        let (next, result) = attempt(state, n > 0).await;
        match result {
            Err(err) if err.is_conflict() => {
                tracing::debug!(
                    object = what,
                    attempt = n + 1,
                    "write conflict; reading again"
                );
                state = next;
            }
            other => return other,
        }
    }
    Err(Error::waiting(format!("{what} to stop changing")))
}

/// Changes object `name` (`what` names it in errors): `change` gets the object read (or `cached` on the
/// first attempt) and says what it made of it; a changed object is written to `part`.
///
/// # Errors
/// `change`'s error, `Kube` when reading or writing fails, `Waiting` after [`ATTEMPTS`] conflicts.
pub(crate) async fn update<K, F, Fut>(
    api: &Api<K>,
    what: &str,
    name: &str,
    cached: Option<K>,
    part: Part,
    change: F,
) -> Result<Written<K>>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
    F: FnMut(K) -> Fut,
    Fut: Future<Output = Result<Edit<K>>>,
{
    retry_on_conflict(
        what,
        (cached, change),
        |(cached, mut change), fresh| async move {
            let result = async {
                let current = match cached.filter(|_| !fresh) {
                    Some(obj) => Some(obj),
                    None => read(api, what, name).await?,
                };
                let Some(obj) = current else {
                    return Ok(Written::Gone);
                };
                match change(obj).await? {
                    Edit::Unchanged(obj) => Ok(Written::Unchanged(obj)),
                    Edit::Changed(obj) => Ok(write(api, what, name, part, &obj)
                        .await?
                        .map_or(Written::Gone, Written::Updated)),
                }
            }
            .await;
            ((None, change), result)
        },
    )
    .await
}

/// Creates object `name` as `create` builds it, or changes the existing one as [`update`] does. With
/// `known_absent` (a cache holds no such object) the first attempt creates without reading; an object that
/// exists after all answers AlreadyExists, and is then read and changed.
///
/// # Errors
/// As [`update`], and `create`'s error.
pub(crate) async fn create_or_update<K, C, F, Fut>(
    api: &Api<K>,
    what: &str,
    name: &str,
    known_absent: bool,
    create: C,
    change: F,
) -> Result<Written<K>>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
    C: Fn() -> Result<K>,
    F: FnMut(K) -> Fut,
    Fut: Future<Output = Result<Edit<K>>>,
{
    let create = &create;
    retry_on_conflict(what, change, |mut change, fresh| async move {
        let result = async {
            let current = if known_absent && !fresh {
                None
            } else {
                read(api, what, name).await?
            };
            let Some(obj) = current else {
                return api
                    .create(&PostParams::default(), &create()?)
                    .await
                    .map(Written::Created)
                    .map_err(|source| Error::kube("create", what.to_owned(), source));
            };
            match change(obj).await? {
                Edit::Unchanged(obj) => Ok(Written::Unchanged(obj)),
                // Deleted between the read and the write: the error policy creates it again.
                Edit::Changed(obj) => write(api, what, name, Part::Object, &obj)
                    .await?
                    .map(Written::Updated)
                    .ok_or_else(|| Error::waiting(format!("{what} to be created again"))),
            }
        }
        .await;
        (change, result)
    })
    .await
}

/// Adds `finalizer` to `obj` unless it has it.
///
/// # Errors
/// As [`update`].
pub(crate) async fn add_finalizer<K>(
    api: &Api<K>,
    what: &str,
    obj: K,
    finalizer: &str,
) -> Result<Written<K>>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    edit_finalizers(api, what, obj, |finalizers| {
        let missing = !finalizers.iter().any(|f| f == finalizer);
        if missing {
            finalizers.push(finalizer.to_owned());
        }
        missing
    })
    .await
}

/// Removes `finalizer` from `obj` (read afresh on conflicts); an object already gone or without it is fine.
///
/// # Errors
/// As [`update`].
pub(crate) async fn remove_finalizer<K>(
    api: &Api<K>,
    what: &str,
    obj: K,
    finalizer: &str,
) -> Result<()>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    edit_finalizers(api, what, obj, |finalizers| {
        let before = finalizers.len();
        finalizers.retain(|f| f != finalizer);
        finalizers.len() != before
    })
    .await?;
    Ok(())
}

/// Applies `edit` (which says whether it changed anything) to the finalizers of `obj`.
async fn edit_finalizers<K>(
    api: &Api<K>,
    what: &str,
    obj: K,
    edit: impl Fn(&mut Vec<String>) -> bool,
) -> Result<Written<K>>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let name = obj.name_any();
    let edit = &edit;
    update(
        api,
        what,
        &name,
        Some(obj),
        Part::Object,
        |mut obj| async move {
            let changed = edit(obj.finalizers_mut());
            Ok(Edit::of(obj, changed))
        },
    )
    .await
}

async fn read<K>(api: &Api<K>, what: &str, name: &str) -> Result<Option<K>>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    api.get_opt(name)
        .await
        .map_err(|source| Error::kube("get", what.to_owned(), source))
}

/// Writes `obj`; `None` when the object no longer exists.
async fn write<K>(api: &Api<K>, what: &str, name: &str, part: Part, obj: &K) -> Result<Option<K>>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let params = PostParams::default();
    let (action, result) = match part {
        Part::Object => ("update", api.replace(name, &params, obj).await),
        Part::Status => (
            "update status of",
            api.replace_status(name, &params, obj).await,
        ),
    };
    match result {
        Ok(stored) => Ok(Some(stored)),
        Err(err) if is_not_found(&err) => Ok(None),
        Err(source) => Err(Error::kube(action, what.to_owned(), source)),
    }
}
