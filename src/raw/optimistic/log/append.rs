//! The log's writer side: appending a record, taking an unpublished
//! append back, and opening slabs.

use core::alloc::Layout;
use core::ptr::NonNull;

use bumpalo::Bump;

use super::{AppendError, Log, LogWriter, Mark, Ref, Slab, SlabDir, Tail, MAX_SLABS};
use crate::raw::alloc::AllocError;
use crate::raw::optimistic::record;
use crate::raw::optimistic::witness::Witnesses;
use crate::raw::sizes::{SLAB_BYTES, SMALL_SLABS};
use crate::sync::Ordering;

impl Log {
    /// Appends the record of `(id, bytes)`, with `number` if given
    /// (`record`), and returns where it is. The
    /// record is not published: the caller makes it reachable, then calls
    /// [`publish`](super::LogEnd::publish). Refuses (nothing changed) if memory ran
    /// out, or if the record needs a new slab and the log has as many as
    /// its writer allows ([`AppendError::Full`]). Inlined into the miss
    /// path.
    #[inline(always)]
    pub(crate) fn append(
        &self,
        writer: &mut LogWriter,
        id: u64,
        bytes: &[u8],
        number: Option<u32>,
    ) -> Result<Ref, AppendError> {
        let size = record::record_size(id, bytes.len(), number.is_some()).ok_or(AllocError)?;
        let (
            slab,
            Tail {
                top,
                depth: used,
                capacity,
            },
        ) = match writer.tail {
            Some(tail) if size <= tail.capacity - tail.depth => (writer.slabs.len() - 1, tail),
            _ => self.new_slab(writer, size)?,
        };
        // Below the slab's newest record: records are packed, downwards. A
        // record larger than a slab is its slab's only one: it sits a slab's
        // bytes below its slab's top, as deep as a full slab's last.
        let depth = (used + size).min(capacity);
        // SAFETY: `depth <= capacity`; the record's `size` bytes are the
        // slab's own (`used + size <= capacity`, or the record is the only
        // one of a slab of `size` bytes) and below every record appended
        // before.
        unsafe { Self::write_at(writer, slab, top, depth, id, bytes, number) };
        let dir = writer.dir.expect("a slab was made, so a directory exists");
        let entry = &dir.slabs()[slab];
        writer.tail = if depth < capacity {
            Some(Tail {
                top,
                depth,
                capacity,
            })
        } else {
            // Full: the writer moves past the slab. Relaxed: published
            // with the end past it (release).
            entry.used.store(depth, Ordering::Relaxed);
            None
        };
        Ok(Ref::new(slab, depth))
    }

    /// [`append`](Self::append) of `(id, bytes)`, with `number` if given,
    /// where `mark` ([`LogWriter::mark_before`] of the same id and length,
    /// numbered alike, the writer unchanged since) found room to spare: it
    /// neither opens nor fills a slab, so it cannot fail, and only the
    /// tail's depth moves.
    #[inline(always)]
    pub(crate) fn append_marked(
        &self,
        writer: &mut LogWriter,
        mark: Mark,
        id: u64,
        bytes: &[u8],
        number: Option<u32>,
    ) -> Ref {
        let Mark { tail, size } = mark;
        debug_assert_eq!(
            record::record_size(id, bytes.len(), number.is_some()),
            Some(size)
        );
        debug_assert!(writer
            .tail
            .is_some_and(|now| now.top == tail.top && now.depth == tail.depth));
        let slab = writer.slabs.len() - 1;
        let depth = tail.depth + size;
        debug_assert!(depth < tail.capacity);
        // SAFETY: `depth < capacity` (`mark_before`): the record's `size`
        // bytes are the newest slab's own, below every record appended
        // before.
        unsafe { Self::write_at(writer, slab, tail.top, depth, id, bytes, number) };
        writer.tail = Some(Tail { depth, ..tail });
        Ref::new(slab, depth)
    }

    /// Writes the record of `(id, bytes)`, with `number` if given, `depth`
    /// bytes below `top`, the top of slab `slab`: the one write of a
    /// record for [`append`](Self::append) and
    /// [`append_marked`](Self::append_marked), which move the tail.
    ///
    /// # Safety
    ///
    /// `top` must be slab `slab`'s top and `depth` at most its capacity
    /// (its bytes begin `capacity` below its top: `new_slab`), and the
    /// record's bytes, `depth` down to `depth - size` below the top, must
    /// be the slab's own and unpublished (below every record appended
    /// before), so that no reader looks at them.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn write_at(
        writer: &LogWriter,
        slab: usize,
        top: NonNull<u8>,
        depth: usize,
        id: u64,
        bytes: &[u8],
        number: Option<u32>,
    ) {
        let dir = writer.dir.expect("a slab was made, so a directory exists");
        let entry = &dir.slabs()[slab];
        debug_assert_eq!(entry.top.load(Ordering::Relaxed), top.as_ptr());
        // SAFETY: `depth` is within the slab's bytes below `top` (the
        // caller's contract).
        let start = unsafe { NonNull::new_unchecked(top.as_ptr().sub(depth)) };
        // SAFETY: the record's bytes at `start` are the slab's own and
        // unpublished (the caller's contract).
        unsafe { record::write(start, id, bytes, number) };
        entry.witnesses.wrote(depth - 1);
    }

    /// Takes back the one append made since `mark`
    /// ([`LogWriter::mark_before`]), which nothing has published: the
    /// next append writes over its bytes, and no reader reached them (they
    /// lie past the published end).
    #[inline]
    pub(crate) fn take_back(&self, writer: &mut LogWriter, mark: Mark) {
        let after = |tail: Tail| tail.top == mark.tail.top && tail.depth > mark.tail.depth;
        debug_assert!(writer.tail.is_some_and(after));
        writer.tail = Some(mark.tail);
    }

    /// Opens a new slab for a record of `size` bytes (of
    /// [`slab_capacity`]; of [`SLAB_BYTES`] if `size` is larger, or of
    /// `size` if larger still), closing the current one, and returns it
    /// with its empty tail. Refuses if memory ran out or the log has as
    /// many slabs as its writer allows.
    fn new_slab(&self, writer: &mut LogWriter, size: usize) -> Result<(usize, Tail), AppendError> {
        let slab = writer.slabs.len();
        if slab >= writer.slab_limit {
            return Err(AppendError::Full);
        }
        writer.slabs.try_reserve(1).map_err(|_| AllocError)?;
        writer.retired_dirs.try_reserve(1).map_err(|_| AllocError)?;
        // The arena first: it frees itself if the directory below is
        // refused, where a directory (plain memory, freed only by hand)
        // made first would leak when the arena is refused.
        let capacity = match slab_capacity(slab, writer.slab_limit) {
            small if size <= small => small,
            _ => SLAB_BYTES,
        };
        let bytes = size.max(capacity);
        let bump = Bump::try_with_capacity(bytes).map_err(|_| AllocError)?;
        // One chunk: a slab never grows (nor doubles) in place.
        bump.set_allocation_limit(Some(bump.allocated_bytes()));
        // The slab's bytes, handed out once: appends place records in them
        // by depth below the top, with no call into the arena.
        let layout = Layout::from_size_align(bytes, 1).map_err(|_| AllocError)?;
        let start = bump.try_alloc_layout(layout).map_err(|_| AllocError)?;
        // SAFETY: `capacity <= bytes`: the top is within the slab's bytes
        // or just past their end.
        let top = unsafe { NonNull::new_unchecked(start.as_ptr().add(capacity)) };
        let dir_capacity = writer.dir.map_or(0, |d| d.slabs().len());
        let new_dir = if slab == dir_capacity {
            Some(SlabDir::try_new((dir_capacity * 2).max(4)).ok_or(AllocError)?)
        } else {
            None
        };
        if let Some(new_dir) = new_dir {
            if let Some(old_dir) = writer.dir {
                for (old, new) in old_dir.slabs().iter().zip(new_dir.slabs()) {
                    new.top
                        .store(old.top.load(Ordering::Relaxed), Ordering::Relaxed);
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
        // Relaxed: a reader reaches it only through a record of the slab,
        // published later with release.
        entry.top.store(top.as_ptr(), Ordering::Relaxed);
        if let Some(Tail { depth, .. }) = writer.tail {
            // The slab left with room: its low-water mark is final. Relaxed:
            // published with the end past it (release).
            dir.slabs()[slab - 1].used.store(depth, Ordering::Relaxed);
        }
        writer.slabs.push(Slab { bump, witnesses });
        writer.tail = None;
        Ok((
            slab,
            Tail {
                top,
                depth: 0,
                capacity,
            },
        ))
    }
}

/// The bytes of records slab `slab` of a log holds: [`SLAB_BYTES`], but for
/// the first [`SMALL_SLABS`] of a log with no slab limit (`slab_limit` is
/// [`MAX_SLABS`]), whose blocks are 16 KiB halved once for each small slab
/// after them (1, 2, 4 and 8 KiB), less the same overhead, so that a log
/// of a few records holds 1 KiB. A log with a limit keeps whole slabs, so
/// that a limit of `n` slabs holds what [`Config::slab_limit`] says.
///
/// [`Config::slab_limit`]: crate::Config::slab_limit
pub(super) fn slab_capacity(slab: usize, slab_limit: usize) -> usize {
    const BLOCK: usize = (SLAB_BYTES + 1).next_power_of_two();
    match SMALL_SLABS.checked_sub(slab) {
        Some(halvings @ 1..) if slab_limit == MAX_SLABS => {
            (BLOCK >> halvings) - (BLOCK - SLAB_BYTES)
        }
        _ => SLAB_BYTES,
    }
}
