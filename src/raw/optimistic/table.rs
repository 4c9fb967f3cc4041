//! The by-bytes index: lock-free lookups over buckets of one cache line,
//! grown by linear hashing, one bucket split at a time, never copied.
//!
//! # Layout
//!
//! A bucket is 64 bytes: [`WORDS`] slot words and a link to an overflow
//! bucket. A slot word is `(ref + 1) << 32 | low 32 bits of the key's hash`:
//! the log [`Ref`] of a record and the hash bits that place it, so a probe
//! filters on the hash without touching the record, and a split re-places a
//! word without re-hashing its record. `0` is an empty slot.
//!
//! [`WORDS`]: crate::raw::sizes::WORDS
//!
//! Buckets live in segments of [`SEGMENT_BUCKETS`], found through a
//! directory of segment pointers. Linear hashing: with `2^level + split`
//! buckets, a key of hash `h` lives in bucket `h mod 2^level`, or in
//! `h mod 2^(level+1)` if that is below `split`. Splitting bucket `split`
//! moves its words whose hash has bit `level` set to the new bucket
//! `2^level + split`. When the entries exceed [`LOAD`] per bucket by the
//! load of `SPLITS_PER_STEP - 1` buckets, a growth step splits that many
//! buckets and publishes the new shape once. The table grows a few buckets
//! at a time, so it never holds a second copy of itself and its load stays
//! near `LOAD` (a doubling table swings between half and full). Past
//! [`LARGE_TABLE_BUCKETS`] the load falls to [`LARGE_LOAD`] over a level's
//! growth ([`capacity_of`]).
//!
//! [`LARGE_TABLE_BUCKETS`]: crate::raw::sizes::LARGE_TABLE_BUCKETS
//! [`LARGE_LOAD`]: crate::raw::sizes::LARGE_LOAD
//!
//! # Protocol
//!
//! Only the writer (holding the shard's lock) stores. Placing a word is a
//! **release** store into an empty slot (or into a fresh overflow bucket,
//! then linked with a **release** store). A reader loads the shape with
//! **acquire**, then the directory and segment, then every slot word of a
//! bucket **relaxed** (on x86-64, four SSE2 loads of the line in inline
//! assembly, `Bucket::tag_matches`), to compare their tags with the hash (a
//! filter, with no branch per slot), then each matching slot again and the
//! link with **acquire**, and checks a candidate record in full: a found record is
//! complete and is the key's.
//!
//! A split copies the moving words into the new bucket, publishes the new
//! shape with **release**, then clears the moved words in the old bucket. A
//! reader with the new shape finds the copies; a reader still on the old
//! shape finds the originals, or, if it reads the old bucket after the
//! clear, misses: a *false miss*, which the caller re-checks under the lock.
//! No reader ever sees a wrong record. With the clear the split compacts
//! the old bucket's chain (`growth.rs`): words left in its overflow buckets
//! move forward into the holes (one pass stores every slot of the kept
//! buckets with **release**: the word that stays, one moved forward, or
//! 0; then the emptied buckets are cleared: a reader may miss such a word,
//! never see a wrong one), and the overflow buckets
//! emptied so are unlinked and linked again where a chain next overflows;
//! the first word stored into such a reused bucket is a **release** store
//! of its own, since a reader that loaded the old link may still read it.
//! Segments, overflow buckets and directories are freed only through
//! `&mut` (`clear`, drop); a directory replaced by a bigger one is retired,
//! not freed, for readers that still hold it (8 bytes per 4 KiB segment).

use core::hint::select_unpredictable;
use core::ptr::{self, NonNull};

use super::blocks::{new_segment, Bucket, SegmentDir, TableWriter, TagMatches};
use super::log::Ref;
use crate::raw::alloc::AllocError;
use crate::raw::sizes::{LARGE_LOAD, LARGE_TABLE_BUCKETS, LOAD, SEGMENT_BUCKETS, SPLITS_PER_STEP};
use crate::sync::{AtomicPtr, AtomicU64, Ordering};

/// A table may have at most `2^MAX_LEVEL` buckets: the slot word holds 32
/// bits of hash.
const MAX_LEVEL: u32 = 31;

mod growth;

/// The entries a table of `buckets` holds before its next split: [`LOAD`]
/// a bucket up to [`LARGE_TABLE_BUCKETS`], [`LARGE_LOAD`] from twice that
/// on, and between them a ramp (each bucket added holds `2 * LARGE_LOAD -
/// LOAD`), so that the load falls over a level's worth of growth, with no
/// run of inserts that split a step each (a burst of splits at one
/// threshold cost more than the lower load gave, `docs/history.md`).
/// Continuous and increasing.
#[inline]
const fn capacity_of(buckets: usize) -> usize {
    const T: usize = LARGE_TABLE_BUCKETS;
    if buckets < T {
        LOAD * buckets
    } else if buckets < 2 * T {
        LOAD * T + (2 * LARGE_LOAD - LOAD) * (buckets - T)
    } else {
        LARGE_LOAD * buckets
    }
}

/// The buckets a table of `entries` needs ([`capacity_of`]'s inverse).
const fn buckets_for(entries: usize) -> usize {
    const T: usize = LARGE_TABLE_BUCKETS;
    if entries < LOAD * T {
        entries / LOAD
    } else if entries < LARGE_LOAD * 2 * T {
        T + (entries - LOAD * T) / (2 * LARGE_LOAD - LOAD)
    } else {
        entries / LARGE_LOAD
    }
}

// The ramp adds buckets that hold at least one entry.
const _: () = assert!(2 * LARGE_LOAD > LOAD);

#[inline]
fn word_of(hash: u64, at: Ref) -> u64 {
    (u64::from(at.to_bits()) + 1) << 32 | (hash & 0xFFFF_FFFF)
}

/// Whether a split at `level` moves `word` to the new bucket (its hash has
/// bit `level` set; an empty slot's `0` has none).
#[inline]
fn moves(word: u64, level: u32) -> bool {
    (word >> level) & 1 == 1
}

#[inline]
fn ref_of(word: u64) -> Ref {
    Ref::from_bits(((word >> 32) - 1) as u32)
}

/// Stores `word` into `slot`, publishing the record behind its ref: a
/// reader that loads the word with acquire sees the record whole.
#[inline]
fn publish(slot: &AtomicU64, word: u64) {
    slot.store(word, Ordering::Release);
}

/// The buckets of the chain that starts at `first`, in order, as the
/// writer sees them (relaxed loads: only the writer links).
fn chain(first: &Bucket) -> impl Iterator<Item = &Bucket> {
    core::iter::successors(Some(first), |bucket| {
        // SAFETY: a linked overflow bucket, live until `&mut` access.
        unsafe { bucket.next.load(Ordering::Relaxed).as_ref() }
    })
}

/// `level` and `split`, packed in one word so that readers load them at
/// once: `2^level - 1` in the high half (the mask a reader applies, so that
/// it shifts nothing) and `split` (below `2^level <= 2^MAX_LEVEL`) in the low
/// half.
#[derive(Clone, Copy)]
struct Shape {
    /// `2^level - 1`.
    mask: usize,
    split: usize,
}

// `2^MAX_LEVEL - 1` and `split` fit in a half each.
const _: () = assert!(MAX_LEVEL < 32);

impl Shape {
    #[inline]
    fn new(level: u32, split: usize) -> Shape {
        debug_assert!(level <= MAX_LEVEL && split < 1 << level);
        Shape {
            mask: (1 << level) - 1,
            split,
        }
    }

    #[inline]
    fn unpack(word: u64) -> Shape {
        Shape {
            mask: (word >> 32) as usize,
            split: (word as u32) as usize,
        }
    }

    #[inline]
    fn pack(self) -> u64 {
        (self.mask as u64) << 32 | self.split as u64
    }

    #[inline]
    fn level(self) -> u32 {
        // `mask` is `2^level - 1`: its ones are its low bits (a count of
        // ones was a dozen instructions without `popcnt`).
        self.mask.trailing_ones()
    }

    #[inline]
    fn buckets(self) -> usize {
        self.mask + 1 + self.split
    }

    #[inline]
    fn bucket_of(self, hash: u64) -> usize {
        let low = hash as usize & self.mask;
        if low < self.split {
            hash as usize & (2 * self.mask + 1)
        } else {
            low
        }
    }
}

/// A table's shape and directory as loaded once ([`Table::buckets`]): the
/// first buckets that lookups of many hashes read. The table may grow
/// meanwhile: a split may have moved a key out of the bucket this names
/// for it (a false miss, as in [`Table::find`]), never anything wrong into
/// it.
#[derive(Clone, Copy)]
pub(crate) struct Buckets<'t> {
    shape: Shape,
    dir: NonNull<AtomicPtr<Bucket>>,
    _table: core::marker::PhantomData<&'t Table>,
}

impl<'t> Buckets<'t> {
    /// The first bucket a lookup of `hash` reads, under this shape.
    #[inline]
    pub(crate) fn first(self, hash: u64) -> &'t Bucket {
        // The directory was acquired after the shape (`Table::bucket`'s
        // contract) and lives while the table is borrowed.
        Table::bucket(self.dir, self.shape.bucket_of(hash))
    }
}

/// Where the writer stores the next word of a chain: its first empty slot,
/// or, in a chain without one, a link after its last bucket. Found and used
/// by the writer under its lock, before the table changes.
#[derive(Clone, Copy)]
pub(crate) enum Vacancy<'t> {
    Slot(&'t AtomicU64),
    After(&'t Bucket),
}

/// The by-bytes index of one shard.
pub(crate) struct Table {
    shape: AtomicU64,
    /// The first slot of the current directory (owned by the writer).
    dir: AtomicPtr<AtomicPtr<Bucket>>,
}

impl Table {
    /// An empty table; it allocates nothing until the first insert.
    pub(crate) fn new() -> Table {
        Table {
            shape: AtomicU64::new(0),
            dir: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The bucket `index` under a directory the caller acquired after the
    /// shape that made `index` valid.
    #[inline]
    // Segments hold one bucket in loom builds.
    #[cfg_attr(interner_loom, allow(clippy::modulo_one))]
    fn bucket<'t>(dir: NonNull<AtomicPtr<Bucket>>, index: usize) -> &'t Bucket {
        // SAFETY: a directory published with (or after) the shape that made
        // `index` valid has a slot for its segment (see below), and lives
        // until `&mut` access, which outlives `&self`.
        let slot = unsafe { dir.add(index / SEGMENT_BUCKETS).as_ref() };
        let segment = slot.load(Ordering::Relaxed);
        // In loom models, a missing edge to the segment's store shows here
        // (loom may return the directory's initial null) as a clean failure.
        assert!(cfg!(not(interner_loom)) || !segment.is_null());
        // SAFETY: a bucket index below the shape's count has its segment in
        // every directory published since that shape (the segment and the
        // directory were stored before the shape's release), and a segment
        // lives until `&mut` access, which outlives `&self`.
        unsafe { &*segment.add(index % SEGMENT_BUCKETS) }
    }

    /// The ref of the key of hash `hash` for which `is_key` holds. Acquire
    /// loads only; may miss a key during a split (see the module docs).
    #[cfg(test)]
    #[inline]
    pub(crate) fn find(&self, hash: u64, mut is_key: impl FnMut(Ref) -> bool) -> Option<Ref> {
        self.find_map(hash, |at| is_key(at).then_some(at))
    }

    /// What `key_of` returns for the first ref of hash `hash` for which it
    /// returns something: [`find`](Self::find) for a caller that reads the
    /// record anyway and keeps what it read.
    #[inline(always)]
    pub(crate) fn find_map<T>(&self, hash: u64, key_of: impl FnMut(Ref) -> Option<T>) -> Option<T> {
        let first = self.buckets()?.first(hash);
        Self::find_map_from(first, hash, key_of)
    }

    /// [`find_map`](Self::find_map) from `first`, the first bucket of
    /// `hash` under a shape loaded earlier ([`Buckets::first`]).
    #[inline(always)]
    pub(crate) fn find_map_from<T>(
        first: &Bucket,
        hash: u64,
        mut key_of: impl FnMut(Ref) -> Option<T>,
    ) -> Option<T> {
        let mut bucket = first;
        loop {
            // Acquire: the record behind a ref was published before the
            // word's release store. (The slot may have changed since the
            // filter read it: any word loaded so is a published one, and
            // its tag is checked again.)
            let found = Self::find_in(bucket, hash, Ordering::Acquire, &mut key_of);
            if found.is_some() {
                return found;
            }
            let next = bucket.next.load(Ordering::Acquire);
            // SAFETY: a linked overflow bucket was built before its release
            // store and lives until `&mut` access. (It may have been unlinked
            // since and linked into another chain, `growth.rs`: every word
            // in it is still a published one, checked in full above.)
            bucket = unsafe { next.as_ref() }?;
        }
    }

    /// What `key_of` returns for the first slot word of `bucket` (not its
    /// chain) that holds a ref of hash `hash` for which it returns
    /// something, each candidate word loaded with `order`.
    #[inline(always)]
    fn find_in<T>(
        bucket: &Bucket,
        hash: u64,
        order: Ordering,
        key_of: &mut impl FnMut(Ref) -> Option<T>,
    ) -> Option<T> {
        // Every slot's tag is compared before any record is read, into a
        // mask without branches: a branch per slot would mispredict
        // wherever the key's slot varies (`docs/history.md`).
        Self::find_among(bucket, bucket.tag_matches(hash as u32), hash, order, key_of)
    }

    /// [`find_in`](Self::find_in) over the slots of `bucket` whose tags
    /// matched `hash` (`matches`).
    #[inline(always)]
    fn find_among<T>(
        bucket: &Bucket,
        matches: TagMatches,
        hash: u64,
        order: Ordering,
        key_of: &mut impl FnMut(Ref) -> Option<T>,
    ) -> Option<T> {
        for slot in matches {
            let word = bucket.words[slot].load(order);
            // An empty slot matches a hash whose low half is 0.
            if word != 0 && word as u32 == hash as u32 {
                if let Some(found) = key_of(ref_of(word)) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// The ref in the first slot word from `first` on (the first bucket of
    /// `hash`, [`Buckets::first`]) that may hold the key of hash `hash`:
    /// what a lookup will most likely compare.
    #[inline]
    pub(crate) fn first_candidate(first: &Bucket, hash: u64) -> Option<Ref> {
        Self::find_map_from(first, hash, Some)
    }

    /// [`find_map`](Self::find_map) for the writer, under its lock, where
    /// it is exact: `Ok` of what `key_of` returns for the first ref of hash
    /// `hash` for which it returns something; else `Err` of where the word
    /// of `hash` goes (`None`: the table has no buckets yet), found on the
    /// same walk, for [`insert_reserved`](Self::insert_reserved) to store
    /// the word without walking the chain again. The vacancy holds until
    /// the table next changes: only the writer changes it. `key_of` may be
    /// asked again about a ref it rejected (an unlinked first bucket is
    /// scanned twice): it must answer the same.
    #[inline(always)]
    pub(crate) fn find_map_or_vacancy<T>(
        &self,
        hash: u64,
        mut key_of: impl FnMut(Ref) -> Option<T>,
    ) -> Result<T, Option<Vacancy<'_>>> {
        let Some(buckets) = self.buckets() else {
            return Err(None);
        };
        match Self::vacancy_unless_found(buckets.first(hash), hash, &mut key_of) {
            Ok(vacancy) => Err(Some(vacancy)),
            Err(found) => Ok(found),
        }
    }

    /// [`find_map_or_vacancy`](Self::find_map_or_vacancy)'s walk of the
    /// chain from `first`: `Err` of what `key_of` found, else `Ok` of where
    /// the word of `hash` goes.
    #[inline(always)]
    fn vacancy_unless_found<'t, T>(
        first: &'t Bucket,
        hash: u64,
        key_of: &mut impl FnMut(Ref) -> Option<T>,
    ) -> Result<Vacancy<'t>, T> {
        let first_empty = Self::empty_unless_found(first, hash, key_of)?;
        // Whether the first bucket is linked is a coin toss during a fill
        // (a bucket not yet split this round holds up to twice the load),
        // where a branch on it mispredicted once every second miss
        // (`docs/history.md`). So a second bucket is always scanned: the
        // linked one, or the first again, whose candidates (a 32-bit tag
        // shared with another key: crafted hashes, in practice) are then
        // compared twice, with the same answer. (Masking them out by
        // `linked` compiled back to the branch.)
        let next = first.next.load(Ordering::Relaxed);
        let linked = !next.is_null();
        let second = select_unpredictable(linked, next.cast_const(), ptr::from_ref(first));
        // SAFETY: a linked overflow bucket, live until `&mut`; or `first`.
        let mut bucket = unsafe { &*second };
        let mut empty = first_empty.or(Self::empty_unless_found(bucket, hash, key_of)?);
        // Chains of three buckets or more: crafted hashes, or a bucket
        // far past its load.
        // SAFETY: a linked overflow bucket, live until `&mut`.
        while let Some(next) = unsafe { bucket.next.load(Ordering::Relaxed).as_ref() } {
            bucket = next;
            empty = empty.or(Self::empty_unless_found(bucket, hash, key_of)?);
        }
        Ok(empty.map_or(Vacancy::After(bucket), Vacancy::Slot))
    }

    /// One bucket of [`vacancy_unless_found`](Self::vacancy_unless_found)'s
    /// walk: `Err` of what `key_of` returns for its first candidate of
    /// `hash` that it accepts, else `Ok` of its first empty slot; the tags
    /// and the empty slots from one read of the line. Relaxed: only the
    /// writer stores to the table, and it holds the lock.
    #[inline(always)]
    fn empty_unless_found<'t, T>(
        bucket: &'t Bucket,
        hash: u64,
        key_of: &mut impl FnMut(Ref) -> Option<T>,
    ) -> Result<Option<&'t AtomicU64>, T> {
        let (matches, empty) = bucket.scan(hash as u32);
        match Self::find_among(bucket, matches, hash, Ordering::Relaxed, key_of) {
            Some(found) => Err(found),
            None => Ok(empty),
        }
    }

    /// The table's shape and directory, loaded once, if the table has them:
    /// for many lookups, or one.
    #[inline]
    pub(crate) fn buckets(&self) -> Option<Buckets<'_>> {
        let shape = Shape::unpack(self.shape.load(Ordering::Acquire));
        // A published directory is complete and lives until `&mut`.
        let dir = NonNull::new(self.dir.load(Ordering::Acquire))?;
        Some(Buckets {
            shape,
            dir,
            _table: core::marker::PhantomData,
        })
    }

    /// Adds the word of `(hash, at)`: [`reserve`](Self::reserve), then
    /// [`insert_reserved`](Self::insert_reserved).
    #[cfg(test)]
    pub(crate) fn insert(
        &self,
        writer: &mut TableWriter,
        hash: u64,
        at: Ref,
        capacity: usize,
    ) -> Result<(), AllocError> {
        self.reserve(writer, capacity)?;
        self.insert_reserved(writer, hash, at, None);
        Ok(())
    }

    /// [`reserve`](Self::reserve) without allocating: whether the next
    /// [`insert_reserved`](Self::insert_reserved) has what it needs (the
    /// directory, and a spare overflow bucket, taken from the writer's
    /// last pool if it must), for a writer that does not know yet whether
    /// it will insert.
    #[inline(always)]
    pub(crate) fn reserve_in_hand(&self, writer: &mut TableWriter) -> bool {
        !self.dir.load(Ordering::Relaxed).is_null() && writer.spare_in_hand()
    }

    /// Allocates what the next [`insert_reserved`](Self::insert_reserved)
    /// needs: the first directory and segments (room for `capacity`
    /// entries) if the table has none, and a spare overflow bucket. Only the
    /// writer calls this, on every insert: inline.
    #[inline(always)]
    pub(crate) fn reserve(
        &self,
        writer: &mut TableWriter,
        capacity: usize,
    ) -> Result<(), AllocError> {
        if self.dir.load(Ordering::Relaxed).is_null() {
            self.init(writer, capacity)?;
        }
        writer.stock_spares(1)
    }

    /// Adds the word of `(hash, at)`, after a [`reserve`](Self::reserve),
    /// where `vacancy` says if the caller found it on its probe
    /// ([`find_map_or_vacancy`](Self::find_map_or_vacancy)) since the table
    /// last changed: it cannot fail. Only the writer calls this, for a key
    /// the table does not hold. Then, once the entries exceed the load of
    /// `SPLITS_PER_STEP - 1` more buckets, splits that many; a split that
    /// cannot allocate is left for a later insert. Inlined into the miss
    /// path; the step, once every `LOAD * SPLITS_PER_STEP` inserts, is not.
    #[inline(always)]
    pub(crate) fn insert_reserved(
        &self,
        writer: &mut TableWriter,
        hash: u64,
        at: Ref,
        vacancy: Option<Vacancy<'_>>,
    ) {
        let shape = Shape::unpack(self.shape.load(Ordering::Relaxed));
        let word = word_of(hash, at);
        match vacancy {
            Some(vacancy) => Self::place_at(writer, vacancy, word),
            None => self.place(writer, shape.bucket_of(hash), word),
        }
        writer.entries += 1;
        // A growth step splits `SPLITS_PER_STEP` buckets at once, so that
        // the shape's line, which every hit reads, is stored once a step,
        // and the step's source buckets are prefetched a step ahead.
        if writer.entries > capacity_of(shape.buckets() + SPLITS_PER_STEP - 1) {
            self.split(writer, shape);
        }
    }

    /// The first directory and segments: room for `capacity` entries at
    /// [`LOAD`], and at least one segment, all of it used. Only the writer
    /// calls this, on an empty table: once, out of the inlined `reserve`.
    #[cold]
    #[inline(never)]
    pub(crate) fn init(&self, writer: &mut TableWriter, capacity: usize) -> Result<(), AllocError> {
        let buckets = buckets_for(capacity)
            .max(SEGMENT_BUCKETS)
            .checked_next_power_of_two()
            .filter(|b| b.trailing_zeros() <= MAX_LEVEL)
            .ok_or(AllocError)?;
        let segments = buckets / SEGMENT_BUCKETS;
        writer
            .segments
            .try_reserve(segments)
            .map_err(|_| AllocError)?;
        let dir = SegmentDir::try_new(segments.max(4)).ok_or(AllocError)?;
        for at in 0..segments {
            let Some(segment) = new_segment() else {
                // SAFETY: made above, never shared.
                unsafe { dir.free() };
                return Err(AllocError);
            };
            dir.slots()[at].store(segment.as_ptr(), Ordering::Relaxed);
            writer.segments.push(segment);
        }
        debug_assert!(writer.dir.is_none(), "an empty table");
        writer.dir = Some(dir);
        // Publishes the directory and its segments.
        self.dir.store(dir.first(), Ordering::Release);
        let level = buckets.trailing_zeros();
        // Relaxed: this shape publishes nothing the directory's release did
        // not. A reader loads the shape, then the directory with acquire; with
        // a null directory it returns at once, and any directory it can see is
        // this one or a later one, which holds every bucket of this shape.
        self.shape
            .store(Shape::new(level, 0).pack(), Ordering::Relaxed);
        Ok(())
    }

    /// Stores `word` into an empty slot of bucket `index`'s chain, linking a
    /// spare overflow bucket if the chain is full (the caller stocked one).
    #[inline]
    fn place(&self, writer: &mut TableWriter, index: usize, word: u64) {
        let first = Self::bucket(writer.current_dir(), index);
        Self::place_at(writer, Self::vacancy(first), word);
    }

    /// Where the writer stores the next word of the chain from `first`.
    #[inline]
    fn vacancy(first: &Bucket) -> Vacancy<'_> {
        let mut last = first;
        loop {
            if let Some(slot) = last.first_empty() {
                return Vacancy::Slot(slot);
            }
            // SAFETY: a linked overflow bucket, live until `&mut`.
            match unsafe { last.next.load(Ordering::Relaxed).as_ref() } {
                Some(next) => last = next,
                None => return Vacancy::After(last),
            }
        }
    }

    /// Stores `word` where `vacancy` says, linking a spare overflow bucket
    /// after a full chain (the caller stocked one). Inline for a slot, one
    /// store; a link (about one insert in six during a fill) is a call.
    #[inline(always)]
    fn place_at(writer: &mut TableWriter, vacancy: Vacancy<'_>, word: u64) {
        match vacancy {
            // Publishes the record behind the ref (see `find`).
            Vacancy::Slot(slot) => publish(slot, word),
            Vacancy::After(last) => Self::link_spare(writer, last, word),
        }
    }

    /// [`place_at`](Self::place_at) after the full chain ending in `last`:
    /// `word` in a spare bucket, linked after `last`.
    #[inline(never)]
    fn link_spare(writer: &mut TableWriter, last: &Bucket, word: u64) {
        // A bucket that a compaction unlinked first, then a fresh one.
        let (overflow, reused) = match writer.recycled.pop() {
            Some(bucket) => (bucket, true),
            None => (writer.spare.pop().expect("a spare bucket stocked"), false),
        };
        // SAFETY: a spare bucket is live (in a pool, freed only through
        // `&mut`) and empty, with no link.
        let first = &unsafe { overflow.as_ref() }.words[0];
        if reused {
            // A reader that loaded a link to the bucket before it was
            // unlinked may still read it (`growth.rs`, `compact`): the
            // word must publish its record itself.
            publish(first, word);
        } else {
            // Relaxed: a fresh bucket reaches readers only through the
            // link below.
            first.store(word, Ordering::Relaxed);
        }
        // Publishes the new bucket and the word in it.
        last.next.store(overflow.as_ptr(), Ordering::Release);
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests;
