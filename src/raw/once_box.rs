//! A value on the heap, made at most once, read without a lock: each NC's
//! context, made by the first call that writes to the NC, so that an NC
//! that never sees a string costs the db one pointer.
//!
//! # Protocol
//!
//! The box is a pointer, null until made. A reader loads it with
//! **acquire**: a non-null pointer names a value whose construction was
//! published with it. A maker builds the value on the heap, then swings the
//! pointer from null with a **release** compare-and-swap; a maker that
//! loses the race frees its own value and takes the winner's, **acquired**
//! by the failed compare-and-swap. The value is freed only through `&mut`
//! ([`OnceBox::take`], drop), when no reader can hold it.
//!
//! In loom builds the value carries a loom cell, its *witness*, written by
//! its maker before the publishing swing and read on every access, so that
//! a missing edge between making and reading is a loom causality failure
//! (as the log's records have, `optimistic/witness.rs`).

use core::ptr::{self, NonNull};

use super::alloc::try_box;
use crate::sync::{AtomicPtr, Ordering};

/// What the pointer names: the value, and in loom builds its witness.
struct Node<T> {
    value: T,
    #[cfg(interner_loom)]
    witness: crate::sync::UnsafeCell<()>,
}

impl<T> Node<T> {
    fn new(value: T) -> Node<T> {
        Node {
            value,
            #[cfg(interner_loom)]
            witness: crate::sync::UnsafeCell::new(()),
        }
    }

    /// Marks the value made: before it is published.
    #[inline(always)]
    fn made(&self) {
        #[cfg(interner_loom)]
        self.witness.with_mut(|_| ());
    }

    /// The value, read after its publication was acquired.
    #[inline(always)]
    fn value(&self) -> &T {
        #[cfg(interner_loom)]
        self.witness.with(|_| ());
        &self.value
    }
}

/// A heap value made at most once (`once_cell::race::OnceBox`, with a
/// fallible maker and a loom witness).
pub(crate) struct OnceBox<T> {
    ptr: AtomicPtr<Node<T>>,
}

// SAFETY: the box owns its value (sending the box sends the value), and
// shares `&T` with every thread that reads it (so `T: Sync`); a value made
// on one thread may be dropped on another (so `T: Send`).
unsafe impl<T: Send + Sync> Send for OnceBox<T> {}
// SAFETY: as above: `&OnceBox` hands out `&T` and may make the value (a
// `T` made on this thread, read and later dropped on others).
unsafe impl<T: Send + Sync> Sync for OnceBox<T> {}

impl<T> OnceBox<T> {
    /// A box with no value yet.
    pub(crate) fn new() -> OnceBox<T> {
        OnceBox {
            ptr: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The value, if made. Acquire: a value seen is whole.
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        let node = NonNull::new(self.ptr.load(Ordering::Acquire))?;
        // SAFETY: a published node was made whole before its release swing
        // (acquired above) and is freed only through `&mut self`.
        Some(unsafe { node.as_ref() }.value())
    }

    /// The value, made by `make` if no call made it yet. `None` if `make`
    /// or the allocation fails (nothing is made then; a later call tries
    /// again). Racing callers may each call `make`; one value wins, the
    /// others are dropped, and every caller gets the winner.
    pub(crate) fn get_or_try_init(&self, make: impl FnOnce() -> Option<T>) -> Option<&T> {
        if let Some(value) = self.get() {
            return Some(value);
        }
        let node = Box::into_raw(try_box(Node::new(make()?))?);
        // SAFETY: just made, not shared yet.
        unsafe { &*node }.made();
        let won = match self.ptr.compare_exchange(
            ptr::null_mut(),
            node,
            // Publishes the node, made above.
            Ordering::Release,
            // Acquires the winner's node.
            Ordering::Acquire,
        ) {
            Ok(_) => node,
            Err(winner) => {
                // SAFETY: ours, never published.
                drop(unsafe { Box::from_raw(node) });
                winner
            }
        };
        // SAFETY: published (by us, or by the winner, acquired), freed only
        // through `&mut self`.
        Some(unsafe { &*won }.value())
    }

    /// Takes the value out, leaving the box empty.
    pub(crate) fn take(&mut self) -> Option<T> {
        let node = self.ptr.swap(ptr::null_mut(), Ordering::Relaxed);
        if node.is_null() {
            return None;
        }
        // SAFETY: made by `Box::into_raw`; `&mut self`: no reader holds it.
        Some(unsafe { Box::from_raw(node) }.value)
    }
}

impl<T> Drop for OnceBox<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl<T> Default for OnceBox<T> {
    fn default() -> Self {
        OnceBox::new()
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;
    use crate::raw::alloc::refusals;

    #[test]
    fn made_once_then_read() {
        let cell = OnceBox::new();
        assert!(cell.get().is_none());
        assert_eq!(cell.get_or_try_init(|| Some(7)), Some(&7));
        assert_eq!(cell.get_or_try_init(|| Some(8)), Some(&7));
        assert_eq!(cell.get(), Some(&7));
    }

    #[test]
    fn a_failed_maker_makes_nothing() {
        let cell = OnceBox::<u32>::new();
        assert_eq!(cell.get_or_try_init(|| None), None);
        refusals::arm();
        let refused = cell.get_or_try_init(|| Some(1));
        refusals::disarm();
        assert_eq!(refused, None, "the allocation failed");
        assert!(cell.get().is_none());
        assert_eq!(cell.get_or_try_init(|| Some(2)), Some(&2));
    }

    #[test]
    fn take_empties_and_frees() {
        let mut cell = OnceBox::new();
        cell.get_or_try_init(|| Some(String::from("x")));
        assert_eq!(cell.take().as_deref(), Some("x"));
        assert!(cell.get().is_none() && cell.take().is_none());
        cell.get_or_try_init(|| Some(String::from("z")));
        // Dropped with the box (Miri checks that it is freed).
    }

    #[test]
    fn racing_makers_agree() {
        let cell = &OnceBox::new();
        let seen: Vec<usize> = std::thread::scope(|s| {
            let makers: Vec<_> = (0..4)
                .map(|i| s.spawn(move || *cell.get_or_try_init(|| Some(i)).unwrap()))
                .collect();
            makers.into_iter().map(|m| m.join().unwrap()).collect()
        });
        assert!(seen.iter().all(|&v| v == seen[0]));
    }
}
