//! The lock-free shard: no lock on any path. An insert allocates its entry,
//! claims a position in the order array, then places the entry in the table
//! by compare-and-swap; lookups are acquire loads only.
//!
//! * [`entry`]: one allocation per entry (id, length, bytes);
//! * [`table`]: the id → entry table, grown cooperatively through a chain
//!   of doubling tables;
//! * [`order`]: the entries in insertion order, for walks.
//!
//! Nothing is freed while the shard is shared (`&self`): entries, tables
//! and order segments are freed by `clear` and drop only. The protocol and
//! its orderings are in `docs/design.md`.

mod entry;
mod order;
mod table;

use self::order::Found;
use self::table::{Placed, Tables};
use super::alloc::AllocError;
use crate::sync::{AtomicUsize, Ordering};

/// What [`RawLockFreeShard::insert`] did.
pub(crate) enum Inserted<'a> {
    /// The entry was stored.
    New,
    /// The shard already stores these bytes under the id.
    Found(&'a [u8]),
}

/// One NC's lock-free storage.
pub(crate) struct RawLockFreeShard {
    tables: Tables,
    order: order::Order,
    /// Entries stored (statistics: exact when no insert runs).
    len: AtomicUsize,
}

impl RawLockFreeShard {
    /// An empty shard with room for `capacity` entries before it first
    /// grows, or [`AllocError`] if that cannot be allocated.
    pub(crate) fn try_new(capacity: usize) -> Result<RawLockFreeShard, AllocError> {
        Ok(RawLockFreeShard {
            tables: Tables::try_new(capacity).ok_or(AllocError)?,
            order: order::Order::try_new().ok_or(AllocError)?,
            len: AtomicUsize::new(0),
        })
    }

    /// The bytes stored under `id`: acquire loads only.
    #[inline]
    pub(crate) fn find(&self, id: u64) -> Option<&[u8]> {
        self.tables.find(id).map(entry::EntryRef::bytes)
    }

    /// Stores `bytes` under `id` unless the shard already stores bytes under
    /// it (then returns those; two racing inserts of one id: one wins).
    pub(crate) fn insert(&self, id: u64, bytes: &[u8]) -> Result<Inserted<'_>, AllocError> {
        let new = entry::alloc(id, bytes).ok_or(AllocError)?;
        let Some(position) = self.order.claim(new) else {
            // SAFETY: never published: this thread owns it.
            unsafe { entry::free(new) };
            return Err(AllocError);
        };
        // SAFETY: this thread wrote it; the order array now owns it, and
        // frees it only with exclusive access.
        let entry = unsafe { entry::EntryRef::from_tagged(new.as_ptr()) };
        let placed = self.tables.insert(entry);
        // A lost or failed insert keeps its entry (dead) until `clear`: a
        // walk may be reading it through its position.
        self.order
            .decide(position, new, matches!(placed, Ok(Placed::Inserted)));
        match placed {
            Ok(Placed::Inserted) => {
                self.len.fetch_add(1, Ordering::Relaxed);
                Ok(Inserted::New)
            }
            Ok(Placed::Found(stored)) => Ok(Inserted::Found(stored.bytes())),
            Err(AllocError) => Err(AllocError),
        }
    }

    /// Calls `f` on every entry stored at or after position `from`, in
    /// insertion order, and returns the position to resume from: the
    /// first one whose insert was undecided (its entry, if the table
    /// already held it, was visited and will be again), or the end.
    pub(crate) fn for_each_since(&self, from: usize, mut f: impl FnMut(u64, &[u8])) -> usize {
        let end = self.order.end();
        let mut resume = None;
        for position in from..end {
            match self.order.get(position) {
                Found::Live(entry) => f(entry.id(), entry.bytes()),
                Found::Pending(entry) => {
                    resume.get_or_insert(position);
                    let stored = self.tables.find(entry.id());
                    if stored.is_some_and(|stored| stored.as_ptr() == entry.as_ptr()) {
                        f(entry.id(), entry.bytes());
                    }
                }
                Found::Dead => {}
            }
        }
        resume.unwrap_or(end.max(from))
    }

    /// Entries stored.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    /// Small under Miri, which is slow.
    const MANY: usize = if cfg!(miri) { 100 } else { 20_000 };

    fn name(i: usize) -> Vec<u8> {
        format!("name/{i}/{}", "x".repeat(i % 40)).into_bytes()
    }

    fn entries(shard: &RawLockFreeShard, from: usize) -> (Vec<(u64, Vec<u8>)>, usize) {
        let mut seen = Vec::new();
        let end = shard.for_each_since(from, |id, bytes| seen.push((id, bytes.to_vec())));
        (seen, end)
    }

    #[test]
    fn inserts_grow_and_walk_in_order() {
        let shard = RawLockFreeShard::try_new(0).unwrap();
        for i in 0..MANY {
            assert!(matches!(
                shard.insert(i as u64, &name(i)),
                Ok(Inserted::New)
            ));
        }
        for i in 0..MANY {
            assert_eq!(shard.find(i as u64), Some(&name(i)[..]), "{i}");
            match shard.insert(i as u64, b"other") {
                Ok(Inserted::Found(stored)) => assert_eq!(stored, &name(i)[..]),
                _ => panic!("{i} inserted twice"),
            }
        }
        assert_eq!(shard.find(MANY as u64), None);
        assert_eq!(shard.len(), MANY);
        let (seen, end) = entries(&shard, 0);
        assert_eq!(end, 2 * MANY, "one position per insert, dead ones too");
        let expected: Vec<_> = (0..MANY).map(|i| (i as u64, name(i))).collect();
        assert_eq!(seen, expected);
        let (later, again) = entries(&shard, MANY / 2);
        assert_eq!(later, expected[MANY / 2..]);
        assert_eq!(again, end);
    }

    #[test]
    fn caller_ids_that_share_low_bits_spread() {
        let shard = RawLockFreeShard::try_new(0).unwrap();
        for i in 0..MANY as u64 {
            shard.insert(i << 40, b"v").unwrap();
        }
        for i in 0..MANY as u64 {
            assert_eq!(shard.find(i << 40), Some(&b"v"[..]));
        }
    }

    /// Threads race to insert the same and different ids while the table
    /// grows: each id is stored once, with the first bytes placed, and the
    /// walk holds each live entry once.
    #[test]
    fn racing_inserts_store_each_id_once() {
        let threads = if cfg!(miri) { 2 } else { 4 };
        let per_thread: usize = if cfg!(miri) { 24 } else { 5_000 };
        let shard = RawLockFreeShard::try_new(0).unwrap();
        std::thread::scope(|scope| {
            for t in 0..threads {
                let shard = &shard;
                scope.spawn(move || {
                    for i in 0..per_thread {
                        // Even ids shared by every thread, odd ones own.
                        let id = if i % 2 == 0 { i } else { 1 << 32 | t << 20 | i };
                        let bytes = format!("{id}/{}", t * (i % 3 / 2));
                        match shard.insert(id as u64, bytes.as_bytes()).unwrap() {
                            Inserted::New => {}
                            Inserted::Found(stored) => {
                                assert!(stored.starts_with(format!("{id}/").as_bytes()));
                            }
                        }
                        assert!(shard.find(id as u64).is_some());
                    }
                });
            }
            let (mut seen, _) = entries(&shard, 0);
            let before = seen.len();
            seen.sort();
            seen.dedup_by_key(|(id, _)| *id);
            assert_eq!(seen.len(), before, "an id walked twice");
        });
        let (seen, _) = entries(&shard, 0);
        assert_eq!(seen.len(), shard.len());
        let mut ids: Vec<u64> = seen.iter().map(|(id, _)| *id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), seen.len());
        let shared = per_thread.div_ceil(2);
        assert_eq!(seen.len(), shared + threads * (per_thread / 2));
        for (id, bytes) in seen {
            assert_eq!(shard.find(id), Some(&bytes[..]));
        }
    }
}
