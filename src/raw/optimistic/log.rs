//! The entry log: every record of a shard, appended into fixed-size
//! `bumpalo` arenas, readable without a lock, walkable from any position.
//!
//! # Layout
//!
//! Records ([`record`]) are packed with no padding into slabs: one
//! `bumpalo::Bump` each, of [`SLAB_BYTES`] (the first [`SMALL_SLABS`](crate::raw::sizes::SMALL_SLABS) of a
//! log with no slab limit smaller: `append::slab_capacity`) made at once, never grown (its
//! allocation limit is what it holds, so no chunk ever doubles) and asked
//! once, for all of them, when the slab opens; a full slab is followed by a
//! new one, and a record larger than a slab gets one of its own. Records
//! are placed downwards from the slab's top, by the depth the writer keeps,
//! so an append calls nothing and a slab's newest record is its lowest: a
//! record is named by its slab
//! and the distance from the slab's top down to its start (a [`Ref`],
//! `slab << 14 | distance`, 32 bits), and so is a log position: the slab
//! and how far down it the records read reach (its low-water mark). A walk
//! reads a slab from the low-water mark up to the position it started from
//! (newest first within a slab, slabs in order), and returns the new
//! low-water mark as its position. A slab is never moved or freed before
//! the shard is cleared or dropped, so a ref names a record for the shard's
//! lifetime. Slabs are found through a directory of top pointers, replaced
//! by a bigger copy when full; replaced directories are kept until
//! `clear`/`drop`, because readers may still hold them.
//!
//! # Protocol
//!
//! Only the writer (holding the shard's writer lock) appends. It writes the
//! record, then makes it reachable with a **release** store: of an index slot
//! (see `table`), and of the log's published end (`published`). Readers reach
//! a record only through an **acquire** load of one of these, so the record
//! and the directory entry of its slab are visible to them. A walk reads the
//! published end with acquire and visits the records before it.
//!
//! In loom builds the writer also writes the record's witness (see
//! `witness`) between writing and publishing it, and a reader reads the
//! witness before the record, so that the models check this protocol.

use core::ptr::NonNull;

use bumpalo::Bump;

use super::record::{self, Entry};
use super::witness::{Link, Witnesses};
use crate::raw::alloc::AllocError;
use crate::raw::bytes::{prefetch, CACHE_LINE};
use crate::raw::sizes::SLAB_BYTES;
use crate::sync::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// How far ahead of the record it reads a walk prefetches: about a dozen
/// records, so that the walk's loads overlap instead of following one
/// another (the distances tried: `docs/history.md`).
const WALK_AHEAD: usize = 16 * CACHE_LINE;

/// Bits of a [`Ref`] that hold the distance below the slab's top.
const OFFSET_BITS: u32 = 14;
const _: () = assert!(SLAB_BYTES < 1 << OFFSET_BITS);

/// Slabs a log may have: what a [`Ref`] can name, less one so that the
/// position after the last slab still fits in 32 bits (262,143). A writer
/// may be held to fewer ([`LogWriter::limit_slabs`]).
pub(crate) const MAX_SLABS: usize = (1 << (32 - OFFSET_BITS)) - 1;

/// Why [`Log::append`] stored nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AppendError {
    /// Memory could not be allocated.
    OutOfMemory,
    /// The record needs a new slab and the log has as many as its writer
    /// allows.
    Full,
}

impl From<AllocError> for AppendError {
    fn from(_: AllocError) -> AppendError {
        AppendError::OutOfMemory
    }
}

/// Where a record lives: its slab, and the distance from the slab's top
/// down to the record's start (from 1). Also a log position: the slab, and
/// the distance down to the low-water mark of the records before it (0: none
/// of the slab's). A record's ref is the position just after it, and
/// positions grow as records are appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Ref(u32);

impl Ref {
    #[inline]
    fn new(slab: usize, depth: usize) -> Ref {
        debug_assert!(slab <= MAX_SLABS && depth < 1 << OFFSET_BITS);
        Ref((slab as u32) << OFFSET_BITS | depth as u32)
    }

    #[inline]
    fn slab(self) -> usize {
        (self.0 >> OFFSET_BITS) as usize
    }

    /// The distance below the slab's top.
    #[inline]
    fn depth(self) -> usize {
        (self.0 & ((1 << OFFSET_BITS) - 1)) as usize
    }

    /// The 32 bits, for an index slot or a cursor.
    #[inline]
    pub(crate) fn to_bits(self) -> u32 {
        self.0
    }

    /// A ref from [`to_bits`](Self::to_bits).
    #[inline]
    pub(crate) fn from_bits(bits: u32) -> Ref {
        Ref(bits)
    }
}

/// A slab's entry in the directory: its top ([`SLAB_BYTES`] above the start
/// of its bytes, the end of its first record but for a record larger than
/// a slab, which ends above it), the
/// depth of its low-water mark, and in loom builds the link to its
/// witnesses (see `witness`; nothing in other builds).
struct SlabEntry {
    top: AtomicPtr<u8>,
    /// Stored once, when the writer moves past the slab (it filled it, or
    /// opened the next): a walk reads it only for such slabs. Not stored
    /// on every append: hits read the slab's `top` on this line.
    used: AtomicUsize,
    witnesses: Link,
}

/// A slab directory: a boxed slice of entries turned raw, so that readers
/// reach an entry in one load from the published first one (they never
/// need the length: a slab a published ref or position names is always in
/// range), and so that moving its owner asserts nothing about them.
#[derive(Clone, Copy)]
struct SlabDir(NonNull<[SlabEntry]>);

impl SlabDir {
    fn try_new(capacity: usize) -> Option<SlabDir> {
        let mut slabs = Vec::new();
        slabs.try_reserve_exact(capacity).ok()?;
        slabs.extend((0..capacity).map(|_| SlabEntry {
            top: AtomicPtr::new(core::ptr::null_mut()),
            used: AtomicUsize::new(0),
            witnesses: Link::new(),
        }));
        Some(SlabDir(NonNull::from(Box::leak(slabs.into_boxed_slice()))))
    }

    /// The entries (the writer's view).
    fn slabs(&self) -> &[SlabEntry] {
        // SAFETY: a live directory (freed only by `free`, through the
        // writer's `&mut`).
        unsafe { self.0.as_ref() }
    }

    /// The pointer readers load: the first entry.
    fn first(self) -> *mut SlabEntry {
        self.0.cast::<SlabEntry>().as_ptr()
    }

    /// Frees the directory.
    ///
    /// # Safety
    ///
    /// No reader may hold it any more, and it is freed once.
    unsafe fn free(self) {
        // SAFETY: came from `Box::leak` of a boxed slice (the caller's
        // contract covers the rest).
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// Slab `slab`'s entry in the directory whose first entry is `dir`.
///
/// # Safety
///
/// `dir` must be a published directory, loaded after (with acquire) a ref
/// or position naming slab `slab` was published, or the writer's current
/// one with `slab` below its slab count.
#[inline]
unsafe fn slab_entry<'d>(dir: NonNull<SlabEntry>, slab: usize) -> &'d SlabEntry {
    // SAFETY: every directory published since slab `slab` was opened has
    // an entry for it (the caller's contract), and directories live until
    // `&mut` access to the log.
    unsafe { dir.add(slab).as_ref() }
}

/// A log's slab directory as loaded once ([`Log::slabs`]): it holds the
/// slab of every record whose publication was acquired before it was
/// loaded.
#[derive(Clone, Copy)]
pub(crate) struct Slabs<'l> {
    dir: NonNull<SlabEntry>,
    _log: core::marker::PhantomData<&'l Log>,
}

impl<'l> Slabs<'l> {
    /// The start of the record at `at`, without reading it.
    ///
    /// # Safety
    ///
    /// As [`entry`](Self::entry)'s.
    #[inline]
    unsafe fn start(self, at: Ref) -> (NonNull<u8>, &'l SlabEntry) {
        // SAFETY: the record's slab was opened before its publication, which
        // the caller acquired before this directory was loaded: the
        // directory has its entry, and lives as long as the log is borrowed.
        let slab = unsafe { slab_entry(self.dir, at.slab()) };
        let top = slab.top.load(Ordering::Relaxed);
        // SAFETY: the slab holds the record at that depth below its top
        // (the caller's contract); the pointer keeps the slab's provenance.
        (unsafe { NonNull::new_unchecked(top.sub(at.depth())) }, slab)
    }

    /// The address of the record at `at`, to prefetch.
    ///
    /// # Safety
    ///
    /// As [`entry`](Self::entry)'s.
    #[inline]
    pub(crate) unsafe fn record_addr(self, at: Ref) -> *const u8 {
        // SAFETY: the caller's contract.
        unsafe { self.start(at) }.0.as_ptr().cast_const()
    }

    /// The record at `at`.
    ///
    /// # Safety
    ///
    /// `at` must name a record of this log whose publication the caller
    /// acquired before it loaded this directory (it read a slot or a
    /// position stored with release after the record was written), or the
    /// caller is the writer.
    #[inline]
    pub(crate) unsafe fn entry(self, at: Ref) -> Entry<'l> {
        // SAFETY: the caller's contract.
        let (start, slab) = unsafe { self.start(at) };
        slab.witnesses.read(at.depth() - 1);
        // SAFETY: a complete, immutable record starts there, and lives
        // until `&mut Log` (the caller's contract and the module's protocol).
        unsafe { Entry::at(start) }
    }
}

/// A slab, owned by the writer.
struct Slab {
    /// Owns the slab's bytes, its one chunk (its allocation limit keeps it
    /// to one), which it frees when dropped. Never read.
    #[allow(dead_code)]
    bump: Bump,
    /// Empty outside loom builds. Never read here: held for the directory
    /// entries that link to it.
    #[allow(dead_code)]
    witnesses: Witnesses,
}

/// What only the writer touches.
pub(crate) struct LogWriter {
    /// Every slab, in order (what the directory's entries point to, owned).
    slabs: Vec<Slab>,
    /// The published directory.
    dir: Option<SlabDir>,
    /// Directories replaced by bigger ones; readers may still hold them.
    retired_dirs: Vec<SlabDir>,
    /// The newest slab's top and the depth of its low-water mark, if it has
    /// room left.
    tail: Option<Tail>,
    /// The most slabs the log may have, at most [`MAX_SLABS`].
    slab_limit: usize,
}

impl Default for LogWriter {
    fn default() -> LogWriter {
        LogWriter {
            slabs: Vec::new(),
            dir: None,
            retired_dirs: Vec::new(),
            tail: None,
            slab_limit: MAX_SLABS,
        }
    }
}

/// Where the next record goes: `capacity` bytes of the newest slab lie
/// below `top`, the slab's top (its directory entry's), of which the top
/// `depth` hold records.
#[derive(Clone, Copy)]
struct Tail {
    top: NonNull<u8>,
    depth: usize,
    capacity: usize,
}

/// The writer's tail before an append that may be taken back
/// ([`Log::take_back`]), and the size of that append's record, which fits
/// the tail's slab with room to spare ([`Log::append_marked`]).
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    tail: Tail,
    size: usize,
}

impl LogWriter {
    /// A mark to take the next append back to, if that append is of `id →`
    /// `len` bytes, `numbered` or not, and fits the newest slab with room
    /// to spare: it then neither opens a slab nor fills one, so the tail's
    /// depth is all it moves.
    #[inline(always)]
    pub(crate) fn mark_before(&self, id: u64, len: usize, numbered: bool) -> Option<Mark> {
        let size = record::record_size(id, len, numbered)?;
        self.tail
            .filter(|tail| size < tail.capacity - tail.depth)
            .map(|tail| Mark { tail, size })
    }

    /// Holds the log to at most `slabs` slabs (and never more than
    /// [`MAX_SLABS`]); appends that need another then fail as
    /// [`AppendError::Full`].
    pub(crate) fn limit_slabs(&mut self, slabs: usize) {
        self.slab_limit = slabs.min(MAX_SLABS);
    }

    /// The most slabs the log may have.
    pub(crate) fn slab_limit(&self) -> usize {
        self.slab_limit
    }
}

// SAFETY: the directories are blocks of atomics shared with readers by the
// module's protocol; the writer only owns the right to free them, which it
// does when dropped, when no reader can hold them. Its tail's top points
// into a slab it owns, written only through `&mut` access to it.
unsafe impl Send for LogWriter {}

/// One shard's log.
pub(crate) struct Log {
    /// The first entry of the current directory (owned by the writer).
    dir: AtomicPtr<SlabEntry>,
}

/// A log's published end: the position after its last published record.
/// Apart from the [`Log`], which hits read: every append stores it, and
/// the shard keeps it off the line that hits read (`shard.rs`, `Hot`).
pub(crate) struct LogEnd {
    published: AtomicU32,
}

impl LogEnd {
    /// The end of an empty log.
    pub(crate) fn new() -> LogEnd {
        LogEnd {
            published: AtomicU32::new(0),
        }
    }

    /// The position after the last published record (acquire: every record
    /// before it is visible).
    #[inline]
    pub(crate) fn load(&self) -> Ref {
        Ref(self.published.load(Ordering::Acquire))
    }

    /// Publishes every record `writer` appended to walks (release).
    #[inline]
    pub(crate) fn publish(&self, writer: &LogWriter) {
        let last = writer.slabs.len() - 1;
        let end = match writer.tail {
            Some(Tail { depth, .. }) => Ref::new(last, depth),
            None => Ref::new(last + 1, 0),
        };
        self.published.store(end.0, Ordering::Release);
    }
}

impl Log {
    /// An empty log; it allocates nothing until the first append.
    pub(crate) fn new() -> Log {
        Log {
            dir: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// The directory, with acquire: it shows every slab that any record the
    /// caller reached (with acquire) lives in.
    #[inline]
    fn dir(&self) -> Option<NonNull<SlabEntry>> {
        // A published directory is fully built before its release store and
        // freed only with the writer, through `&mut`.
        NonNull::new(self.dir.load(Ordering::Acquire))
    }

    /// The record at `at`.
    ///
    /// # Safety
    ///
    /// `at` must name a record of this log whose publication the caller has
    /// acquired (it read a slot or a position stored with release after the
    /// record was written), or the caller is the writer.
    #[inline]
    pub(crate) unsafe fn entry(&self, at: Ref) -> Entry<'_> {
        let slabs = self.slabs().expect("a published record has a directory");
        // SAFETY: the caller's contract; the directory was loaded just now.
        unsafe { slabs.entry(at) }
    }

    /// The slab directory as loaded now (acquire), for many records, if the
    /// log has one.
    #[inline]
    pub(crate) fn slabs(&self) -> Option<Slabs<'_>> {
        Some(Slabs {
            dir: self.dir()?,
            _log: core::marker::PhantomData,
        })
    }

    /// Calls `f` on every record from position `from` to position `end`:
    /// slab by slab in insertion order, newest first within a slab (a slab
    /// is read from its low-water mark up). `from` is a position this log
    /// returned (or the default, its start), and `end` its published end
    /// ([`LogEnd::load`], with acquire, by this thread or one it
    /// synchronised with since), at or after `from`.
    pub(crate) fn walk_between(&self, from: Ref, end: Ref, mut f: impl FnMut(Ref, Entry<'_>)) {
        debug_assert!(from <= end);
        let Some(dir) = self.dir() else {
            return;
        };
        let mut at = from;
        while at < end {
            let slab = at.slab();
            // SAFETY: `slab` is at or before the end's, acquired before the
            // directory was loaded.
            let entry = unsafe { slab_entry(dir, slab) };
            let low = if slab == end.slab() {
                end.depth()
            } else {
                entry.used.load(Ordering::Relaxed)
            };
            let top = entry.top.load(Ordering::Relaxed);
            let mut depth = low;
            while depth > at.depth() {
                // SAFETY: every record before the published end is complete
                // (acquired through `end`), and a slab's records are packed
                // from its low-water mark up, so a record starts `depth`
                // below the top.
                let start = unsafe { top.sub(depth) };
                // Each record's start is known only from the one before:
                // fetching ahead overlaps the walk's cache misses.
                prefetch(start.wrapping_add(WALK_AHEAD).cast_const());
                entry.witnesses.read(depth - 1);
                // SAFETY: as above.
                let record = unsafe { Entry::at(NonNull::new_unchecked(start)) };
                f(Ref::new(slab, depth), record);
                // A record larger than a slab ends above its slab's top.
                depth = depth.saturating_sub(record.end() as usize - start as usize);
            }
            at = Ref::new(slab + 1, 0);
        }
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        for dir in self.retired_dirs.drain(..).chain(self.dir.take()) {
            // SAFETY: each directory is held once, and the writer is dropped
            // only with its shard or by `&mut` access to it, when no reader
            // can hold a directory.
            unsafe { dir.free() };
        }
    }
}

mod append;
#[cfg(all(test, not(interner_loom)))]
mod tests;
