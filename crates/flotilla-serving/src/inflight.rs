//! Limits on requests in flight, by class, as kube-apiserver's `--max-requests-inflight` and
//! `--max-mutating-requests-inflight` count them: a request over its class's limit is refused at once rather
//! than queued, and long-running requests are not counted.
//!
//! The server decides what class a request is and what a refusal looks like; this module only counts.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a request counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Not counted: a request that may last as long as the client wants (a watch, a proxied stream), or one
    /// from a caller the server exempts.
    Exempt,
    /// Counted against the read-only limit.
    ReadOnly,
    /// Counted against the mutating limit.
    Mutating,
}

/// The request limits of one server. Cloning shares the counts.
#[derive(Debug, Clone)]
pub struct Limits {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

/// A request's place in its class's count, given back when dropped.
#[derive(Debug)]
pub struct Permit {
    _slot: Option<OwnedSemaphorePermit>,
}

/// The request's class is at its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many requests in flight")]
pub struct Saturated;

impl Limits {
    /// At most `read_only` read-only and `mutating` mutating requests at once; 0 means no limit (as
    /// kube-apiserver reads its flags).
    pub fn new(read_only: usize, mutating: usize) -> Self {
        let limit = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        Self {
            read_only: limit(read_only),
            mutating: limit(mutating),
        }
    }

    /// Takes a place for a request of `class`, to be held until the request is answered.
    ///
    /// # Errors
    /// [`Saturated`] when the class is at its limit; the request should be refused (kube-apiserver answers 429
    /// with `Retry-After: 1`).
    pub fn admit(&self, class: Class) -> Result<Permit, Saturated> {
        let semaphore = match class {
            Class::Exempt => None,
            Class::ReadOnly => self.read_only.as_ref(),
            Class::Mutating => self.mutating.as_ref(),
        };
        match semaphore {
            None => Ok(Permit { _slot: None }),
            Some(semaphore) => semaphore
                .clone()
                .try_acquire_owned()
                .map(|slot| Permit { _slot: Some(slot) })
                .map_err(|_| Saturated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_is_refused_at_its_own_limit_and_exempt_requests_never_are() {
        let limits = Limits::new(2, 1);
        let reads = [limits.admit(Class::ReadOnly), limits.admit(Class::ReadOnly)];
        assert!(reads.iter().all(Result::is_ok));
        assert_eq!(limits.admit(Class::ReadOnly).err(), Some(Saturated));
        let write = limits.admit(Class::Mutating);
        assert!(write.is_ok());
        assert_eq!(limits.admit(Class::Mutating).err(), Some(Saturated));
        assert!(limits.admit(Class::Exempt).is_ok());
        // A place given back is taken again.
        drop(write);
        assert!(limits.admit(Class::Mutating).is_ok());
    }

    #[test]
    fn zero_means_no_limit() {
        let limits = Limits::new(0, 0);
        let held: Vec<_> = (0..1000).map(|_| limits.admit(Class::Mutating)).collect();
        assert!(held.iter().all(Result::is_ok));
    }
}
