//! The entries in insertion order: an append-only array of tagged entry
//! pointers, in segments of doubling size published by compare-and-swap.
//!
//! An insert claims its position *before* it tries the table, by swinging
//! the position's slot from null to its entry tagged [`PENDING`]; then it
//! marks the slot live (untagged) if it won the table, or [`DEAD`] if it
//! found the id there already. Claiming first means that every entry a
//! thread can find in the table already has a position at or below the
//! frontier (`next`), so a walk that starts after an intern returned sees
//! it; a walk that meets a pending entry asks the table whether it is live.
//! The position's segment is published before the claim, so nothing can fail
//! between winning the table and marking the position.

use core::ptr::{self, NonNull};

use super::entry::{self, EntryRef, Header};
use crate::raw::sizes::{FIRST_BITS, SEGMENTS};
use crate::sync::{AtomicPtr, AtomicUsize, Ordering};

/// Tag of a claimed position whose insert has not yet been decided.
pub(crate) const PENDING: usize = 0b01;
/// Tag of a position whose insert found its id already stored.
pub(crate) const DEAD: usize = 0b10;

/// The segment and offset of position `p`: segment `k` holds
/// `2^(FIRST_BITS + k)` positions.
#[inline]
fn locate(p: usize) -> (usize, usize) {
    let q = p + (1 << FIRST_BITS);
    let k = (usize::BITS - 1 - q.leading_zeros() - FIRST_BITS) as usize;
    (k, q - (1 << (FIRST_BITS as usize + k)))
}

#[inline]
fn segment_len(k: usize) -> usize {
    1 << (FIRST_BITS as usize + k)
}

/// What a walk found at a position.
pub(crate) enum Found<'a> {
    /// A live entry.
    Live(EntryRef<'a>),
    /// An entry whose insert is undecided: live only if the table holds it.
    Pending(EntryRef<'a>),
    /// A lost insert: nothing.
    Dead,
}

/// The order array.
pub(crate) struct Order {
    /// The first position no claim has been seen at.
    next: AtomicUsize,
    /// Segment `k`'s first slot, or null; never unpublished while shared.
    segments: Box<[AtomicPtr<AtomicPtr<Header>>]>,
}

impl Order {
    /// An empty order array (no segment allocated); `None` if its directory
    /// cannot be allocated.
    pub(crate) fn try_new() -> Option<Order> {
        Some(Order {
            next: AtomicUsize::new(0),
            segments: atomic_nulls(SEGMENTS)?,
        })
    }

    /// Claims the next position for `entry` (tagged [`PENDING`]); `None` if
    /// its segment cannot be allocated (nothing claimed then).
    pub(crate) fn claim(&self, entry: NonNull<Header>) -> Option<usize> {
        let pending = entry.as_ptr().map_addr(|a| a | PENDING);
        loop {
            // Relaxed: the slot's compare-and-swap below decides the claim;
            // a stale `p` only fails it.
            let p = self.next.load(Ordering::Relaxed);
            let slot = self.slot_or_grow(p)?;
            let claimed = slot
                .compare_exchange(
                    ptr::null_mut(),
                    pending,
                    // Release: publishes the entry's contents to walks that
                    // read the pending pointer.
                    Ordering::Release,
                    Ordering::Relaxed,
                )
                .is_ok();
            // Advance the frontier past `p`, whoever claimed it: a claimed
            // slot is never null again, so helping is always right.
            let _ = self.next.compare_exchange(
                p,
                p + 1,
                // Release: a walk that acquires `p + 1` sees the claim.
                Ordering::Release,
                Ordering::Relaxed,
            );
            if claimed {
                return Some(p);
            }
            // No spin: the frontier has moved past `p` (here or by another
            // thread), so the loop makes progress and never waits. (A
            // spin would also let loom run the claimer on, hiding the
            // interleaving where a walk meets the claim still pending.)
            crate::contention::record_cas_retry();
        }
    }

    /// Marks the entry claimed at `p` live (it won the table) or dead.
    pub(crate) fn decide(&self, p: usize, entry: NonNull<Header>, live: bool) {
        let value = if live {
            entry.as_ptr()
        } else {
            entry.as_ptr().map_addr(|a| a | DEAD)
        };
        // A swap, Relaxed: a read-modify-write continues the release
        // sequence of the claim's compare-and-swap, so a walk that acquires
        // the decided value sees the entry as well as one that acquires the
        // pending value (a plain store would need Release for that).
        self.slot(p)
            .expect("a claimed position's segment exists")
            .swap(value, Ordering::Relaxed);
    }

    /// The frontier: every position below it is claimed.
    pub(crate) fn end(&self) -> usize {
        // Acquire: pairs with the frontier's release in `claim`.
        self.next.load(Ordering::Acquire)
    }

    /// What position `p` (below [`end`](Self::end)) holds. The entry lives
    /// as long as `self` is borrowed.
    pub(crate) fn get(&self, p: usize) -> Found<'_> {
        let slot = self.slot(p).expect("a claimed position's segment exists");
        // Acquire: pairs with the claim's release: the entry is complete.
        let value = slot.load(Ordering::Acquire);
        assert!(!value.is_null(), "a position below the frontier is claimed");
        // SAFETY: a non-null slot holds a tagged pointer to an entry made by
        // `entry::alloc`, written before the claim's release that this
        // acquire read (or read a later value of); entries are freed only by
        // `clear`, which needs `&mut self`.
        let found = unsafe { EntryRef::from_tagged(value) };
        match value.addr() & entry::TAG_MASK {
            0 => Found::Live(found),
            PENDING => Found::Pending(found),
            _ => Found::Dead,
        }
    }

    /// Position `p`'s slot, if its segment is published.
    fn slot(&self, p: usize) -> Option<&AtomicPtr<Header>> {
        let (k, offset) = locate(p);
        // Acquire: pairs with the segment's publication in `slot_or_grow`.
        let first = self.segments.get(k)?.load(Ordering::Acquire);
        if first.is_null() {
            return None;
        }
        // SAFETY: a published segment `k` is an allocation of
        // `segment_len(k)` slots (`offset` is below it), freed only by
        // `clear` (`&mut self`).
        Some(unsafe { &*first.add(offset) })
    }

    /// Position `p`'s slot, publishing its segment if need be; `None` if the
    /// segment cannot be allocated or `p` is past the last one.
    fn slot_or_grow(&self, p: usize) -> Option<&AtomicPtr<Header>> {
        if let Some(slot) = self.slot(p) {
            return Some(slot);
        }
        let (k, _) = locate(p);
        if k >= SEGMENTS {
            return None;
        }
        let fresh =
            Box::into_raw(atomic_nulls::<Header>(segment_len(k))?).cast::<AtomicPtr<Header>>();
        if self.segments[k]
            .compare_exchange(
                ptr::null_mut(),
                fresh,
                // Release: the segment's null slots were written before.
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_err()
        {
            crate::contention::record_cas_retry();
            // SAFETY: `fresh` was never published: this thread owns it.
            drop(unsafe { boxed_segment(fresh, k) });
        }
        self.slot(p)
    }

    /// Frees every entry and segment and empties the array.
    pub(crate) fn clear(&mut self) {
        let end = self.next.get_mut_or_load();
        for p in 0..end {
            let (k, offset) = locate(p);
            let first = self.segments[k].get_mut_or_load();
            // SAFETY: exclusive access; the segment of a claimed position is
            // published, and the slot holds the entry claimed there.
            let value = unsafe { (*first.add(offset)).get_mut_or_load() };
            let untagged = value.map_addr(|a| a & !entry::TAG_MASK);
            // SAFETY: every entry has exactly one position, so each is freed
            // once; nothing else refers to it after `clear`.
            unsafe { entry::free(NonNull::new(untagged).expect("claimed")) };
        }
        for (k, segment) in self.segments.iter_mut().enumerate() {
            let first = segment.get_mut_or_load();
            if !first.is_null() {
                // SAFETY: published by `slot_or_grow` from a box of this
                // length, freed once (then unpublished).
                drop(unsafe { boxed_segment(first, k) });
                segment.store(ptr::null_mut(), Ordering::Relaxed);
            }
        }
        self.next.store(0, Ordering::Relaxed);
    }
}

impl Drop for Order {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Rebuilds segment `k`'s box from its first slot.
///
/// # Safety
///
/// `first` came from `Box::into_raw` of a boxed slice of `segment_len(k)`
/// slots, and is rebuilt once.
unsafe fn boxed_segment(first: *mut AtomicPtr<Header>, k: usize) -> Box<[AtomicPtr<Header>]> {
    let slice = ptr::slice_from_raw_parts_mut(first, segment_len(k));
    // SAFETY: the caller's contract.
    unsafe { Box::from_raw(slice) }
}

/// `len` null atomic pointers, allocated fallibly.
pub(crate) fn atomic_nulls<T>(len: usize) -> Option<Box<[AtomicPtr<T>]>> {
    let mut slots = Vec::new();
    slots.try_reserve_exact(len).ok()?;
    slots.extend((0..len).map(|_| AtomicPtr::new(ptr::null_mut())));
    Some(slots.into_boxed_slice())
}

/// `get_mut` where std has it; a load in loom builds (whose atomics have no
/// `get_mut`), which exclusive access makes equivalent.
pub(crate) trait GetMutOrLoad {
    type Value;
    fn get_mut_or_load(&mut self) -> Self::Value;
}

impl<T> GetMutOrLoad for AtomicPtr<T> {
    type Value = *mut T;
    fn get_mut_or_load(&mut self) -> *mut T {
        #[cfg(not(interner_loom))]
        return *self.get_mut();
        #[cfg(interner_loom)]
        return self.load(Ordering::Relaxed);
    }
}

impl GetMutOrLoad for AtomicUsize {
    type Value = usize;
    fn get_mut_or_load(&mut self) -> usize {
        #[cfg(not(interner_loom))]
        return *self.get_mut();
        #[cfg(interner_loom)]
        return self.load(Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_fill_segments_in_order() {
        let mut expected = Vec::new();
        for k in 0..3 {
            for offset in 0..segment_len(k) {
                expected.push((k, offset));
            }
        }
        let got: Vec<_> = (0..expected.len()).map(locate).collect();
        assert_eq!(got, expected);
    }
}
