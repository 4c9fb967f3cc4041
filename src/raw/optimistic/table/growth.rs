//! The by-bytes table's growth, which only its writer runs: splits (one
//! bucket's words re-placed by one more hash bit, the new shape published,
//! the moved words cleared), the compaction of a split bucket's chain, and
//! the segment directory's growth.

use core::ptr::{self, NonNull};

use super::super::blocks::{new_segment, Bucket, SegmentDir, TableWriter};
use super::{capacity_of, chain, moves, publish, Shape, Table, Vacancy, MAX_LEVEL};
use crate::raw::alloc::AllocError;
#[cfg(not(interner_loom))]
use crate::raw::bytes::prefetch;
use crate::raw::sizes::{SEGMENT_BUCKETS, SPLITS_PER_STEP, WORDS};
use crate::sync::{AtomicU64, Ordering};

/// The buckets of a source chain whose words a split sorts once and
/// buffers ([`Sourced`], [`Packed`]); the rare longer chain's are sorted
/// again, for the clear and the compaction, by their hash bit.
const MASKED: usize = 4;

/// The words of the first [`MASKED`] buckets of a chain.
const BUFFERED: usize = WORDS * MASKED;

const _: () = assert!(WORDS <= 8, "a bucket's slots fit a `u8`");

/// Every slot of a bucket, as bits.
const SLOTS: u8 = u8::MAX >> (8 - WORDS);

/// One bucket's words as the split at some level sorts them: the slots
/// whose word moves to the new bucket, and those whose word stays, as bits
/// and counted.
#[derive(Clone, Copy, Default)]
struct Sorted {
    moving: u8,
    staying: u8,
    movers: u8,
    stayers: u8,
}

impl Sorted {
    /// From one relaxed load of each slot (the writer's: only it stores),
    /// each word handed to `each` with whether it moves. No branch a word,
    /// whose outcome is a coin toss.
    #[inline(always)]
    fn of(bucket: &Bucket, level: u32, mut each: impl FnMut(u64, bool)) -> Sorted {
        let mut sorted = Sorted::default();
        for (slot, word) in bucket.words.iter().enumerate() {
            let word = word.load(Ordering::Relaxed);
            let moved = moves(word, level);
            let stays = word != 0 && !moved;
            sorted.moving |= u8::from(moved) << slot;
            sorted.staying |= u8::from(stays) << slot;
            sorted.movers += u8::from(moved);
            sorted.stayers += u8::from(stays);
            each(word, moved);
        }
        sorted
    }
}

/// Words gathered without a branch a word: each is stored at the end, and
/// the end moves past it only if it is kept. Zero past the kept words once
/// [`sealed`](Self::seal). Its room a power of two, so that an index
/// masked to it needs no bounds check.
struct Packed {
    words: [u64; PACKED],
    len: usize,
}

/// [`Packed`]'s room: [`BUFFERED`] words and a last one, offered and not
/// kept.
const PACKED: usize = (BUFFERED + 1).next_power_of_two();

impl Packed {
    #[inline(always)]
    fn new() -> Packed {
        Packed {
            words: [0; PACKED],
            len: 0,
        }
    }

    /// At most [`BUFFERED`] offers a buffer.
    #[inline(always)]
    fn offer(&mut self, word: u64, keep: bool) {
        debug_assert!(self.len <= BUFFERED);
        self.words[self.len % PACKED] = word;
        self.len += usize::from(keep);
    }

    /// Clears the last word offered and not kept.
    #[inline(always)]
    fn seal(&mut self) {
        self.words[self.len % PACKED] = 0;
    }

    /// Word `at`: a kept one, or 0 (sealed) up to [`BUFFERED`].
    #[inline(always)]
    fn at(&self, at: usize) -> u64 {
        debug_assert!(at <= BUFFERED);
        self.words[at % PACKED]
    }
}

/// What the split of one source bucket learned on its one sorting walk of
/// the source's chain, for the clear and the compaction once the new shape
/// is published: each bucket's slots sorted (of the first [`MASKED`]
/// buckets), the chain's length, and the words that stay.
#[derive(Clone, Copy, Default)]
struct Sourced {
    source: usize,
    level: u32,
    sorted: [Sorted; MASKED],
    buckets: usize,
    left: usize,
}

impl Sourced {
    /// Bucket `index` of the source's chain, `bucket`, as sorted: recorded,
    /// or past the recorded buckets sorted again (after the clear, nothing
    /// is moving).
    #[inline(always)]
    fn sorted(&self, index: usize, bucket: &Bucket) -> Sorted {
        match self.sorted.get(index) {
            Some(&sorted) => sorted,
            None => Sorted::of(bucket, self.level, |_, _| {}),
        }
    }
}

/// The slots of `bucket` named by the bits of `slots`, in order.
#[inline(always)]
fn slots_of(bucket: &Bucket, mut slots: u8) -> impl Iterator<Item = &AtomicU64> {
    core::iter::from_fn(move || {
        (slots != 0).then(|| {
            let slot = &bucket.words[slots.trailing_zeros() as usize];
            slots &= slots - 1;
            slot
        })
    })
}

impl Table {
    /// Splits up to `SPLITS_PER_STEP` buckets, then publishes the new shape.
    /// Allocates nothing but the buckets themselves: the moved words are
    /// cleared by the bits their split recorded. Out of line: an insert
    /// that does not split should not carry its code.
    #[inline(never)]
    pub(super) fn split(&self, writer: &mut TableWriter, shape: Shape) {
        let mut next = shape;
        let mut split = [Sourced::default(); SPLITS_PER_STEP];
        let mut splits = 0;
        while splits < SPLITS_PER_STEP {
            let level = next.level();
            if level >= MAX_LEVEL || writer.entries <= capacity_of(next.buckets()) {
                break;
            }
            let target = next.buckets();
            if self.ensure_segment(writer, target).is_err() {
                break;
            }
            // Sorted in place: a `Sourced` returned and copied in was read
            // back before its byte-wide stores had left the store buffer.
            let sourced = &mut split[splits];
            (sourced.source, sourced.level) = (next.split, level);
            if self.split_one(writer, target, sourced).is_err() {
                break;
            }
            splits += 1;
            next.split += 1;
            if next.split == 1 << level {
                next = Shape::new(level + 1, 0);
            }
        }
        // Readers with the new shape look in the new buckets, whose words
        // were stored before this release.
        self.shape.store(next.pack(), Ordering::Release);
        // The next step's source buckets, a step (`LOAD * SPLITS_PER_STEP`,
        // 56 inserts; fewer once a large table's load falls) ahead: reading
        // them cold stalled the insert that splits (`docs/history.md`).
        // Not in loom builds: a hint, whose loads would only add
        // interleavings to the models.
        #[cfg(not(interner_loom))]
        for source in (next.split..=next.mask).take(SPLITS_PER_STEP) {
            prefetch(ptr::from_ref(Self::bucket(writer.current_dir(), source)).cast());
        }
        // A bucket splits at most once a step (a step splits fewer buckets
        // than a level has), and only the writer stores: the words that a
        // split sorted are still where it found them.
        for sourced in &split[..splits] {
            let first = Self::bucket(writer.current_dir(), sourced.source);
            if sourced.buckets <= MASKED {
                Self::clear_split(writer, first, sourced);
            } else {
                Self::clear_long_split(writer, first, sourced);
            }
        }
    }

    /// Clears the words that the split of `sourced` (whose chain from
    /// `first` has at most [`MASKED`] buckets) copied out, and compacts the
    /// chain: the words past its first `ceil(left / WORDS)` buckets (at
    /// least one) that stay move forward into those buckets' holes, and the
    /// buckets emptied so are unlinked and handed back to the writer, which
    /// links them again where a chain next overflows. A split leaves about
    /// half of a chain's words behind, scattered over its buckets: without
    /// this, an overflow bucket once linked stays linked however few words
    /// are left (`docs/history.md` has the counts).
    ///
    /// Without a branch a word: every slot of a kept bucket is stored once,
    /// with the word that stays there, or the next word from past the kept
    /// buckets, or 0 (a moved word's slot, cleared). With release, as
    /// [`place`](Self::place) stores: a reader that loads a word moved
    /// forward must see its record, and one that loads a word stored over
    /// itself loads the same word.
    ///
    /// A reader may be anywhere in the chain meanwhile. One that passed a
    /// hole before a word was copied into it, and reads the word's old
    /// slot after it was cleared, misses it: a false miss, as after any
    /// split. One that loaded a link to a bucket handed back keeps reading
    /// it, and perhaps, once it is linked again, the chain it joins: every
    /// word it can find there is a published one (`place` publishes the
    /// first word of a reused bucket like any other), whose record it
    /// checks in full, so it never returns a wrong entry; and it reaches
    /// the end, since chains have no cycles and a shard's splits are
    /// finite. Nothing is freed.
    fn clear_split(writer: &mut TableWriter, first: &Bucket, sourced: &Sourced) {
        let kept = sourced.left.div_ceil(WORDS).max(1);
        // Without room to hand back every emptied bucket the chain keeps
        // its buckets (it loses no word): its moved words are cleared.
        let compact =
            sourced.buckets > kept && writer.recycled.try_reserve(sourced.buckets - kept).is_ok();
        Self::clear_keeping(
            writer,
            first,
            sourced,
            if compact { kept } else { sourced.buckets },
        );
    }

    /// [`clear_split`](Self::clear_split) once it knows how many buckets
    /// of the chain it keeps (`kept`: those the words that stay need, or
    /// every one), with room reserved to hand back the others.
    fn clear_keeping(writer: &mut TableWriter, first: &Bucket, sourced: &Sourced, kept: usize) {
        let mut past = Packed::new();
        for (index, bucket) in chain(first).enumerate().skip(kept) {
            let stays = sourced.sorted[index].staying;
            for (slot, word) in bucket.words.iter().enumerate() {
                past.offer(word.load(Ordering::Relaxed), stays >> slot & 1 == 1);
            }
        }
        past.seal();
        let mut next = 0;
        for (index, bucket) in chain(first).take(kept).enumerate() {
            let stays = sourced.sorted[index].staying;
            for (slot, word) in bucket.words.iter().enumerate() {
                let stay = stays >> slot & 1 == 1;
                let (here, moved_in) = (word.load(Ordering::Relaxed), past.at(next));
                next += usize::from(!stay);
                publish(word, core::hint::select_unpredictable(stay, here, moved_in));
            }
        }
        if kept < sourced.buckets {
            let last_kept = chain(first)
                .nth(kept - 1)
                .expect("a chain has a bucket for every WORDS words it holds");
            Self::unlink_past(writer, last_kept);
        }
    }

    /// Unlinks the buckets of the chain past `last_kept`, clears them and
    /// hands them back to the writer (which reserved room for them).
    fn unlink_past(writer: &mut TableWriter, last_kept: &Bucket) {
        // SAFETY: a linked overflow bucket, live until `&mut`.
        let mut at = unsafe { last_kept.next.load(Ordering::Relaxed).as_ref() };
        // Relaxed, all: a reader that still reaches the emptied buckets
        // finds nothing there that the kept ones lack but what was just
        // moved (a false miss at worst, as above).
        last_kept.next.store(ptr::null_mut(), Ordering::Relaxed);
        while let Some(bucket) = at {
            for word in &bucket.words {
                word.store(0, Ordering::Relaxed);
            }
            // SAFETY: as above.
            at = unsafe { bucket.next.load(Ordering::Relaxed).as_ref() };
            bucket.next.store(ptr::null_mut(), Ordering::Relaxed);
            writer.recycled.push(NonNull::from(bucket));
        }
    }

    /// [`clear_split`](Self::clear_split) for a chain longer than
    /// [`MASKED`] buckets (crafted hashes only), a word at a time: the
    /// moved words cleared, then the words past the kept buckets moved
    /// forward into their holes, each published before its old slot is
    /// cleared.
    #[cold]
    fn clear_long_split(writer: &mut TableWriter, first: &Bucket, sourced: &Sourced) {
        for (index, bucket) in chain(first).enumerate() {
            for slot in slots_of(bucket, sourced.sorted(index, bucket).moving) {
                // Relaxed: a reader that reads the cleared slot only misses.
                slot.store(0, Ordering::Relaxed);
            }
        }
        let kept = sourced.left.div_ceil(WORDS).max(1);
        let last_kept = chain(first)
            .nth(kept - 1)
            .expect("a chain has a bucket for every WORDS words it holds");
        // SAFETY: a linked overflow bucket, live until `&mut`.
        let Some(tail) = (unsafe { last_kept.next.load(Ordering::Relaxed).as_ref() }) else {
            return;
        };
        if writer.recycled.try_reserve(chain(tail).count()).is_err() {
            return;
        }
        // The kept buckets' holes: every slot whose word neither stays nor
        // was there (a moved word's slot is clear now).
        let mut holes = chain(first)
            .take(kept)
            .enumerate()
            .flat_map(|(index, bucket)| {
                slots_of(bucket, !sourced.sorted(index, bucket).staying & SLOTS)
            });
        for (index, bucket) in chain(tail).enumerate() {
            for slot in slots_of(bucket, sourced.sorted(kept + index, bucket).staying) {
                let hole = holes
                    .next()
                    .expect("the kept buckets have a hole for every word past them");
                publish(hole, slot.load(Ordering::Relaxed));
            }
        }
        Self::unlink_past(writer, last_kept);
    }

    /// Copies the words of bucket `sourced.source`'s chain whose hash has
    /// bit `sourced.level` set into the empty bucket `target` (and overflow
    /// buckets after it), and records in `sourced` (as made by `default`)
    /// what the clear needs: the chain's slots sorted on the one walk that
    /// counts them (the caller clears the originals once the shape that
    /// reaches `target` is published).
    /// All-or-nothing: every allocation it needs comes first, so that a
    /// failure leaves no word copied. (A word copied into a bucket that the
    /// published shape does not reach would have its original cleared, and
    /// its entry drop out of the table: until it was indexed again, every
    /// hit on it would take the lock.)
    fn split_one(
        &self,
        writer: &mut TableWriter,
        target: usize,
        sourced: &mut Sourced,
    ) -> Result<(), AllocError> {
        let (source, level) = (sourced.source, sourced.level);
        // Placing words links spares, never a directory: `dir` stays current.
        let dir = writer.current_dir();
        let from = Self::bucket(dir, source);
        // The target is a bucket that no published shape reaches yet, never
        // used: empty, without a link.
        let to = Self::bucket(dir, target);
        debug_assert!(to.next.load(Ordering::Relaxed).is_null());
        debug_assert!(to.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        // The movers of the first `MASKED` buckets, packed in order.
        let mut moving = Packed::new();
        let mut movers = 0;
        for (index, bucket) in chain(from).enumerate() {
            let sorted = match sourced.sorted.get_mut(index) {
                Some(recorded) => {
                    *recorded = Sorted::of(bucket, level, |word, moved| moving.offer(word, moved));
                    *recorded
                }
                None => Sorted::of(bucket, level, |_, _| {}),
            };
            movers += usize::from(sorted.movers);
            sourced.left += usize::from(sorted.stayers);
            sourced.buckets += 1;
        }
        moving.seal();
        // Movers past the target's first bucket need overflow buckets, one
        // a `WORDS` of them, stocked before any word is copied.
        writer.stock_spares(movers.saturating_sub(1) / WORDS)?;
        // The target's first bucket: its first movers, zero after them.
        // Relaxed: readers reach it only through the shape that the step
        // publishes with release after them.
        for (slot, &word) in to.words.iter().zip(&moving.words) {
            slot.store(word, Ordering::Relaxed);
        }
        // The movers the first bucket did not take: the buffer's past
        // `WORDS`, and those of a chain's buckets past the buffered ones
        // (which may be all of them: a long chain's few movers).
        if movers > moving.len.min(WORDS) {
            let buffered = moving.words[..moving.len].iter().skip(WORDS).copied();
            let past = chain(from)
                .enumerate()
                .skip(MASKED)
                .flat_map(|(index, bucket)| {
                    slots_of(bucket, sourced.sorted(index, bucket).moving)
                        .map(|slot| slot.load(Ordering::Relaxed))
                });
            Self::extend(writer, to, moving.len.min(WORDS), buffered.chain(past));
        }
        Ok(())
    }

    /// Stores `words` into the chain of the unpublished bucket `to`, from
    /// its slot `at` on, linking the writer's spares as it fills (the
    /// caller stocked them).
    #[cold]
    fn extend(
        writer: &mut TableWriter,
        to: &Bucket,
        mut at: usize,
        words: impl Iterator<Item = u64>,
    ) {
        let mut into = to;
        for word in words {
            if at < WORDS {
                // Into an overflow bucket, which a compaction may have
                // handed back (a reader that loaded its old link may still
                // read it), as `place` stores; or, past a chain's buffered
                // buckets, into `to`'s own rest, where relaxed would do.
                publish(&into.words[at], word);
                at += 1;
            } else {
                Self::place_at(writer, Vacancy::After(into), word);
                // SAFETY: just linked, live until `&mut`.
                into = unsafe { &*into.next.load(Ordering::Relaxed) };
                at = 1;
            }
        }
    }

    /// Makes sure bucket `index` has a segment, growing the directory if
    /// needed.
    pub(super) fn ensure_segment(
        &self,
        writer: &mut TableWriter,
        index: usize,
    ) -> Result<(), AllocError> {
        let at = index / SEGMENT_BUCKETS;
        let dir = writer.dir.expect("an initialised table");
        if at < dir.slots().len() && !dir.slots()[at].load(Ordering::Relaxed).is_null() {
            return Ok(());
        }
        writer.segments.try_reserve(1).map_err(|_| AllocError)?;
        writer.retired_dirs.try_reserve(1).map_err(|_| AllocError)?;
        let segment = new_segment().ok_or(AllocError)?;
        // Owned from here on, whatever fails below.
        writer.segments.push(segment);
        if at >= dir.slots().len() {
            let bigger = SegmentDir::try_new((at + 1).next_power_of_two()).ok_or(AllocError)?;
            for (old, new) in dir.slots().iter().zip(bigger.slots()) {
                new.store(old.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            // Publishes the copied pointers with the directory.
            self.dir.store(bigger.first(), Ordering::Release);
            writer.retired_dirs.push(dir);
            writer.dir = Some(bigger);
        }
        let dir = writer.dir.expect("an initialised table");
        // Relaxed: readers reach it only after the shape's release.
        dir.slots()[at].store(segment.as_ptr(), Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests;
