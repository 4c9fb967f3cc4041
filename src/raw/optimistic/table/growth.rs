//! The by-bytes table's growth, which only its writer runs: splits (one
//! bucket's words re-placed by one more hash bit, the new shape published,
//! the moved words cleared), the compaction of a split bucket's chain, and
//! the segment directory's growth.

use core::ptr::{self, NonNull};

use super::super::blocks::{new_segment, Bucket, SegmentDir, TableWriter};
use super::{capacity_of, chain, moves, publish, Shape, Table, MAX_LEVEL};
use crate::raw::alloc::AllocError;
#[cfg(not(interner_loom))]
use crate::raw::bytes::prefetch;
use crate::raw::sizes::{SEGMENT_BUCKETS, SPLITS_PER_STEP, WORDS};
use crate::sync::Ordering;

/// The buckets of a source chain whose movers a split records as bits
/// ([`Sourced`]); the rare longer chain's are found again, for clearing,
/// by their hash bit.
const MASKED: usize = 4;

const _: () = assert!(WORDS <= 8, "a bucket's movers fit a `u8`");

/// What the split of one source bucket learned on its one walk of the
/// source's chain, for the clear once the new shape is published: the
/// movers' slots as bits (of the first [`MASKED`] buckets), the chain's
/// length, and the words that stay.
#[derive(Clone, Copy, Default)]
struct Sourced {
    source: usize,
    level: u32,
    movers: [u8; MASKED],
    buckets: usize,
    left: usize,
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
            let Ok(sourced) = self.split_one(writer, next.split, target, level) else {
                break;
            };
            split[splits] = sourced;
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
        // split recorded as movers are still where it found them.
        for sourced in &split[..splits] {
            Self::clear_split(writer, sourced);
        }
    }

    /// Clears the words that the split of `sourced` copied out, then
    /// compacts the bucket's chain ([`compact`](Self::compact)).
    fn clear_split(writer: &mut TableWriter, sourced: &Sourced) {
        let first = Self::bucket(writer.current_dir(), sourced.source);
        for (index, bucket) in chain(first).enumerate() {
            let mut movers = match sourced.movers.get(index) {
                Some(&movers) => u32::from(movers),
                // Past the recorded buckets: found again by their hash bit.
                None => bucket
                    .words
                    .iter()
                    .enumerate()
                    .fold(0, |movers, (at, slot)| {
                        movers | u32::from(moves(slot.load(Ordering::Relaxed), sourced.level)) << at
                    }),
            };
            while movers != 0 {
                // Relaxed: a reader that reads the cleared slot only misses.
                bucket.words[movers.trailing_zeros() as usize].store(0, Ordering::Relaxed);
                movers &= movers - 1;
            }
        }
        // A chain no longer than its words need (most: a bucket alone) is
        // left as it is.
        if sourced.buckets > sourced.left.div_ceil(WORDS).max(1) {
            Self::compact(writer, first, sourced.left);
        }
    }

    /// Moves the words of `first`'s overflow buckets past the first
    /// `ceil(left / WORDS)` buckets (at least one) forward into the holes
    /// of those, unlinks the buckets emptied so and hands them back to the
    /// writer, which links them again where a chain next overflows. A split
    /// leaves about half of a chain's words behind, scattered over its
    /// buckets: without this, an overflow bucket once linked stays linked
    /// however few words are left (`docs/history.md` has the counts).
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
    fn compact(writer: &mut TableWriter, first: &Bucket, left: usize) {
        let kept = left.div_ceil(WORDS).max(1);
        let last_kept = chain(first)
            .nth(kept - 1)
            .expect("a chain has a bucket for every WORDS words it holds");
        // SAFETY: a linked overflow bucket, live until `&mut`.
        let Some(tail) = (unsafe { last_kept.next.load(Ordering::Relaxed).as_ref() }) else {
            return;
        };
        // Without room to hand back every emptied bucket the chain stays as
        // it is: it loses no word, it only keeps its buckets.
        if writer.recycled.try_reserve(chain(tail).count()).is_err() {
            return;
        }
        let mut holes = chain(first)
            .take(kept)
            .flat_map(|bucket| &bucket.words)
            .filter(|slot| slot.load(Ordering::Relaxed) == 0);
        for slot in chain(tail).flat_map(|bucket| &bucket.words) {
            let word = slot.load(Ordering::Relaxed);
            if word != 0 {
                let hole = holes
                    .next()
                    .expect("the kept buckets have a hole for every word past them");
                publish(hole, word);
                // Relaxed: as a moved word's (`clear_split`).
                slot.store(0, Ordering::Relaxed);
            }
        }
        // Relaxed, both: a reader that still reaches the emptied buckets
        // finds nothing there that the kept ones lack but what was just
        // moved (a false miss at worst, as above).
        last_kept.next.store(ptr::null_mut(), Ordering::Relaxed);
        let mut at = Some(tail);
        while let Some(bucket) = at {
            // SAFETY: as above.
            at = unsafe { bucket.next.load(Ordering::Relaxed).as_ref() };
            bucket.next.store(ptr::null_mut(), Ordering::Relaxed);
            writer.recycled.push(NonNull::from(bucket));
        }
    }

    /// Copies the words of bucket `source`'s chain whose hash has bit
    /// `level` set into the empty bucket `target`, and returns what the
    /// clear needs: the movers' slots, recorded on the copy's walk (the
    /// caller clears the originals once the shape that reaches `target` is
    /// published). All-or-nothing: every allocation it needs comes first,
    /// so that a failure leaves no word copied. (A word copied into a
    /// bucket that the published shape does not reach would have its
    /// original cleared, and its entry drop out of the table: until it was
    /// indexed again, every hit on it would take the lock.)
    fn split_one(
        &self,
        writer: &mut TableWriter,
        source: usize,
        target: usize,
        level: u32,
    ) -> Result<Sourced, AllocError> {
        // Placing words links spares, never a directory: `dir` stays current.
        let dir = writer.current_dir();
        let from = Self::bucket(dir, source);
        // The target is a bucket that no published shape reaches yet, never
        // used: empty, without a link.
        let to = Self::bucket(dir, target);
        debug_assert!(to.next.load(Ordering::Relaxed).is_null());
        debug_assert!(to.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        let mut sourced = Sourced {
            source,
            level,
            buckets: 1,
            ..Sourced::default()
        };
        // Movers past the target's first bucket need overflow buckets, one
        // a `WORDS` of them, stocked before any word is copied. A source
        // without overflow buckets has at most `WORDS` movers (and its
        // chain is never compacted: what stays needs no count).
        let mut movers = 0;
        if !from.next.load(Ordering::Relaxed).is_null() {
            let (mut buckets, mut words) = (0, 0);
            for bucket in chain(from) {
                buckets += 1;
                for slot in &bucket.words {
                    let word = slot.load(Ordering::Relaxed);
                    movers += usize::from(moves(word, level));
                    words += usize::from(word != 0);
                }
            }
            writer.stock_spares(movers.saturating_sub(1) / WORDS)?;
            (sourced.buckets, sourced.left) = (buckets, words - movers);
        }
        let record = |sourced: &mut Sourced, index: usize, movers: u8| {
            if let Some(recorded) = sourced.movers.get_mut(index) {
                *recorded = movers;
            }
        };
        if movers <= WORDS {
            // The common case: the movers fill the target's first slots in
            // order. Every word is stored into the target's next slot and
            // only a mover moves past it: no branch a word, whose outcome is
            // a coin toss. The slot after the last mover may so hold a word
            // that stays, cleared after.
            let mut at = 0;
            for (index, bucket) in chain(from).enumerate() {
                let mut moved_here = 0u8;
                for (slot, word) in bucket.words.iter().enumerate() {
                    let word = word.load(Ordering::Relaxed);
                    let moved = moves(word, level);
                    // Relaxed, the target's stores all: readers reach the
                    // target only through the shape that the step publishes
                    // with release after them.
                    if let Some(next) = to.words.get(at) {
                        next.store(word, Ordering::Relaxed);
                    }
                    at += usize::from(moved);
                    moved_here |= u8::from(moved) << slot;
                }
                record(&mut sourced, index, moved_here);
            }
            if let Some(rest) = to.words.get(at) {
                rest.store(0, Ordering::Relaxed);
            }
        } else {
            for (index, bucket) in chain(from).enumerate() {
                let mut moved_here = 0u8;
                for (slot, word) in bucket.words.iter().enumerate() {
                    let word = word.load(Ordering::Relaxed);
                    if moves(word, level) {
                        self.place(writer, target, word);
                        moved_here |= 1 << slot;
                    }
                }
                record(&mut sourced, index, moved_here);
            }
        }
        Ok(sourced)
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
mod tests {
    use super::*;
    use crate::raw::optimistic::log::Ref;

    /// Keys enough for several rounds of splits and compactions (a table
    /// starts with 64 buckets); fewer under Miri.
    const KEYS: u32 = if cfg!(miri) { 3_000 } else { 40_000 };

    /// A table of `count` keys of well-mixed hashes (refs `0..count`).
    fn filled(count: u32) -> (Table, TableWriter, Vec<(u64, u32)>) {
        let (table, mut writer) = (Table::new(), TableWriter::default());
        let keys: Vec<(u64, u32)> = (0..count)
            .map(|at| (u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15), at))
            .collect();
        for &(hash, at) in &keys {
            table
                .insert(&mut writer, hash, Ref::from_bits(at), 0)
                .unwrap();
        }
        (table, writer, keys)
    }

    /// Every bucket's chain under the writer's current shape, as (buckets,
    /// words) counts.
    fn chains(table: &Table, writer: &TableWriter) -> Vec<(usize, usize)> {
        let shape = Shape::unpack(table.shape.load(Ordering::Relaxed));
        (0..shape.buckets())
            .map(|index| {
                let buckets: Vec<&Bucket> =
                    chain(Table::bucket(writer.current_dir(), index)).collect();
                let words = buckets
                    .iter()
                    .flat_map(|bucket| &bucket.words)
                    .filter(|slot| slot.load(Ordering::Relaxed) != 0)
                    .count();
                (buckets.len(), words)
            })
            .collect()
    }

    #[test]
    fn every_chain_has_as_few_buckets_as_its_words_need() {
        for count in [1, 500, KEYS / 8, KEYS] {
            let (table, writer, keys) = filled(count);
            for (index, (buckets, words)) in chains(&table, &writer).into_iter().enumerate() {
                assert_eq!(
                    buckets,
                    words.div_ceil(WORDS).max(1),
                    "bucket {index} of {count}: {words} words"
                );
            }
            assert!(keys
                .iter()
                .all(|&(hash, at)| table.find(hash, |r| r.to_bits() == at).is_some()));
        }
    }

    #[test]
    fn a_chain_longer_than_its_recorded_buckets_splits_whole() {
        // 300 keys in bucket 5 of the first 64 (43 buckets of chain, past
        // the `MASKED` whose movers a split records), their upper bits
        // mixed, and well-mixed keys enough to split it (the first step,
        // past the load of 71 buckets, splits buckets 0 to 7), as many
        // under Miri.
        let crowded = (0..300u32).map(|at| {
            let mixed = u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (mixed & !0x3F | 5, at)
        });
        let spread = (300..700).map(|at| (u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15), at));
        let keys: Vec<(u64, u32)> = crowded.chain(spread).collect();
        let (table, mut writer) = (Table::new(), TableWriter::default());
        for &(hash, at) in &keys {
            table
                .insert(&mut writer, hash, Ref::from_bits(at), 0)
                .unwrap();
        }
        let shape = Shape::unpack(table.shape.load(Ordering::Relaxed));
        assert!(shape.buckets() > 64 + 5, "bucket 5 split");
        for (index, (buckets, words)) in chains(&table, &writer).into_iter().enumerate() {
            assert_eq!(buckets, words.div_ceil(WORDS).max(1), "bucket {index}");
        }
        // Each word once, in the bucket its hash names.
        let mut found = 0;
        for index in 0..shape.buckets() {
            for bucket in chain(Table::bucket(writer.current_dir(), index)) {
                for slot in &bucket.words {
                    let word = slot.load(Ordering::Relaxed);
                    if word != 0 {
                        assert_eq!(shape.bucket_of(word), index);
                        found += 1;
                    }
                }
            }
        }
        assert_eq!(found, keys.len());
        assert!(keys
            .iter()
            .all(|&(hash, at)| table.find(hash, |r| r.to_bits() == at).is_some()));
    }

    #[test]
    fn every_overflow_bucket_is_linked_once_or_held_empty() {
        let (table, writer, _) = filled(KEYS);
        let linked: usize = chains(&table, &writer).iter().map(|c| c.0 - 1).sum();
        let handed_out = writer.pools.len() * SEGMENT_BUCKETS - writer.pool_left;
        let held = writer.spare.len() + writer.recycled.len();
        assert_eq!(linked + held, handed_out, "an overflow bucket was lost");
        assert!(!writer.recycled.is_empty() || linked < handed_out);
        for bucket in writer.spare.iter().chain(&writer.recycled) {
            // SAFETY: held by the writer, live in its pools.
            let bucket = unsafe { bucket.as_ref() };
            assert!(bucket.next.load(Ordering::Relaxed).is_null());
            assert!(bucket
                .words
                .iter()
                .all(|slot| slot.load(Ordering::Relaxed) == 0));
        }
    }

    #[test]
    fn no_fresh_overflow_bucket_is_taken_while_emptied_ones_are_held() {
        let (table, mut writer) = (Table::new(), TableWriter::default());
        let handed_out = |w: &TableWriter| w.pools.len() * SEGMENT_BUCKETS - w.pool_left;
        let mut reused = 0;
        for at in 0..KEYS {
            let hash = u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            // An insert takes at most one spare, and the splits of a step,
            // on these keys, two more: with 3 held, none is fresh.
            let (held, before) = (
                writer.spare.len() + writer.recycled.len(),
                handed_out(&writer),
            );
            reused += usize::from(!writer.recycled.is_empty());
            table
                .insert(&mut writer, hash, Ref::from_bits(at), 0)
                .unwrap();
            if held >= 3 {
                assert_eq!(handed_out(&writer), before, "insert {at}");
            }
        }
        assert!(reused > 0, "no bucket was handed back");
    }
}
