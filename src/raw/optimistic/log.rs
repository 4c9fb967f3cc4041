//! The entry log: every record of a shard, appended in insertion order into
//! fixed-size slabs, readable without a lock, walkable from any position.
//!
//! # Layout
//!
//! Records ([`record`](super::record)) are appended into slabs of
//! [`SLAB_BYTES`]; a record larger than that gets a slab of its own. A slab is
//! never moved or freed before the shard is cleared or dropped, so a
//! [`Ref`] (`slab << 14 | offset`, 32 bits) names a record for the shard's
//! lifetime. Slabs are found through a directory of base pointers, which is
//! replaced by a bigger copy when full; replaced directories are kept until
//! `clear`/`drop`, because readers may still hold them (they are small: 8
//! bytes per slab, so all of them together stay under 16 bytes per 16 KiB of
//! names).
//!
//! Fixed-size slabs bound the memory allocated beyond the records to one
//! partly filled slab per NC (plus a tail left unused when a record does not
//! fit). An arena whose chunks double (`bumpalo`'s) leaves up to half of its
//! newest chunk unused.
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

use super::record::{self, Entry};
use super::witness::{Link, Witnesses};
use crate::raw::alloc::{AllocError, RawBlock};
use crate::raw::bytes::{prefetch, CACHE_LINE};
use crate::raw::sizes::SLAB_BYTES;
use crate::sync::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// How far ahead of the record it reads a walk prefetches: about a dozen
/// records, so that the walk's loads overlap instead of following one
/// another (the distances tried: `docs/history.md`).
const WALK_AHEAD: usize = 16 * CACHE_LINE;

/// Bits of a [`Ref`] that hold the offset in the slab.
const OFFSET_BITS: u32 = 14;
const _: () = assert!(SLAB_BYTES <= 1 << OFFSET_BITS);

/// Slabs a log may have: what a [`Ref`] can name, less one so that the
/// position after the last slab still fits in 32 bits.
const MAX_SLABS: usize = (1 << (32 - OFFSET_BITS)) - 1;

/// Where a record lives: its slab and its offset there. Also a log position
/// (the place of the next record), for walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Ref(u32);

impl Ref {
    #[inline]
    fn new(slab: usize, offset: usize) -> Ref {
        debug_assert!(slab <= MAX_SLABS && offset < 1 << OFFSET_BITS);
        Ref((slab as u32) << OFFSET_BITS | offset as u32)
    }

    #[inline]
    fn slab(self) -> usize {
        (self.0 >> OFFSET_BITS) as usize
    }

    #[inline]
    fn offset(self) -> usize {
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

/// A slab's entry in the directory: its base pointer, the bytes of records
/// in it, and in loom builds the link to its witnesses (see `witness`;
/// nothing in other builds).
struct SlabEntry {
    base: AtomicPtr<u8>,
    /// Final once the writer has moved past the slab (a walk reads it only
    /// for such slabs).
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
            base: AtomicPtr::new(core::ptr::null_mut()),
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
        let base = slab.base.load(Ordering::Relaxed);
        // SAFETY: the slab holds the record at that offset (the caller's
        // contract); the pointer keeps the slab's provenance.
        (
            unsafe { NonNull::new_unchecked(base.add(at.offset())) },
            slab,
        )
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
        slab.witnesses.read(at.offset());
        // SAFETY: a complete, immutable record starts there, and lives
        // until `&mut Log` (the caller's contract and the module's protocol).
        unsafe { Entry::at(start) }
    }
}

/// A slab, owned by the writer.
struct Slab {
    block: RawBlock,
    /// Empty outside loom builds. Never read here: held for the directory
    /// entries that link to it.
    #[allow(dead_code)]
    witnesses: Witnesses,
}

/// What only the writer touches.
#[derive(Default)]
pub(crate) struct LogWriter {
    /// Every slab, in order (what the directory's entries point to, owned).
    slabs: Vec<Slab>,
    /// The published directory.
    dir: Option<SlabDir>,
    /// Directories replaced by bigger ones; readers may still hold them.
    retired_dirs: Vec<SlabDir>,
    /// Where the next record goes in the newest slab, if it is open.
    tail: Option<usize>,
}

// SAFETY: the directories are blocks of atomics shared with readers by the
// module's protocol; the writer only owns the right to free them, which it
// does when dropped, when no reader can hold them.
unsafe impl Send for LogWriter {}

/// One shard's log.
pub(crate) struct Log {
    /// The first entry of the current directory (owned by the writer).
    dir: AtomicPtr<SlabEntry>,
    /// The position after the last published record.
    published: AtomicU32,
}

impl Log {
    /// An empty log; it allocates nothing until the first append.
    pub(crate) fn new() -> Log {
        Log {
            dir: AtomicPtr::new(core::ptr::null_mut()),
            published: AtomicU32::new(0),
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

    /// The position after the last published record (acquire: every record
    /// before it is visible).
    #[inline]
    pub(crate) fn end(&self) -> Ref {
        Ref(self.published.load(Ordering::Acquire))
    }

    /// Calls `f` on every record from position `from` to the published end,
    /// in insertion order, and returns the end. `from` must be a position
    /// this log returned (or the default, its start).
    pub(crate) fn walk_from(&self, from: Ref, mut f: impl FnMut(Ref, Entry<'_>)) -> Ref {
        let end = self.end();
        let Some(dir) = self.dir() else {
            return end;
        };
        let mut at = from;
        while at < end {
            let slab = at.slab();
            // SAFETY: `slab` is at or before the end's, acquired before the
            // directory was loaded.
            let entry = unsafe { slab_entry(dir, slab) };
            let stop = if slab == end.slab() {
                end.offset()
            } else {
                entry.used.load(Ordering::Relaxed)
            };
            let base = entry.base.load(Ordering::Relaxed);
            let mut offset = at.offset();
            while offset < stop {
                // Each record's start is known only from the one before:
                // fetching ahead overlaps the walk's cache misses.
                prefetch(base.wrapping_add(offset + WALK_AHEAD).cast_const());
                entry.witnesses.read(offset);
                // SAFETY: every record before the published end is complete
                // (acquired through `end`), and records are packed from the
                // slab's start to `stop`, so `offset` is a record's start.
                let entry = unsafe { Entry::at(NonNull::new_unchecked(base.add(offset))) };
                f(Ref::new(slab, offset), entry);
                offset = entry.end() as usize - base as usize;
            }
            at = Ref::new(slab + 1, 0);
        }
        end
    }

    /// Appends the record of `(id, bytes)` and returns where it is. The
    /// record is not published: the caller makes it reachable, then calls
    /// [`publish`](Self::publish). [`AllocError`] if memory ran out or the
    /// log cannot address another slab (nothing changed).
    pub(crate) fn append(
        &self,
        writer: &mut LogWriter,
        id: u64,
        bytes: &[u8],
    ) -> Result<Ref, AllocError> {
        let size = record::record_size(id, bytes.len()).ok_or(AllocError)?;
        let (slab, offset) = match writer.tail {
            Some(offset) if size <= SLAB_BYTES - offset => (writer.slabs.len() - 1, offset),
            _ => (self.new_slab(writer, size.max(SLAB_BYTES))?, 0),
        };
        let base = writer.slabs[slab].block.ptr();
        // SAFETY: the slab has `size` free bytes at `offset`, unpublished, so
        // no reader looks at them.
        unsafe { record::write(NonNull::new_unchecked(base.as_ptr().add(offset)), id, bytes) };
        let next = offset + size;
        let dir = writer.dir.expect("a slab was made, so a directory exists");
        let entry = &dir.slabs()[slab];
        entry.witnesses.wrote(offset);
        entry.used.store(next, Ordering::Relaxed);
        writer.tail = (next < SLAB_BYTES).then_some(next);
        Ok(Ref::new(slab, offset))
    }

    /// Publishes every appended record to walks (release).
    pub(crate) fn publish(&self, writer: &LogWriter) {
        let last = writer.slabs.len() - 1;
        let end = match writer.tail {
            Some(offset) => Ref::new(last, offset),
            None => Ref::new(last + 1, 0),
        };
        self.published.store(end.0, Ordering::Release);
    }

    /// Opens a new slab of `size` bytes, closing the current one. Refuses if
    /// memory ran out or the log has no room for another slab.
    fn new_slab(&self, writer: &mut LogWriter, size: usize) -> Result<usize, AllocError> {
        let slab = writer.slabs.len();
        if slab >= MAX_SLABS {
            return Err(AllocError);
        }
        writer.slabs.try_reserve(1).map_err(|_| AllocError)?;
        writer.retired_dirs.try_reserve(1).map_err(|_| AllocError)?;
        let capacity = writer.dir.map_or(0, |d| d.slabs().len());
        let new_dir = if slab == capacity {
            Some(SlabDir::try_new((capacity * 2).max(4)).ok_or(AllocError)?)
        } else {
            None
        };
        let block = RawBlock::alloc(size, 1).ok_or(AllocError)?;
        if let Some(new_dir) = new_dir {
            if let Some(old_dir) = writer.dir {
                for ((old, new), slab) in old_dir
                    .slabs()
                    .iter()
                    .zip(new_dir.slabs())
                    .zip(&writer.slabs)
                {
                    new.base.store(slab.block.ptr().as_ptr(), Ordering::Relaxed);
                    new.witnesses.copy_from(&old.witnesses);
                    new.used
                        .store(old.used.load(Ordering::Relaxed), Ordering::Relaxed);
                }
                writer.retired_dirs.push(old_dir);
            }
            // Publishes the copied entries with the directory.
            self.dir.store(new_dir.first(), Ordering::Release);
            writer.dir = Some(new_dir);
        }
        let dir = writer.dir.expect("just made");
        let entry = &dir.slabs()[slab];
        let witnesses = Witnesses::new();
        entry.witnesses.set(&witnesses);
        // Relaxed: a reader reaches this slab only through a record published
        // later with release.
        entry.base.store(block.ptr().as_ptr(), Ordering::Relaxed);
        writer.slabs.push(Slab { block, witnesses });
        writer.tail = None;
        Ok(slab)
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
