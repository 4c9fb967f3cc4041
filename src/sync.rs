//! The one place that chooses between `std` and `loom` synchronisation
//! primitives (the `sharded-slab` pattern).
//!
//! Build with `RUSTFLAGS="--cfg interner_loom"` to swap every atomic, lock and
//! cell in the crate for loom's model-checked versions. No other module imports
//! `std::sync` directly, so nothing escapes the model.
//!
//! Locks are re-exported with poison recovery built in ([`read`], [`write()`],
//! [`lock`]): a panic on another thread while it held a lock must not make the
//! interner unusable. Every protocol in this crate keeps its data consistent at
//! every point where user code (a `log` call) can panic, so taking the data out
//! of a poisoned lock is sound; see `docs/design.md`.

#[cfg(interner_loom)]
pub(crate) use loom::{
    cell::UnsafeCell,
    hint::spin_loop,
    sync::{
        atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
        Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
};

#[cfg(not(interner_loom))]
pub(crate) use std::{
    hint::spin_loop,
    sync::{
        atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
        Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
};

/// `thread_local!`: in loom builds loom's, one value per modelled thread
/// and per execution, so that a model stays deterministic (a thread's run
/// of misses, `strategy::optimistic::miss_run`).
#[cfg(interner_loom)]
pub(crate) use loom::thread_local;
#[cfg(not(interner_loom))]
pub(crate) use std::thread_local;

/// `Arc`, for the `arc-swap` strategy (not in loom builds).
#[cfg(all(feature = "arc-swap", not(interner_loom)))]
pub(crate) use std::sync::Arc;

/// Crossbeam's reader-scalable lock, for the `sharded-lock` strategy. Loom
/// does not model it, so that strategy is not in loom builds.
#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
pub(crate) use crossbeam_utils::sync::{ShardedLock, ShardedLockReadGuard, ShardedLockWriteGuard};

/// `parking_lot`'s RwLock, for the `parking-lot` strategy (not in loom
/// builds either).
#[cfg(all(feature = "parking-lot", not(interner_loom)))]
pub(crate) use parking_lot::{
    RwLock as ParkingLotRwLock, RwLockReadGuard as ParkingLotReadGuard,
    RwLockWriteGuard as ParkingLotWriteGuard,
};

/// `OnceLock` for the process-global instance and dashmap's shard count.
/// Loom has none, and neither is part of any loom model.
#[cfg(not(interner_loom))]
pub(crate) use std::sync::OnceLock;

/// Unwraps a lock result, recovering the guard if another thread panicked
/// while holding the lock.
fn recover<G>(result: std::sync::LockResult<G>) -> G {
    result.unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Tries `try_acquire` first; if the lock is held, counts the failure and
/// times the blocking `acquire` in this thread's
/// [`contention`](crate::contention) counters. Recovers from poisoning.
#[inline]
pub(crate) fn acquire<G>(
    try_acquire: impl FnOnce() -> std::sync::TryLockResult<G>,
    acquire: impl FnOnce() -> std::sync::LockResult<G>,
) -> G {
    match try_acquire() {
        Ok(guard) => guard,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => {
            crate::contention::blocked(|| recover(acquire()))
        }
    }
}

/// Takes a read lock, recovering it from poisoning: a panic on another
/// thread while it held the lock must not make the interner unusable.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    acquire(|| lock.try_read(), || lock.read())
}

/// Takes a write lock, recovering from poisoning (see [`read`]).
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    acquire(|| lock.try_write(), || lock.write())
}

/// [`acquire`] for a lock without poisoning (`parking_lot`'s).
#[cfg(all(feature = "parking-lot", not(interner_loom)))]
#[inline]
pub(crate) fn acquire_unpoisoned<G>(
    try_acquire: impl FnOnce() -> Option<G>,
    acquire: impl FnOnce() -> G,
) -> G {
    try_acquire().unwrap_or_else(|| crate::contention::blocked(acquire))
}

/// The mutex if no thread holds it, recovering it from poisoning (see
/// [`read`]); `None` if one does.
#[inline]
pub(crate) fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// Takes a mutex, recovering from poisoning (see [`read`]). A held mutex
/// is tried again 16 times before the thread blocks, the spin-loop hints
/// between tries doubling from 1 to 256 (2,303 in all).
///
/// Spinning: hot sections (a miss's insert) are short, but some outlast
/// `std`'s own spin (a miss whose new slab takes its first page faults),
/// and once a waiter sleeps every unlock pays a `futex` wake. Backing off:
/// a waiter that retried at once took the lock whenever its holder let it
/// go, so two threads inserting into one NC took turns on cold lines;
/// backing off lets the holder take it again with its lines warm. Measured:
/// `docs/history.md` ("The writer lock"). Not in loom builds: the retries
/// would only add interleavings that `lock` already has.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    lock_waiting(
        mutex,
        Wait {
            spins: 16,
            max_backoff: 256,
            yields: 0,
        },
    )
}

/// [`lock`] for one of many locks that writers rarely meet on (a moved
/// NC's stripes): 4 short tries (at most 16 hints apart), then up to 8
/// [`yield_now`](std::thread::yield_now)s, each followed by a try, before
/// the thread blocks. A meeting there is rare (about one miss in 100 at
/// two threads, with 64 stripes), and its holder is most often a thread
/// that lost its CPU: yielding lets it run (`docs/history.md`, "The
/// stripe lock yields").
pub(crate) fn lock_yielding<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    lock_waiting(
        mutex,
        Wait {
            spins: 4,
            max_backoff: 16,
            yields: 8,
        },
    )
}

/// How a lock waits for a held mutex before it blocks.
#[derive(Clone, Copy)]
struct Wait {
    /// Tries after spin-loop hints, their count doubling from 1.
    spins: usize,
    /// The most hints between two tries.
    max_backoff: usize,
    /// Tries after a `yield_now` each, once the spins are spent.
    yields: usize,
}

/// Takes `mutex`, waiting as `wait` says while it is held, recovering from
/// poisoning. Loom builds block at once (see [`lock`]).
#[inline]
fn lock_waiting<T>(mutex: &Mutex<T>, wait: Wait) -> MutexGuard<'_, T> {
    #[cfg(interner_loom)]
    let _ = (wait.spins, wait.max_backoff, wait.yields);
    acquire(
        || mutex.try_lock(),
        || {
            #[cfg(not(interner_loom))]
            {
                let mut hints = 1;
                for _ in 0..wait.spins {
                    for _ in 0..hints {
                        spin_loop();
                    }
                    hints = (hints * 2).min(wait.max_backoff);
                    if let Some(guard) = try_lock(mutex) {
                        return Ok(guard);
                    }
                }
                for _ in 0..wait.yields {
                    std::thread::yield_now();
                    if let Some(guard) = try_lock(mutex) {
                        return Ok(guard);
                    }
                }
            }
            mutex.lock()
        },
    )
}

/// A number no earlier call in this process returned, never 0: names a db's
/// contents between resets, so that a cursor can tell it is stale, and
/// temporary files apart. A plain
/// counter in every build (loom models do not cover it: it orders nothing).
pub(crate) fn unique_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
