//! A thread's run of misses: the prediction that lets a filling writer
//! skip the lock-free probe.
//!
//! A miss pays for two probes of its name's bucket: the lock-free one,
//! which must wait for the bucket's line before it can say "absent", and
//! the exact one under the writer lock. Past the cache, the first wait is
//! most of a miss (`docs/history.md`, "A thread's run of misses"). A thread
//! whose last [`PREDICT_AFTER`] interns were all inserts is predicted to
//! miss again: its next intern prefetches the bucket's line and goes down
//! the miss path without the lock-free probe (`find_hit`), so that the
//! line arrives while it computes the id and takes the lock, whose probe
//! decides. In an NC that moved to stripes, the line is the stripe's
//! bucket: the frozen shard is still probed lock-free (exact, and most
//! often cached) while it arrives, and the stripe's lock decides. A name
//! found there (the prediction wrong) ends the run: the thread's next
//! intern probes first again. A predicted miss that finds the lock (or its
//! stripe's) held probes lock-free before it waits, so that a hit never
//! waits for a lock, and never moves the NC to stripes; so does one into
//! an NC due to move to stripes at its size (the striped strategy), and
//! one whose table would have to allocate a spare bucket first: a hit
//! allocates nothing.
//!
//! The run is the thread's own (a thread-local count, no shared store): a
//! thread that reads, or mostly hits, never skips a probe, however many
//! misses other threads make. Only a plain `intern` reads the prediction;
//! `intern_with_outcome`, `register` and batches go their own ways. The
//! count is a hint: either answer is correct, only the cost differs.

use core::cell::Cell;

/// Inserts in a row after which a thread's next intern is predicted to
/// miss. A wrong prediction costs the hit the id's SipHash and an
/// uncontended lock (tens of nanoseconds), once a run; a run of this many
/// inserts saves several times that once the table is past the cache.
pub(crate) use crate::raw::PREDICT_AFTER;

#[cfg(not(interner_loom))]
crate::sync::thread_local! {
    /// The calling thread's inserts since its last hit (saturating).
    static RUN: Cell<u32> = const { Cell::new(0) };
}
// Loom's takes no `const` initializer.
#[cfg(interner_loom)]
crate::sync::thread_local! {
    static RUN: Cell<u32> = Cell::new(0);
}

/// The calling thread's run of inserts, read once by a hit path: compare
/// it with [`PREDICT_AFTER`]; on a hit, [`end`] it if it is not 0 (no
/// store for a thread that mostly hits).
#[inline(always)]
pub(crate) fn current() -> u32 {
    RUN.with(Cell::get)
}

/// Ends the calling thread's run: an intern found its name.
#[inline(always)]
pub(crate) fn end() {
    RUN.with(|cell| cell.set(0));
}

/// Extends the calling thread's run: an intern inserted its name.
#[inline(always)]
pub(crate) fn inserted() {
    RUN.with(|cell| cell.set(cell.get().saturating_add(1)));
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_run_grows_with_inserts_and_ends_at_a_hit() {
        std::thread::spawn(|| {
            assert_eq!(current(), 0);
            for expected in 1..=PREDICT_AFTER {
                inserted();
                assert_eq!(current(), expected);
            }
            end();
            assert_eq!(current(), 0);
            // Another thread's run is its own.
            inserted();
            std::thread::spawn(|| assert_eq!(current(), 0))
                .join()
                .unwrap();
            assert_eq!(current(), 1);
        })
        .join()
        .unwrap();
    }
}
