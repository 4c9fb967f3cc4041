//! The by-id map's table: 32-bit values placed by a 64-bit hash, in groups
//! of 16 slots with a tag byte each, filled to 15/16 and never shrunk or
//! emptied one value at a time.
//!
//! A `hashbrown::HashTable<u32>` has a power of two of buckets, so its load
//! falls to 7/16 after each growth (5.7 to 11.4 bytes an entry). Here any
//! number of groups can be made (a group is found by multiplying the hash's
//! low 32 bits by their count, not by masking), so the owner grows it by
//! half: between 62% and 94% full, 5.3 to 8.0 bytes an entry (one group,
//! 80 bytes, at least). Nothing is ever removed (a value may be replaced in
//! place: [`IdTable::insert_or_update_all`]), so a probe stops at the
//! first group with an empty slot and no slot needs a tombstone; probes go
//! on to the next group (linear probing: at 15/16 full, with random
//! hashes, about 1.4 groups for a present value and 8.7 for an absent one,
//! which only a reader's lookup of an id the shard lacks pays). A group's 16 tags are compared at
//! once (one SSE2 compare on x86-64).
//!
//! Plain data, no atomics: the map is written under its exclusive lock and
//! read under the shared one (`by_id`).

use crate::raw::alloc::{try_boxed_slice, AllocError};
use crate::raw::bytes::prefetch;
use crate::raw::sizes::FILL;

/// Slots of a group.
const GROUP: usize = 16;

/// Inserts whose places [`IdTable::insert_all`] fetches before it makes
/// any of them.
pub(super) const BATCH: usize = 32;

/// Sixteen slots: a tag byte each (0 for an empty slot, else the hash's
/// tag, whose high bit is set) and their values; the tags first, so that
/// the line [`IdTable::insert_all`] prefetches is the one a probe reads
/// first.
#[derive(Clone, Copy)]
#[repr(C)]
struct Group {
    tags: [u8; GROUP],
    values: [u32; GROUP],
}

impl Group {
    const EMPTY: Group = Group {
        tags: [0; GROUP],
        values: [0; GROUP],
    };
}

/// Values by hash, in groups; see the module doc.
pub(super) struct IdTable {
    groups: Box<[Group]>,
    len: usize,
}

/// The slots of `tags` that hold `tag`, as a bit mask (bit `i` for slot
/// `i`): one SSE2 compare on x86-64.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn matching(tags: &[u8; GROUP], tag: u8) -> u32 {
    use core::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: the build enables SSE2 (the `cfg` above; x86-64's baseline),
    // so the CPU has these instructions; `tags` is 16 readable bytes, and
    // the load needs no alignment.
    unsafe {
        let tags = _mm_loadu_si128(tags.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(tags, _mm_set1_epi8(tag as i8))) as u32
    }
}

/// The slots of `tags` that hold `tag`, as a bit mask (bit `i` for slot
/// `i`).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn matching(tags: &[u8; GROUP], tag: u8) -> u32 {
    matching_portably(tags, tag)
}

/// [`matching`] without SIMD intrinsics.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline]
fn matching_portably(tags: &[u8; GROUP], tag: u8) -> u32 {
    tags.iter()
        .enumerate()
        .fold(0, |mask, (slot, &t)| mask | u32::from(t == tag) << slot)
}

/// The tag byte of `hash`: 7 bits that the group's place does not use,
/// and the high bit, so that no tag is an empty slot's 0.
#[inline]
fn tag_of(hash: u64) -> u8 {
    (hash >> 32) as u8 | 0x80
}

impl IdTable {
    /// An empty table with room for at least `entries` (one group at
    /// least).
    pub(super) fn with_room(entries: usize) -> Result<IdTable, AllocError> {
        let groups = entries.div_ceil(FILL).max(1);
        // The place of a hash is its low 32 bits times the group count.
        if groups > u32::MAX as usize {
            return Err(AllocError);
        }
        Ok(IdTable {
            groups: try_boxed_slice(groups, || Group::EMPTY).ok_or(AllocError)?,
            len: 0,
        })
    }

    /// An empty table with no room: allocates nothing (its owner grows it
    /// before the first insert).
    pub(super) fn empty() -> IdTable {
        IdTable {
            groups: Box::new([]),
            len: 0,
        }
    }

    /// How many values it may hold: [`FILL`] of each group's 16 slots, so
    /// that every probe ends at an empty slot.
    pub(super) fn room(&self) -> usize {
        self.groups.len() * FILL
    }

    /// How many values it holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The group where the probe for `hash` starts.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        (((hash & 0xFFFF_FFFF) * self.groups.len() as u64) >> 32) as usize
    }

    /// The group after `at`, wrapping.
    #[inline]
    fn next(&self, at: usize) -> usize {
        if at + 1 == self.groups.len() {
            0
        } else {
            at + 1
        }
    }

    /// The first value placed under `hash` for which `is` holds. `is` is
    /// asked only about values whose tag matches.
    #[inline]
    pub(super) fn find(&self, hash: u64, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.groups.is_empty() {
            return None;
        }
        let tag = tag_of(hash);
        let mut at = self.home(hash);
        loop {
            let group = &self.groups[at];
            let mut matches = matching(&group.tags, tag);
            while matches != 0 {
                let value = group.values[matches.trailing_zeros() as usize % GROUP];
                if is(value) {
                    return Some(value);
                }
                matches &= matches - 1;
            }
            if matching(&group.tags, 0) != 0 {
                return None;
            }
            at = self.next(at);
        }
    }

    /// Places each `(hash, value)` of `items` (the table has room for
    /// them, and holds none of their keys), in batches of up to [`BATCH`]
    /// whose home groups are fetched first, so that the cache misses of
    /// their inserts overlap.
    #[inline]
    pub(super) fn insert_all<T>(&mut self, items: &[T], item: impl Fn(&T) -> (u64, u32)) {
        self.insert_or_update_all(items, item, |_, _| false, |_, _| {});
    }

    /// [`insert_all`](Self::insert_all) for items whose key the table may
    /// hold already: a value placed under an item's hash for which
    /// `same(value, item)` holds is handed to `update` with the item, to
    /// keep or replace, instead of placing the item beside it. `same` is
    /// asked only about values whose tag matches.
    #[inline]
    pub(super) fn insert_or_update_all<T>(
        &mut self,
        items: &[T],
        item: impl Fn(&T) -> (u64, u32),
        same: impl Fn(u32, &T) -> bool,
        mut update: impl FnMut(&mut u32, &T),
    ) {
        // Past its room a table could fill every slot, and a probe for an
        // absent hash would never end.
        assert!(
            items.len() <= self.room() - self.len,
            "the owner grows the table first"
        );
        let mut homes = [0; BATCH];
        for batch in items.chunks(BATCH) {
            for (home, it) in homes.iter_mut().zip(batch) {
                *home = self.home(item(it).0);
                prefetch((&raw const self.groups[*home]).cast());
            }
            'items: for (&home, it) in homes.iter().zip(batch) {
                let (hash, value) = item(it);
                let tag = tag_of(hash);
                let mut at = home;
                loop {
                    let group = &mut self.groups[at];
                    let mut matches = matching(&group.tags, tag);
                    while matches != 0 {
                        let slot = matches.trailing_zeros() as usize % GROUP;
                        if same(group.values[slot], it) {
                            update(&mut group.values[slot], it);
                            continue 'items;
                        }
                        matches &= matches - 1;
                    }
                    let empty = matching(&group.tags, 0);
                    if empty != 0 {
                        let slot = empty.trailing_zeros() as usize % GROUP;
                        group.tags[slot] = tag;
                        group.values[slot] = value;
                        self.len += 1;
                        continue 'items;
                    }
                    at = self.next(at);
                }
            }
        }
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    #[test]
    fn matching_marks_exactly_the_slots_of_a_tag() {
        let mut tags = [0u8; GROUP];
        for (slot, tag) in tags.iter_mut().enumerate() {
            *tag = [0, 0x80, 0x81, 0xFF][slot % 4];
        }
        for tag in [0, 0x80, 0x81, 0xFF, 0x7F, 1] {
            let expect = (0..GROUP)
                .filter(|&slot| tags[slot] == tag)
                .fold(0, |mask, slot| mask | 1 << slot);
            assert_eq!(matching(&tags, tag), expect, "{tag:#x}");
            assert_eq!(matching_portably(&tags, tag), expect, "{tag:#x}");
        }
    }

    #[test]
    fn finds_every_value_and_fills_to_its_room() {
        // Crowded hashes make each probe long: a smaller largest table
        // under Miri.
        let largest = if cfg!(miri) { 200 } else { 1000 };
        for entries in [0, 1, 7, 8, 50, largest] {
            let mut table = IdTable::with_room(entries).unwrap();
            assert!(table.room() >= entries);
            let room = table.room();
            // Hashes crowded into few groups, and tags that repeat.
            let hash = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0x0F00_0000_0000_000F;
            let items: Vec<u64> = (0..room as u64 / 2).collect();
            table.insert_all(&items, |&i| (hash(i), i as u32));
            for i in room as u64 / 2..room as u64 {
                table.insert_all(&[i], |&i| (hash(i), i as u32));
            }
            assert_eq!(table.len(), room);
            for i in 0..room as u64 {
                assert_eq!(table.find(hash(i), |v| v == i as u32), Some(i as u32));
            }
            assert_eq!(table.find(hash(3), |v| v == u32::MAX), None);
            assert_eq!(table.find(0xFFFF_FFFF_FFFF_FFFF, |_| true), None);
        }
    }

    #[test]
    fn probes_wrap_past_the_last_group() {
        let mut table = IdTable::with_room(100).unwrap();
        let groups = table.groups.len() as u64;
        // Every home the last group: the probes fill it, then wrap to the
        // first groups.
        let hash = |i: u64| 0xFFFF_FFFF | (i % 128) << 32;
        let room = table.room() as u64;
        let items: Vec<u64> = (0..room).collect();
        table.insert_all(&items, |&i| (hash(i), i as u32));
        assert_eq!(table.home(hash(0)), groups as usize - 1);
        assert!(table.groups[0].tags.iter().all(|&t| t != 0));
        for i in 0..room {
            assert_eq!(table.find(hash(i), |v| v == i as u32), Some(i as u32));
        }
        assert_eq!(table.find(hash(5), |v| v == u32::MAX), None);
    }

    #[test]
    fn empty_table_finds_nothing() {
        let table = IdTable::with_room(0).unwrap();
        assert_eq!(table.room(), FILL);
        assert_eq!(table.find(1, |_| true), None);
    }
}
