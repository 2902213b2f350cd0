//! The store's mutex, which in debug builds knows the thread holding it.
//!
//! Code that runs under the store lock and calls back into the store (a read from an admission plugin, say)
//! would lock it a second time on the same thread: with a plain mutex that blocks forever and, since every
//! request needs the lock, freezes the whole server. In debug builds such a re-entry panics at once with a
//! message naming the mistake, so tests catch it; release builds carry no bookkeeping.
//!
//! The guard is not `Send`, so it can never be held across an `.await`: the thread that locks is the thread
//! that unlocks.

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

#[cfg(debug_assertions)]
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(debug_assertions)]
mod owner {
    use std::sync::atomic::{AtomicU64, Ordering};

    static NEXT: AtomicU64 = AtomicU64::new(1);

    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }

    /// A number naming the current thread, never 0.
    pub(super) fn current() -> u64 {
        ID.with(|id| *id)
    }
}

/// A mutex that refuses re-entry from its holder in debug builds.
pub(super) struct StoreLock<T> {
    inner: Mutex<T>,
    /// The holder's thread number, 0 when free.
    #[cfg(debug_assertions)]
    owner: AtomicU64,
}

/// Access to the locked value; unlocks on drop.
pub(super) struct Guard<'a, T> {
    guard: MutexGuard<'a, T>,
    #[cfg(debug_assertions)]
    owner: &'a AtomicU64,
}

impl<T> StoreLock<T> {
    /// A lock around `value`.
    pub(super) fn new(value: T) -> Self {
        Self {
            inner: Mutex::new(value),
            #[cfg(debug_assertions)]
            owner: AtomicU64::new(0),
        }
    }

    /// Locks, waiting for the holder. A poisoned lock is taken over: every change under it is applied whole
    /// before anything that can panic.
    ///
    /// # Panics
    /// In debug builds, when the calling thread already holds the lock (which would deadlock).
    pub(super) fn lock(&self) -> Guard<'_, T> {
        #[cfg(debug_assertions)]
        assert_ne!(
            self.owner.load(Ordering::Relaxed),
            owner::current(),
            "re-entered the store lock: code running under it called back into the store, which deadlocks; \
             read what the write needs before committing"
        );
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        #[cfg(debug_assertions)]
        self.owner.store(owner::current(), Ordering::Relaxed);
        Guard {
            guard,
            #[cfg(debug_assertions)]
            owner: &self.owner,
        }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

#[cfg(debug_assertions)]
impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        // Cleared while the mutex is still held (the field guard drops after this body), so no other thread
        // can have recorded itself yet.
        self.owner.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_taken_again_after_release_and_from_other_threads() {
        let lock = std::sync::Arc::new(StoreLock::new(0));
        *lock.lock() += 1;
        *lock.lock() += 1;
        let other = lock.clone();
        std::thread::spawn(move || *other.lock() += 1)
            .join()
            .expect("no panic");
        assert_eq!(*lock.lock(), 3);
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "re-entered the store lock")]
    fn re_entry_from_the_holder_panics_instead_of_deadlocking() {
        let lock = StoreLock::new(());
        let _held = lock.lock();
        let _again = lock.lock();
    }
}
