//! Per-thread lock-contention counters, measured in-process (the VMs this
//! crate is developed on have no hardware performance counters).
//!
//! Every lock the crate takes is first tried; only when the try fails is the
//! failure counted and the blocking acquisition that follows timed. The
//! counters are thread-local and touched only on that contended branch, so an
//! uncontended lock pays nothing, and measuring adds no shared cache line
//! traffic (a shared counter would create the very contention it measures).
//! The optimistic strategy's hit path takes no lock, so it never counts.
//! Lock-free code counts its failed compare-and-swaps instead
//! ([`Contention::cas_retries`]).
//!
//! Reading the counters ([`current`], [`reset`]) is public API; the
//! recording is the crate's own, except `record_blocked` with the
//! `test-util` feature, for the workspace's harness to count its peers'
//! locks the same way.
//!
//! ```
//! use interned_string_db::contention;
//! contention::reset();
//! // ... intern from this thread ...
//! let c = contention::current();
//! assert_eq!(c.failed_try_locks, 0); // nothing contended here
//! ```

use std::cell::Cell;
use std::time::Instant;

/// Contention seen by one thread since its last [`reset`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Contention {
    /// Lock acquisitions whose first try failed.
    pub failed_try_locks: u64,
    /// Nanoseconds spent blocked in those acquisitions.
    pub lock_wait_ns: u64,
    /// Compare-and-swap attempts that failed because another thread changed
    /// the word first (the cost a lock-free insert pays instead of waiting).
    pub cas_retries: u64,
}

impl core::ops::AddAssign for Contention {
    fn add_assign(&mut self, other: Contention) {
        self.failed_try_locks += other.failed_try_locks;
        self.lock_wait_ns += other.lock_wait_ns;
        self.cas_retries += other.cas_retries;
    }
}

thread_local! {
    static COUNTERS: Cell<Contention> = const {
        Cell::new(Contention { failed_try_locks: 0, lock_wait_ns: 0, cas_retries: 0 })
    };
}

/// This thread's counters.
pub fn current() -> Contention {
    COUNTERS.with(Cell::get)
}

/// Zeroes this thread's counters.
pub fn reset() {
    COUNTERS.with(|c| c.set(Contention::default()));
}

/// Runs `acquire` (a blocking lock acquisition whose try just failed),
/// counting the failure and the time blocked, as the crate does for its own
/// locks. Feature `test-util`: for the perf harness, which instruments its
/// peers' locks the same way.
#[cfg(feature = "test-util")]
#[inline]
pub fn record_blocked<T>(acquire: impl FnOnce() -> T) -> T {
    blocked(acquire)
}

/// Runs `acquire` (a blocking lock acquisition whose try just failed),
/// counting the failure and the time blocked.
#[inline(never)]
pub(crate) fn blocked<T>(acquire: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let guard = acquire();
    let waited = start.elapsed().as_nanos() as u64;
    COUNTERS.with(|c| {
        let mut now = c.get();
        now.failed_try_locks += 1;
        now.lock_wait_ns += waited;
        c.set(now);
    });
    guard
}

/// Counts one failed compare-and-swap on this thread. Called only on the
/// failure branch, so a CAS that succeeds first time pays nothing.
#[inline]
pub(crate) fn record_cas_retry() {
    COUNTERS.with(|c| {
        let mut now = c.get();
        now.cas_retries += 1;
        c.set(now);
    });
}
