//! The by-id side of a shard: a map of log refs by the hash of their id,
//! filled lazily and read under a shared lock, and a filter of every id the
//! shard holds, filled eagerly and owned by the writer.
//!
//! A miss must know whether its id is in the shard already (its own entry,
//! hidden from the lock-free probe by a split, or another string's: a
//! conflict). The filter, a blocked Bloom filter (two bits of one 64-bit
//! word an id, 4 bits a slot of the map), answers "certainly not" for
//! almost every new id, and then the miss touches nothing of the map. On a
//! "maybe" (a present id, or a false positive: about one new id in 40 to
//! one in 6 as the map fills) the writer looks among the entries the map
//! lacks, kept with their id hashes, then in the map: never a wrong answer.
//! The map takes the entries it lacks [`CATCH_UP`] at a time
//! ([`IdMap::catch_up`]), in one go, so that the cache misses of their
//! inserts overlap, and so that a reader's walk of what the map lacks stays
//! short.
//!
//! Readers (`resolve`, `with_resolved`, a `lookup` the lock-free probe
//! missed) take no exclusive lock and do not ask the filter (the writer's,
//! unsynchronised): [`IdMap::find_shared`] looks in the map under the
//! shard's shared lock, then walks the log from where the map stops,
//! without a lock, as a snapshot does. The map and the filter grow
//! together, by half, rebuilt from one walk of the log.

use super::id_table::{IdTable, BATCH};
use super::log::{Log, Ref};
use crate::raw::alloc::{try_boxed_slice, AllocError};
use crate::raw::bytes::prefetch;
use crate::raw::sizes::CATCH_UP;
use crate::sync::{self, RwLock};

/// Map slots per 64-bit filter word: 4 bits a slot.
const FILTER_LOAD: usize = 16;

/// Entries a rebuilt side is sized for, from those it must hold: half as
/// many again (the map's table is then 62.5% full, and 93.75% when it is
/// rebuilt next; doubling would let it fall to 47%).
fn grown(entries: usize) -> usize {
    entries.saturating_add(entries / 2)
}

/// The two bits of the filter word that a hash sets: from bits the word's
/// index does not use (it takes the low ones).
#[inline]
fn filter_bits(hash: u64) -> u64 {
    1 << (hash >> 52 & 63) | 1 << (hash >> 58)
}

/// The id filter of one shard, and the entries the map lacks; the
/// writer's alone.
pub(super) struct IdFilter {
    /// A power of two of words, or none before the first entry.
    words: Box<[u64]>,
    /// Entries the map and the filter have room for (the filter holds
    /// every entry's id).
    room: usize,
    /// The entries noted since the map was last brought up to date, with
    /// their id hashes: the first `pending` slots.
    lacking: [(u64, Ref); CATCH_UP],
    pending: usize,
}

/// The by-id map of one shard behind its lock, on cache lines of its own:
/// every reader writes the lock's word, which must share no line with what
/// the writer writes on every miss (its own lock, the counters, the log's
/// end). 128 bytes, as `crossbeam`'s `CachePadded` on x86-64 (Intel's
/// spatial prefetcher fetches lines in pairs). Made with the shard's first
/// entry.
#[repr(align(128))]
pub(super) struct IdSide {
    /// Read under the shared lock; written under the exclusive one, by the
    /// writer alone.
    pub(super) map: RwLock<IdMap>,
}

/// The by-id map of one shard.
pub(super) struct IdMap {
    /// Log refs, placed by the shard's id hash; holds every entry before
    /// `synced`.
    map: IdTable,
    /// The log position before which every entry is in `map`.
    synced: Ref,
}

impl IdFilter {
    /// Empty; allocates nothing.
    pub(super) fn new() -> IdFilter {
        IdFilter {
            words: Box::new([]),
            room: 0,
            lacking: [(0, Ref::default()); CATCH_UP],
            pending: 0,
        }
    }

    /// Whether [`note`](Self::note) of one more entry needs a
    /// [`rebuilt`] side first (the shard holds `entries`).
    #[inline]
    pub(super) fn is_full(&self, entries: usize) -> bool {
        entries >= self.room
    }

    /// Whether the shard may hold an entry whose id hashes to `hash`:
    /// `false` means certainly not.
    #[inline]
    pub(super) fn may_hold(&self, hash: u64) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let bits = filter_bits(hash);
        self.words[self.word_of(hash)] & bits == bits
    }

    /// Records the entry just appended to the log at `at`, of id hash
    /// `hash` (the caller checked [`is_full`](Self::is_full) and brings the
    /// map up to date when [`is_lacking_most`](Self::is_lacking_most)).
    #[inline]
    pub(super) fn note(&mut self, hash: u64, at: Ref) {
        debug_assert!(self.pending < CATCH_UP);
        self.set(hash);
        self.lacking[self.pending] = (hash, at);
        self.pending += 1;
    }

    /// The index of the word that holds `hash`'s bits (the filter has
    /// words: a power of two of them).
    #[inline]
    fn word_of(&self, hash: u64) -> usize {
        hash as usize & (self.words.len() - 1)
    }

    /// Fetches the filter's word for `hash`, to [`set`](Self::set) soon.
    #[inline]
    fn prefetch(&self, hash: u64) {
        prefetch(self.words.as_ptr().wrapping_add(self.word_of(hash)).cast());
    }

    /// Sets the filter's bits for `hash`.
    #[inline]
    fn set(&mut self, hash: u64) {
        debug_assert!(!self.words.is_empty());
        self.words[self.word_of(hash)] |= filter_bits(hash);
    }

    /// Whether the map lacks as many entries as it may:
    /// [`IdMap::catch_up`] before the next [`note`](Self::note).
    #[inline]
    pub(super) fn is_lacking_most(&self) -> bool {
        self.pending == CATCH_UP
    }

    /// Where `log` stores the entry of `id`, of hash `hash`, if it is one
    /// the map lacks. The writer's.
    pub(super) fn find_lacking(&self, log: &Log, id: u64, hash: u64) -> Option<Ref> {
        self.lacking[..self.pending]
            .iter()
            .filter(|&&(h, _)| h == hash)
            // SAFETY: the writer's own records.
            .find(|&&(_, at)| unsafe { log.entry(at) }.id() == id)
            .map(|&(_, at)| at)
    }
}

/// A filter and a map with room for half as many again as the `entries`
/// of `log` (amortised growth), holding all of them, built by walking the
/// log: its records are read in address order, where growing the map by
/// moving its refs would read each record again for its id, in hash order,
/// a cache miss apiece once the log outgrows the cache (`docs/history.md`).
/// Readers keep the old map while this builds; on an allocation failure the
/// caller keeps both old parts.
pub(super) fn rebuilt(
    log: &Log,
    entries: usize,
    hash_of: impl Fn(u64) -> u64,
) -> Result<(IdFilter, IdMap), AllocError> {
    let mut map = IdTable::with_room(grown(entries))?;
    // The filter is sized to the map's room, so that the map fills before
    // the side is rebuilt.
    let words = map
        .room()
        .div_ceil(FILTER_LOAD)
        .checked_next_power_of_two()
        .ok_or(AllocError)?;
    let mut filter = IdFilter {
        room: map.room(),
        words: try_boxed_slice(words, || 0).ok_or(AllocError)?,
        ..IdFilter::new()
    };
    let mut batch = [(0, Ref::default()); BATCH];
    let mut batched = 0;
    // The filter's words and the map's groups are fetched a batch ahead of
    // their writes, so that their cache misses overlap.
    let flush = |filter: &mut IdFilter, map: &mut IdTable, batch: &[(u64, Ref)]| {
        for &(hash, _) in batch {
            filter.set(hash);
        }
        map_in(map, batch);
    };
    let synced = log.walk_from(Ref::default(), |at, entry| {
        let hash = hash_of(entry.id());
        filter.prefetch(hash);
        batch[batched] = (hash, at);
        batched += 1;
        if batched == BATCH {
            flush(&mut filter, &mut map, &batch);
            batched = 0;
        }
    });
    flush(&mut filter, &mut map, &batch[..batched]);
    debug_assert_eq!(map.len(), entries, "every entry, once");
    Ok((filter, IdMap { map, synced }))
}

impl IdMap {
    /// Inserts every entry that `filter` notes the map lacks; `end` is
    /// `log`'s published end, which they are all before. The writer's, under
    /// the exclusive lock.
    pub(super) fn catch_up(&mut self, filter: &mut IdFilter, end: Ref) {
        let lacking = &filter.lacking[..filter.pending];
        debug_assert!(lacking.iter().all(|&(_, at)| self.synced < at && at <= end));
        map_in(&mut self.map, lacking);
        self.synced = end;
        filter.pending = 0;
    }

    /// Where the map places the entry of `id`, whose hash is `hash`, if it
    /// holds it (entries appended since it was last brought up to date are
    /// not looked at).
    pub(super) fn get(&self, log: &Log, id: u64, hash: u64) -> Option<Ref> {
        self.map
            .find(hash, |at| {
                // SAFETY: a ref the writer made to its own published record
                // and placed under the exclusive lock, which a reader
                // acquired (its shared lock) after.
                unsafe { log.entry(Ref::from_bits(at)) }.id() == id
            })
            .map(Ref::from_bits)
    }

    /// Where `log` stores the entry of `id`, for a reader: looked up in
    /// the map under the shared lock, then, with the lock released, among
    /// the entries appended since the map was last brought up to date,
    /// walked as a snapshot walks them. Finds every entry published before
    /// the call.
    pub(super) fn find_shared(lock: &RwLock<IdMap>, log: &Log, id: u64, hash: u64) -> Option<Ref> {
        let map = sync::read(lock);
        if let Some(at) = map.get(log, id, hash) {
            return Some(at);
        }
        let from = map.synced;
        drop(map);
        let mut found = None;
        log.walk_from(from, |at, entry| {
            if found.is_none() && entry.id() == id {
                found = Some(at);
            }
        });
        found
    }
}

/// Puts each `(hash, at)` of `entries` into `map`, which has room for them:
/// a side holds room for every entry of its shard (`IdFilter::is_full`).
#[inline]
fn map_in(map: &mut IdTable, entries: &[(u64, Ref)]) {
    map.insert_all(entries, |&(hash, at)| (hash, at.to_bits()));
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    #[test]
    fn filter_bits_are_two_or_fewer_and_spread() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..1000u64 {
            let hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let bits = filter_bits(hash);
            assert!((1..=2).contains(&bits.count_ones()));
            seen.insert(bits);
        }
        assert!(seen.len() > 700);
    }
}
