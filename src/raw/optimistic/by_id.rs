//! The by-id side of a shard, under its writer lock: a map of log refs by
//! the hash of their id, filled lazily, and a filter of every id the shard
//! holds, filled eagerly.
//!
//! A miss must know whether its id is in the shard already (its own entry,
//! hidden from the lock-free probe by a split, or another string's: a
//! conflict). The filter answers "certainly not" for almost every new id
//! from one word in a small, cache-resident bit array, and then the miss
//! reads and writes nothing of the map. Every lookup by id asks the filter
//! first too; one that gets a "maybe" (a present id, or one in 8 to 25 new
//! ones) brings the map up to date from the log ([`ById::find`]): the entries appended since it was last
//! brought up to date are read in log order, just written and close
//! together, and inserted in one go, so that the cache misses of their
//! inserts overlap instead of each miss waiting for its own (an insert into
//! the map's slot array was a store miss that every miss's unlock waited
//! for, `docs/history.md`).
//!
//! The filter is a blocked Bloom filter: each id sets two bits of one
//! 64-bit word, and it has 4 bits for each of the map's buckets (half a
//! byte, where a bucket of the map is 5), so between about 9 and 4.6 bits an
//! entry as the map fills: about one new id in 25 to one in 8 gets a false
//! "maybe", which costs one bringing-up-to-date (the entries appended since
//! the last, inserted together), never a wrong answer. The map and the
//! filter grow together, rebuilt from one walk of the log.

use hashbrown::HashTable;

use super::log::{Log, Ref};
use crate::raw::alloc::{try_boxed_slice, AllocError};

/// Map slots per 64-bit filter word: 4 bits a slot.
const FILTER_LOAD: usize = 16;

/// The two bits of the filter word that a hash sets: from bits the word's
/// index does not use (it takes the low ones).
#[inline]
fn filter_bits(hash: u64) -> u64 {
    1 << (hash >> 52 & 63) | 1 << (hash >> 58)
}

/// The by-id map and the id filter of one shard.
pub(super) struct ById {
    /// Log refs, placed by the shard's id hash; holds every entry before
    /// `synced`.
    map: HashTable<u32>,
    /// A power of two of words, or none before the first entry.
    filter: Box<[u64]>,
    /// Entries the map and the filter have room for (the filter holds
    /// every entry's id).
    room: usize,
    /// The log position before which every entry is in `map`.
    synced: Ref,
}

impl ById {
    /// Empty; allocates nothing.
    pub(super) fn new() -> ById {
        ById {
            map: HashTable::new(),
            filter: Box::new([]),
            room: 0,
            synced: Ref::default(),
        }
    }

    /// Whether [`note`](Self::note) of one more entry needs a
    /// [`rebuilt`](Self::rebuilt) side first (the shard holds `entries`).
    #[inline]
    pub(super) fn is_full(&self, entries: usize) -> bool {
        entries >= self.room
    }

    /// Whether the shard may hold an entry whose id hashes to `hash`:
    /// `false` means certainly not.
    #[inline]
    pub(super) fn may_hold(&self, hash: u64) -> bool {
        if self.filter.is_empty() {
            return false;
        }
        let bits = filter_bits(hash);
        self.filter[hash as usize & (self.filter.len() - 1)] & bits == bits
    }

    /// Records the id hash of an entry just appended to the log (the caller
    /// checked [`is_full`](Self::is_full)).
    #[inline]
    pub(super) fn note(&mut self, hash: u64) {
        debug_assert!(!self.filter.is_empty());
        let len = self.filter.len();
        self.filter[hash as usize & (len - 1)] |= filter_bits(hash);
    }

    /// A side with room for twice the `entries` of `log` (amortised growth),
    /// holding all of them, built by walking the log: its records are read
    /// in address order, where growing the map by moving its refs would read
    /// each record again for its id, in hash order, a cache miss apiece once
    /// the log outgrows the cache (13% of a miss's time at 10^6 entries with
    /// `hashbrown`'s rehash, `docs/history.md`). On an allocation failure
    /// the caller keeps the old side.
    pub(super) fn rebuilt(
        log: &Log,
        entries: usize,
        hash_of: impl Fn(u64) -> u64,
    ) -> Result<ById, AllocError> {
        let mut map = HashTable::new();
        map.try_reserve(entries.saturating_mul(2).max(4), |_| 0)
            .map_err(|_| AllocError)?;
        // The filter is sized to the map's capacity (a power of two of
        // buckets, 7/8 of them usable), so that the map fills before the
        // side is rebuilt, as it did alone.
        let words = map
            .capacity()
            .div_ceil(FILTER_LOAD)
            .checked_next_power_of_two()
            .ok_or(AllocError)?;
        let mut side = ById {
            room: map.capacity(),
            map,
            filter: try_boxed_slice(words, || 0).ok_or(AllocError)?,
            synced: Ref::default(),
        };
        let end = log.walk_from(Ref::default(), |at, entry| {
            let hash = hash_of(entry.id());
            side.note(hash);
            map_in(&mut side.map, hash, at);
        });
        side.synced = end;
        debug_assert_eq!(side.map.len(), entries, "every entry, once");
        Ok(side)
    }

    /// Where `log` stores the entry of `id`, whose hash is `hash`, found
    /// after inserting into the map every entry appended since it was last
    /// brought up to date (the filter is not asked: see
    /// [`may_hold`](Self::may_hold)).
    pub(super) fn find(
        &mut self,
        log: &Log,
        id: u64,
        hash: u64,
        hash_of: impl Fn(u64) -> u64,
    ) -> Option<Ref> {
        let map = &mut self.map;
        self.synced = log.walk_from(self.synced, |at, entry| {
            map_in(map, hash_of(entry.id()), at);
        });
        self.map
            .find(hash, |&at| {
                // SAFETY: a ref the writer made to its own published record.
                unsafe { log.entry(Ref::from_bits(at)) }.id() == id
            })
            .map(|&at| Ref::from_bits(at))
    }
}

/// Puts `at`, of id hash `hash`, into `map`, which has room for it: a side
/// holds room for every entry of its shard (`ById::is_full`).
#[inline]
fn map_in(map: &mut HashTable<u32>, hash: u64, at: Ref) {
    map.insert_unique(hash, at.to_bits(), |_| {
        unreachable!("the side has room for every entry")
    });
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
