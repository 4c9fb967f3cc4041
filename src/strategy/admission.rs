//! What decides an insert, for every strategy: the compare that tells a
//! repeat from a conflict, byte-cap checks, fallible copies, and, for
//! strategies with no lock around their state, an open flag and a byte
//! budget.

use super::shard::{ConflictSink, Refusal};
use super::Registered;
use crate::sync::{AtomicBool, AtomicUsize, Ordering};

/// What interning `bytes` under `id` found when the shard already stores
/// `stored` under it: the same string, or a conflict, recorded in
/// `conflicts`. One definition for every strategy.
#[inline]
pub(crate) fn compare(
    stored: &[u8],
    bytes: &[u8],
    id: u64,
    conflicts: ConflictSink<'_>,
) -> Registered {
    if crate::raw::bytes_eq(stored, bytes) {
        Registered::AlreadyPresent
    } else {
        conflicts.record(id, stored, bytes);
        Registered::Conflict
    }
}

/// An NC's open flag, for strategies whose state has no lock around it.
/// Closing is then a flag: an intern already past its check may still
/// complete after the close returns.
#[derive(Debug)]
#[allow(dead_code)] // its users are optional (and not in loom builds)
pub(crate) struct OpenFlag(AtomicBool);

#[allow(dead_code)] // as above
impl OpenFlag {
    /// An open NC.
    pub(crate) fn new() -> Self {
        OpenFlag(AtomicBool::new(true))
    }

    /// Whether the NC is open (acquire: pairs with `set`).
    #[inline]
    pub(crate) fn is_open(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// `Err(Closed)` if the NC is closed.
    #[inline]
    pub(crate) fn check(&self) -> Result<(), Refusal> {
        if self.is_open() {
            Ok(())
        } else {
            Err(Refusal::Closed)
        }
    }

    /// Opens or closes the NC.
    pub(crate) fn set(&self, open: bool) {
        self.0.store(open, Ordering::Release);
    }
}

/// An owned copy of `bytes`, allocated fallibly: running out of memory
/// is a refusal, not an abort.
pub(crate) fn try_copy(bytes: &[u8]) -> Result<Box<[u8]>, Refusal> {
    let mut owned = Vec::new();
    owned
        .try_reserve_exact(bytes.len())
        .map_err(|_| Refusal::OutOfMemory)?;
    owned.extend_from_slice(bytes);
    Ok(owned.into_boxed_slice())
}

/// Whether `needed` more bytes fit under `cap` beside `used`.
pub(crate) fn check_cap(used: usize, cap: usize, needed: usize) -> Result<(), Refusal> {
    if needed > cap.saturating_sub(used) {
        return Err(Refusal::CapReached { used, cap });
    }
    Ok(())
}

/// The string bytes an NC stores, against its cap, for strategies whose
/// inserts are not serialised by one lock: an insert reserves its bytes
/// first and releases them if it does not store them.
#[derive(Debug)]
#[allow(dead_code)] // its users are optional (and not in loom builds)
pub(crate) struct ByteBudget {
    /// Bytes stored, or reserved by inserts in progress.
    used: AtomicUsize,
    cap: usize,
}

#[allow(dead_code)] // as above
impl ByteBudget {
    /// Nothing used, at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        ByteBudget {
            used: AtomicUsize::new(0),
            cap,
        }
    }

    /// Reserves `needed` bytes, or refuses with `CapReached`. Counts each
    /// failed compare-and-swap in this thread's contention counters.
    pub(crate) fn reserve(&self, needed: usize) -> Result<(), Refusal> {
        let mut current = self.used.load(Ordering::Relaxed);
        loop {
            check_cap(current, self.cap, needed)?;
            // Relaxed: the counter only bounds the total; it orders nothing.
            match self.used.compare_exchange(
                current,
                current + needed,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => {
                    crate::contention::record_cas_retry();
                    crate::sync::spin_loop();
                    current = now;
                }
            }
        }
    }

    /// Gives back bytes reserved for an insert that stored nothing.
    pub(crate) fn release(&self, reserved: usize) {
        // Relaxed: as in `reserve`.
        self.used.fetch_sub(reserved, Ordering::Relaxed);
    }

    /// Bytes used (exact when no insert is running).
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The cap.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }
}
