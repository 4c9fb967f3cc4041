//! The by-bytes table's memory: buckets, the segments and overflow pools
//! they live in, and the segment directories, all owned by the
//! [`TableWriter`] and freed only through it (`&mut`: `reset`, drop).

use core::ptr::{self, NonNull};

use super::table::{SEGMENT_BUCKETS, WORDS};
use crate::raw::alloc::{try_boxed_slice, AllocError};
use crate::sync::{AtomicPtr, AtomicU64};

/// One 64-byte line: [`WORDS`] slot words and a link to an overflow bucket
/// (`table.rs` has the protocol).
#[repr(C, align(64))]
pub(super) struct Bucket {
    pub(super) words: [AtomicU64; WORDS],
    pub(super) next: AtomicPtr<Bucket>,
}

impl Bucket {
    pub(super) fn new() -> Bucket {
        Bucket {
            words: core::array::from_fn(|_| AtomicU64::new(0)),
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

/// A segment directory: a boxed slice of segment pointers turned raw, so
/// that readers reach a segment pointer in one load from the published
/// first element (they never need the length: a bucket index below the
/// shape they acquired is always in range), and so that moving its owner
/// asserts nothing about them.
#[derive(Clone, Copy)]
pub(super) struct SegmentDir(NonNull<[AtomicPtr<Bucket>]>);

impl SegmentDir {
    /// An empty directory of `capacity` slots, or `None` if the
    /// allocation fails.
    pub(super) fn try_new(capacity: usize) -> Option<SegmentDir> {
        let slots = try_boxed_slice(capacity, || AtomicPtr::new(ptr::null_mut()))?;
        Some(SegmentDir(NonNull::from(Box::leak(slots))))
    }

    /// The slots.
    pub(super) fn slots(&self) -> &[AtomicPtr<Bucket>] {
        // SAFETY: a live directory (freed only by `free`, through the
        // writer's `&mut`).
        unsafe { self.0.as_ref() }
    }

    /// The pointer readers load: the first slot.
    pub(super) fn first(self) -> *mut AtomicPtr<Bucket> {
        self.0.cast::<AtomicPtr<Bucket>>().as_ptr()
    }

    /// Frees the directory.
    ///
    /// # Safety
    ///
    /// No reader may hold it any more, and it is freed once.
    pub(super) unsafe fn free(self) {
        // SAFETY: came from `Box::leak` of a boxed slice (the caller's
        // contract covers the rest).
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// What only the writer touches: ownership of every block, and the count.
#[derive(Default)]
pub(crate) struct TableWriter {
    /// Segments, each a `Box<[Bucket]>` of `SEGMENT_BUCKETS` turned raw.
    pub(super) segments: Vec<NonNull<Bucket>>,
    /// Blocks of `SEGMENT_BUCKETS` overflow buckets, handed out in order:
    /// one allocation per 4 KiB, not one per bucket.
    pub(super) pools: Vec<NonNull<Bucket>>,
    /// Buckets of the last pool not handed out yet.
    pub(super) pool_left: usize,
    /// Empty overflow buckets taken ahead (by `Table::reserve` and before
    /// a split), so that placing words never fails half-way.
    pub(super) spare: Vec<NonNull<Bucket>>,
    /// The published directory.
    pub(super) dir: Option<SegmentDir>,
    /// Directories replaced by bigger ones; readers may still hold them.
    pub(super) retired_dirs: Vec<SegmentDir>,
    pub(super) entries: usize,
}

// SAFETY: the blocks are atomics shared with readers by the table's protocol;
// the writer only owns the right to free them, through `&mut`.
unsafe impl Send for TableWriter {}

impl TableWriter {
    /// The published directory's first slot.
    pub(super) fn current_dir(&self) -> NonNull<AtomicPtr<Bucket>> {
        let dir = self.dir.expect("an initialised table");
        NonNull::new(dir.first()).expect("a directory is never null")
    }

    /// Makes sure the writer holds at least `count` spare buckets, taken
    /// from the pools.
    pub(super) fn stock_spares(&mut self, count: usize) -> Result<(), AllocError> {
        self.spare
            .try_reserve(count.saturating_sub(self.spare.len()))
            .map_err(|_| AllocError)?;
        while self.spare.len() < count {
            if self.pool_left == 0 {
                self.pools.try_reserve(1).map_err(|_| AllocError)?;
                self.pools.push(new_segment().ok_or(AllocError)?);
                self.pool_left = SEGMENT_BUCKETS;
            }
            let pool = *self.pools.last().expect("a pool");
            self.pool_left -= 1;
            // SAFETY: below `SEGMENT_BUCKETS`, within the pool; each bucket
            // of a pool is handed out once.
            let bucket = unsafe { pool.add(SEGMENT_BUCKETS - 1 - self.pool_left) };
            self.spare.push(bucket);
        }
        Ok(())
    }
}

impl Drop for TableWriter {
    fn drop(&mut self) {
        for block in self.segments.drain(..).chain(self.pools.drain(..)) {
            let slice = ptr::slice_from_raw_parts_mut(block.as_ptr(), SEGMENT_BUCKETS);
            // SAFETY: came from `Box::into_raw` of a `SEGMENT_BUCKETS` slice
            // (`new_segment`); the writer is dropped only when no reader can
            // exist. Spares and linked overflow buckets lie in the pools.
            drop(unsafe { Box::from_raw(slice) });
        }
        for dir in self.retired_dirs.drain(..).chain(self.dir.take()) {
            // SAFETY: as above; each directory is held once.
            unsafe { dir.free() };
        }
    }
}

/// A block of `SEGMENT_BUCKETS` empty buckets (a segment, or a pool of
/// overflow buckets), or `None` if the allocation fails.
pub(super) fn new_segment() -> Option<NonNull<Bucket>> {
    let raw = Box::into_raw(try_boxed_slice(SEGMENT_BUCKETS, Bucket::new)?);
    NonNull::new(raw.cast::<Bucket>())
}
