//! The by-bytes table's memory: buckets, the segments and overflow pools
//! they live in, and the segment directories, all owned by the
//! [`TableWriter`] and freed only through it (`&mut`: `reset`, drop).

use core::ptr::{self, NonNull};

use crate::raw::alloc::{try_boxed_slice, AllocError};
use crate::raw::sizes::{SEGMENT_BUCKETS, WORDS};
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

    /// The first empty slot, for the writer (relaxed loads: only it stores
    /// to slots): [`scan`](Self::scan)'s empties.
    #[inline]
    pub(super) fn first_empty(&self) -> Option<&AtomicU64> {
        self.scan(0).1
    }

    /// For the writer, under its lock: the slots whose tag is `tag`
    /// ([`tag_matches`](Self::tag_matches)) and the first empty slot, from
    /// one read of the line. The empty slots are gathered as bits without a
    /// branch a slot (where the first one lies varies from insert to
    /// insert); the SSE2 form compares the words it loaded for the tags
    /// with zero, where the portable fold of seven loads took some 50
    /// instructions an insert (`docs/history.md`).
    #[inline(always)]
    pub(super) fn scan(&self, tag: u32) -> (TagMatches, Option<&AtomicU64>) {
        let (matches, empty) = tags::matching_and_empty(self, tag);
        let first =
            (empty != 0).then(|| &self.words[(empty.trailing_zeros() / tags::STRIDE) as usize]);
        (TagMatches(matches), first)
    }

    /// The slots whose tag (a slot word's low 32 bits) is `tag`: a filter,
    /// compared without a branch, whose every slot the caller loads again
    /// with acquire before using it (the slot may change meanwhile).
    #[inline(always)]
    pub(super) fn tag_matches(&self, tag: u32) -> TagMatches {
        TagMatches(tags::matching(self, tag))
    }
}

/// [`Bucket::tag_matches`] in SSE2 (x86-64's baseline): the line in four
/// loads and four compares, where the portable form takes seven of each
/// and assembles the bits one by one (`docs/history.md`). Miri and loom
/// take the portable form, whose loads they model.
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(miri),
    not(interner_loom)
))]
mod tags {
    use super::{ptr, Bucket, WORDS};

    /// The assembly of [`matching`] and [`matching_and_empty`]: the line
    /// in four aligned 16-byte loads; given `$zeros`, each dword compared
    /// with zero, the 16 results packed in order into the bits of
    /// `$zeros`; then each compared with `$tag`, into `$bits`. Writes only
    /// the named registers; the caller's `unsafe` block argues the loads.
    macro_rules! scan_line {
        ($bucket:expr, $tag:expr, $bits:ident $(, $zeros:ident)?) => {
            core::arch::asm!(
                "movd {t}, {tag:e}",
                "pshufd {t}, {t}, 0",
                "movdqa {a}, xmmword ptr [{p}]",
                "movdqa {b}, xmmword ptr [{p} + 16]",
                "movdqa {c}, xmmword ptr [{p} + 32]",
                "movdqa {d}, xmmword ptr [{p} + 48]",
                $(
                    "pxor {za}, {za}",
                    "pxor {zb}, {zb}",
                    "pxor {zc}, {zc}",
                    "pxor {zd}, {zd}",
                    "pcmpeqd {za}, {a}",
                    "pcmpeqd {zb}, {b}",
                    "pcmpeqd {zc}, {c}",
                    "pcmpeqd {zd}, {d}",
                    "packssdw {za}, {zb}",
                    "packssdw {zc}, {zd}",
                    "packsswb {za}, {zc}",
                    concat!("pmovmskb {", stringify!($zeros), ":e}, {za}"),
                )?
                "pcmpeqd {a}, {t}",
                "pcmpeqd {b}, {t}",
                "pcmpeqd {c}, {t}",
                "pcmpeqd {d}, {t}",
                // The 16 dword results, in order, as 16 bytes.
                "packssdw {a}, {b}",
                "packssdw {c}, {d}",
                "packsswb {a}, {c}",
                "pmovmskb {bits:e}, {a}",
                p = in(reg) ptr::from_ref($bucket),
                tag = in(reg) $tag,
                bits = lateout(reg) $bits,
                t = out(xmm_reg) _,
                a = out(xmm_reg) _,
                b = out(xmm_reg) _,
                c = out(xmm_reg) _,
                d = out(xmm_reg) _,
                $(
                    $zeros = lateout(reg) $zeros,
                    za = out(xmm_reg) _,
                    zb = out(xmm_reg) _,
                    zc = out(xmm_reg) _,
                    zd = out(xmm_reg) _,
                )?
                options(nostack, readonly, preserves_flags),
            )
        };
    }

    /// Bit `i * STRIDE` of what [`matching`] returns is slot `i`.
    pub(super) const STRIDE: u32 = 2;

    /// The bits that name slots: dword `2i` is slot `i`'s low half; the
    /// odd ones and the link's are not tags.
    const LANES: u32 = {
        let mut lanes = 0;
        let mut i = 0;
        while i < WORDS {
            lanes |= 1 << (i as u32 * STRIDE);
            i += 1;
        }
        lanes
    };

    #[inline(always)]
    pub(super) fn matching(bucket: &Bucket, tag: u32) -> u32 {
        // The assembly reads exactly this layout: 7 words and a link.
        const _: () = assert!(WORDS == 7 && core::mem::size_of::<Bucket>() == 64);
        let bits: u32;
        // SAFETY: reads the bucket's 64 bytes, a live, 64-byte aligned line
        // (`&Bucket`, `align(64)`), and writes only the named registers. The
        // writer may store to the slots meanwhile (atomic stores, under its
        // lock): the loads act as relaxed atomic loads of the line's eight
        // aligned words, which x86 reads whole (an aligned 16-byte SSE load
        // is atomic on CPUs with AVX, and each of its aligned 8-byte halves
        // is read whole in practice on all). Nothing depends on that
        // either: a tag misread from a word that changes meanwhile only
        // adds a slot, which the caller loads again with acquire and checks
        // again, or drops one, a false miss, which the protocol allows (the
        // locked path re-checks).
        unsafe { scan_line!(bucket, tag, bits) };
        bits & LANES
    }

    /// [`matching`], and the empty slots (a word of 0) at the same stride:
    /// the loaded line is also compared with zero, dword by dword, and a
    /// slot is empty where both of its dwords are.
    #[inline(always)]
    pub(super) fn matching_and_empty(bucket: &Bucket, tag: u32) -> (u32, u32) {
        const _: () = assert!(WORDS == 7 && core::mem::size_of::<Bucket>() == 64);
        let (bits, zeros): (u32, u32);
        // SAFETY: as in `matching`: reads the bucket's 64 bytes, a live,
        // 64-byte aligned line, and writes only the named registers. Only
        // the writer calls this, under its lock, so no slot changes
        // meanwhile.
        unsafe { scan_line!(bucket, tag, bits, zeros) };
        // Slot `i` is empty if dwords `2i` and `2i + 1` are both zero.
        (bits & LANES, zeros & (zeros >> 1) & LANES)
    }
}

/// [`Bucket::tag_matches`], portable: relaxed loads of the slots.
#[cfg(not(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(miri),
    not(interner_loom)
)))]
mod tags {
    use super::Bucket;
    use crate::sync::Ordering;

    /// Bit `i * STRIDE` of what [`matching`] returns is slot `i`.
    pub(super) const STRIDE: u32 = 1;

    #[inline(always)]
    pub(super) fn matching(bucket: &Bucket, tag: u32) -> u32 {
        let mut bits = 0u32;
        for (i, slot) in bucket.words.iter().enumerate() {
            // Relaxed: a filter only (`Bucket::tag_matches`).
            bits |= u32::from(slot.load(Ordering::Relaxed) as u32 == tag) << i;
        }
        bits
    }

    /// [`matching`], and the empty slots (a word of 0), from one relaxed
    /// load of each slot (the writer's, under its lock).
    #[inline(always)]
    pub(super) fn matching_and_empty(bucket: &Bucket, tag: u32) -> (u32, u32) {
        let (mut bits, mut empty) = (0u32, 0u32);
        for (i, slot) in bucket.words.iter().enumerate() {
            let word = slot.load(Ordering::Relaxed);
            bits |= u32::from(word as u32 == tag) << i;
            empty |= u32::from(word == 0) << i;
        }
        (bits, empty)
    }
}

/// The slots [`Bucket::tag_matches`] found, in order.
#[derive(Clone, Copy)]
pub(super) struct TagMatches(u32);

impl Iterator for TagMatches {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let slot = (self.0.trailing_zeros() / tags::STRIDE) as usize;
        self.0 &= self.0 - 1;
        Some(slot)
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
    /// Overflow buckets that a split's compaction emptied and unlinked,
    /// linked again before fresh spares (`table/growth.rs`).
    pub(super) recycled: Vec<NonNull<Bucket>>,
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
    #[inline]
    pub(super) fn current_dir(&self) -> NonNull<AtomicPtr<Bucket>> {
        let dir = self.dir.expect("an initialised table");
        NonNull::new(dir.first()).expect("a directory is never null")
    }

    /// Empty overflow buckets the writer holds, reused and fresh.
    fn spares(&self) -> usize {
        self.spare.len() + self.recycled.len()
    }

    /// Makes sure the writer holds at least `count` empty overflow buckets,
    /// taking fresh ones from the pools if it must. Inline for the common
    /// case, a spare already held: every insert asks for one, and few link
    /// one.
    #[inline(always)]
    pub(super) fn stock_spares(&mut self, count: usize) -> Result<(), AllocError> {
        if self.spares() >= count {
            return Ok(());
        }
        self.stock_more(count)
    }

    /// Whether the writer holds a spare overflow bucket, taken from its
    /// last pool if it must, but never allocating: for a writer that does
    /// not know yet whether it will insert. (`try_reserve` within the
    /// capacity does nothing.)
    #[inline(always)]
    pub(super) fn spare_in_hand(&mut self) -> bool {
        self.spares() > 0
            || (self.pool_left > 0
                && self.spare.capacity() > self.spare.len()
                && self.stock_more(1).is_ok())
    }

    /// [`stock_spares`](Self::stock_spares) when the writer holds too few.
    #[inline(never)]
    fn stock_more(&mut self, count: usize) -> Result<(), AllocError> {
        self.spare
            .try_reserve(count.saturating_sub(self.spares()))
            .map_err(|_| AllocError)?;
        while self.spares() < count {
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
            // exist. Spares, reused buckets and linked overflow buckets lie in
            // the pools.
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

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;
    use core::sync::atomic::Ordering;

    #[test]
    fn tag_matches_names_every_slot_of_the_tag_and_no_other() {
        let bucket = Bucket::new();
        let tags = [7u32, 0, 7, 9, 0xFFFF_FFFF, 7, 3];
        for (slot, &tag) in bucket.words.iter().zip(&tags) {
            // High halves that equal the tag must not match.
            slot.store(u64::from(tag) | 7 << 32, Ordering::Relaxed);
        }
        // The link's low half must not match either.
        bucket
            .next
            .store(ptr::without_provenance_mut(7), Ordering::Relaxed);
        for tag in [7, 0, 9, 3, 0xFFFF_FFFF, 5] {
            let found: Vec<usize> = bucket.tag_matches(tag).collect();
            let wanted: Vec<usize> = (0..WORDS).filter(|&i| tags[i] == tag).collect();
            assert_eq!(found, wanted, "tag {tag}");
        }
        bucket.next.store(ptr::null_mut(), Ordering::Relaxed);
    }

    /// `scan` (SSE2 outside Miri) against the slots read one by one: a word
    /// is empty only if both halves are zero, and the link (null here, so
    /// both its halves zero) is never a slot.
    #[test]
    fn scan_finds_the_tags_and_the_first_word_of_zero() {
        let halves = [0u64, 1, 7, 1 << 32, 7 << 32, 7 | 7 << 32];
        let bucket = Bucket::new();
        // Every slot cycles through every half-pair, each at its own pace,
        // so that empties fall at every position and in every mix.
        for round in 0..halves.len().pow(3) {
            let mut words = [0u64; WORDS];
            for (i, word) in words.iter_mut().enumerate() {
                *word = halves[(round / (i % 3 + 1) + i) % halves.len()];
                bucket.words[i].store(*word, Ordering::Relaxed);
            }
            for tag in [0, 1, 7] {
                let (matches, empty) = bucket.scan(tag);
                let wanted: Vec<usize> = (0..WORDS).filter(|&i| words[i] as u32 == tag).collect();
                assert_eq!(matches.collect::<Vec<_>>(), wanted, "{words:x?}, tag {tag}");
                let first = words.iter().position(|&w| w == 0);
                let found = empty.map(|slot| {
                    bucket
                        .words
                        .iter()
                        .position(|s| ptr::eq(s, slot))
                        .expect("a slot of the bucket")
                });
                assert_eq!(found, first, "{words:x?}");
                assert_eq!(
                    bucket.first_empty().map(ptr::from_ref),
                    empty.map(ptr::from_ref)
                );
            }
        }
    }
}
