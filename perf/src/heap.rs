//! The allocator's state between subjects.
//!
//! A subject dropped before the next one is timed leaves its frees to the
//! allocator: glibc keeps small freed chunks in fast bins and merges them
//! all (`malloc_consolidate`) at the next large request, in whatever the
//! next subject does first. Filling one NC of 10^6 names after a peer that
//! freed 10^6 small strings, that merge cost the next subject some 100 ns
//! an insert, charged by the order of the subjects (`docs/benchmarks.md`).
//! [`settle`] does it untimed, before every timed fill or cell.

/// Merges the allocator's freed chunks and returns free memory to the
/// system, so that each subject starts from the same kind of heap: what it
/// allocates it takes fresh (on glibc; elsewhere nothing).
pub fn settle() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointers; any pad is valid.
    unsafe {
        libc::malloc_trim(0);
    }
}
