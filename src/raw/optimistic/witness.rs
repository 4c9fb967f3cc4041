//! Loom-visible stand-ins for record bytes.
//!
//! Records are plain memory, which loom does not track: a record read without
//! a happens-before edge from its writing would go unnoticed by the models.
//! In loom builds (`cfg(interner_loom)`) every possible record start in a slab
//! has a loom `UnsafeCell<()>`, its *witness*: the writer writes it (after
//! writing the record, before publishing it) and every reader reads it (before
//! reading the record), so a missing edge is a loom causality failure. The
//! directory entry of a slab links to the slab's witnesses, through a loom
//! cell too, so a reader that finds a slab in a directory it did not acquire
//! fails as well.
//!
//! In other builds every type here is empty and every function does nothing.

#[cfg(interner_loom)]
pub(crate) use self::tracked::{Link, Witnesses};
#[cfg(not(interner_loom))]
pub(crate) use self::untracked::{Link, Witnesses};

#[cfg(interner_loom)]
mod tracked {
    use crate::raw::sizes::SLAB_BYTES;
    use crate::sync::UnsafeCell;

    /// One witness per byte offset of a slab where a record may start (a
    /// record larger than a slab gets a slab of its own, at offset 0).
    /// Owned by the log's writer; the boxed cells never move.
    pub(crate) struct Witnesses(Box<[UnsafeCell<()>]>);

    impl Witnesses {
        pub(crate) fn new() -> Witnesses {
            Witnesses((0..SLAB_BYTES).map(|_| UnsafeCell::new(())).collect())
        }
    }

    /// A slab directory entry's link to its slab's witnesses.
    pub(crate) struct Link(UnsafeCell<*const UnsafeCell<()>>);

    impl Link {
        pub(crate) fn new() -> Link {
            Link(UnsafeCell::new(core::ptr::null()))
        }

        /// Links to `witnesses`, which must outlive every reader of `self`.
        pub(crate) fn set(&self, witnesses: &Witnesses) {
            let to = witnesses.0.as_ptr();
            // SAFETY: loom hands out a valid pointer and checks the access.
            self.0.with_mut(|link| unsafe { *link = to });
        }

        /// Links to what `other` links to (copying a directory).
        pub(crate) fn copy_from(&self, other: &Link) {
            // SAFETY: as in `set`, reading.
            let to = other.0.with(|link| unsafe { *link });
            // SAFETY: as in `set`.
            self.0.with_mut(|link| unsafe { *link = to });
        }

        /// The writer wrote the record at `offset`.
        pub(crate) fn wrote(&self, offset: usize) {
            self.witness(offset).with_mut(|_| ());
        }

        /// A reader is about to read the record at `offset`.
        pub(crate) fn read(&self, offset: usize) {
            self.witness(offset).with(|_| ());
        }

        fn witness(&self, offset: usize) -> &UnsafeCell<()> {
            // SAFETY: as in `set`, reading.
            let first = self.0.with(|link| unsafe { *link });
            assert!(
                !first.is_null(),
                "a slab reached without its directory entry"
            );
            assert!(offset < SLAB_BYTES);
            // SAFETY: a non-null link points to a slab's `SLAB_BYTES`
            // witnesses, owned by the log's writer, which outlives readers.
            unsafe { &*first.add(offset) }
        }
    }
}

#[cfg(not(interner_loom))]
mod untracked {
    /// Nothing outside loom builds.
    pub(crate) struct Witnesses;

    impl Witnesses {
        #[inline(always)]
        pub(crate) fn new() -> Witnesses {
            Witnesses
        }
    }

    /// Nothing outside loom builds.
    pub(crate) struct Link;

    impl Link {
        #[inline(always)]
        pub(crate) fn new() -> Link {
            Link
        }

        #[inline(always)]
        pub(crate) fn set(&self, _: &Witnesses) {}

        #[inline(always)]
        pub(crate) fn copy_from(&self, _: &Link) {}

        #[inline(always)]
        pub(crate) fn wrote(&self, _: usize) {}

        #[inline(always)]
        pub(crate) fn read(&self, _: usize) {}
    }
}
