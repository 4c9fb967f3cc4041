//! The by-id side of a shard: a map of log refs by the hash of their id,
//! built lazily from the log and read under a shared lock. Misses never
//! touch it.
//!
//! A miss appends its entry and indexes it by its bytes, nothing more: it
//! does not ask whether another string already holds its id (a 50-bit
//! collision, about 4 in 10,000 in an NC of 10^6 names). Whoever reads the
//! by-id direction first *settles* the map ([`IdMap::settle`]): under the
//! exclusive lock it takes every entry appended since, in bulk (their cache
//! misses overlapped, [`IdTable::insert_or_update_all`]), and an id met
//! again is resolved by log order: the earlier entry stays in the map (the
//! first string wins), the later one is *shadowed*, kept in a short sorted
//! list that walks skip, and reported as a conflict if its bytes differ.
//! Conflicts so come to light when the by-id direction is read (a resolve,
//! a snapshot, a delta, the conflict list, a synchronous outcome), never
//! later, and each once.
//!
//! Readers (`resolve`, `with_resolved`, a `lookup` the lock-free probe
//! missed) look in the map under the shared lock, then walk the log from
//! where the map stops, without a lock, keeping the earliest entry of the
//! id they meet (a walk reads a slab newest first). A `lookup` whose probe
//! found its entry by its bytes needs only to know that the entry holds
//! its id first: it asks [`IdSide::holds_first`], two loads and no lock,
//! and takes the shared lock only when that cannot say (the entry is
//! past the furthest settle, or the shard ever had an entry shadowed).
//! The map grows by half when a settle needs the room, rebuilt from one
//! walk of the log in address order, the shadowed entries left out.

use super::id_table::{IdTable, BATCH};
use super::log::{Log, LogEnd, Ref};
use crate::raw::alloc::AllocError;
use crate::raw::bytes_eq;
use crate::sync::{self, AtomicBool, AtomicU32, Ordering, RwLock};

/// Entries a rebuilt map is sized for, from those it must hold: half as
/// many again (its table is then 62.5% full, and 93.75% when it is rebuilt
/// next; doubling would let it fall to 47%).
fn grown(entries: usize) -> usize {
    entries.saturating_add(entries / 2)
}

/// The by-id map of one shard behind its lock, on cache lines of its own:
/// every reader writes the lock's word, which must share no line with what
/// the writer writes on every miss (its own lock, the counters, the log's
/// end). 128 bytes, as `crossbeam`'s `CachePadded` on x86-64 (Intel's
/// spatial prefetcher fetches lines in pairs). Made with the shard's first
/// entry; the map in it allocates nothing until it is first settled.
///
/// Beside the lock, what a reader that found an entry by its bytes needs
/// to know that the entry holds its id first, without the lock's
/// read-modify-writes ([`holds_first`](Self::holds_first)): how far any
/// settle reached, and whether any settle ever found an entry shadowed.
/// Both only grow, so a map emptied by a failed settle lowers neither:
/// that an entry before the end holds its id first is a fact of the log,
/// which never changes, not of the map.
#[repr(align(128))]
pub(super) struct IdSide {
    /// Read under the shared lock; settled under the exclusive one.
    pub(super) map: RwLock<IdMap>,
    /// The furthest position any settle reached (a [`Ref`]'s bits).
    settled_end: AtomicU32,
    /// Whether any settle found an entry shadowed; set before
    /// `settled_end` is raised past that entry.
    any_shadowed: AtomicBool,
}

impl IdSide {
    /// A side with an empty map, nothing settled.
    pub(super) fn new() -> IdSide {
        IdSide {
            map: RwLock::new(IdMap::new()),
            settled_end: AtomicU32::new(0),
            any_shadowed: AtomicBool::new(false),
        }
    }

    /// [`IdMap::settle`] under the exclusive lock, then what it settled
    /// published to [`holds_first`](Self::holds_first).
    pub(super) fn settle(
        &self,
        log: &Log,
        end: &LogEnd,
        appended: impl Fn() -> usize,
        hash_of: impl Fn(u64) -> u64,
        conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<(), AllocError> {
        let mut map = sync::write(&self.map);
        let settled = map.settle(log, end, appended, hash_of, conflict);
        // Under the exclusive lock: no other settle stores meanwhile.
        if !map.shadowed.is_empty() {
            // Relaxed: published by the end's release store below, which
            // comes after it (and by every later one).
            self.any_shadowed.store(true, Ordering::Relaxed);
        }
        let end = map.synced.to_bits();
        if end > self.settled_end.load(Ordering::Relaxed) {
            // Release: a reader that acquires this end sees the flag set
            // if an entry before it is shadowed.
            self.settled_end.store(end, Ordering::Release);
        }
        settled
    }

    /// Whether the entry at `at` (found by its bytes, so published) is
    /// known to hold its id first without the lock: it lies before the
    /// furthest settled end (its ref, the position just after its record,
    /// at or before it), and no settle ever found an entry shadowed.
    /// `false` says only "ask under the lock".
    #[inline]
    pub(super) fn holds_first(&self, at: Ref) -> bool {
        // Acquire: with the end, the flag as it was when the end was
        // stored (or later); the flag then needs no ordering of its own.
        at <= Ref::from_bits(self.settled_end.load(Ordering::Acquire))
            && !self.any_shadowed.load(Ordering::Relaxed)
    }
}

/// The by-id map of one shard.
pub(super) struct IdMap {
    /// The refs of the entries that hold their id first, placed by the
    /// shard's id hash; holds every such entry before `synced`.
    map: IdTable,
    /// The log position before which every entry is settled.
    synced: Ref,
    /// The entries before `synced` whose id an earlier entry holds, in log
    /// order: walks skip them. Empty unless the shard has seen a conflict
    /// (or a string appended twice, which only a failed index insert can
    /// cause).
    shadowed: Vec<Ref>,
    /// The string bytes of the shadowed entries: the shard's counters,
    /// less these and `shadowed.len()`, are what it holds.
    shadowed_bytes: usize,
}

/// Calls `flush` with the `(id hash, ref)` of every entry of `log` from
/// position `from` to `to` (a position acquired from it) but those `skip`
/// names, [`BATCH`] at a time (the last batch shorter), so that the cache
/// misses of a batch's inserts overlap.
fn walk_in_batches(
    log: &Log,
    from: Ref,
    to: Ref,
    skip: impl Fn(Ref) -> bool,
    hash_of: impl Fn(u64) -> u64,
    mut flush: impl FnMut(&[(u64, Ref)]),
) {
    let mut batch = [(0, Ref::default()); BATCH];
    let mut batched = 0;
    log.walk_between(from, to, |at, entry| {
        if skip(at) {
            return;
        }
        batch[batched] = (hash_of(entry.id()), at);
        batched += 1;
        if batched == BATCH {
            flush(&batch);
            batched = 0;
        }
    });
    flush(&batch[..batched]);
}

impl IdMap {
    /// Empty, settled up to the log's start; allocates nothing.
    pub(super) fn new() -> IdMap {
        IdMap {
            map: IdTable::empty(),
            synced: Ref::default(),
            shadowed: Vec::new(),
            shadowed_bytes: 0,
        }
    }

    /// The position before which every entry is settled.
    #[inline]
    pub(super) fn synced(&self) -> Ref {
        self.synced
    }

    /// How many entries are settled: in the map or shadowed.
    #[inline]
    pub(super) fn settled_entries(&self) -> usize {
        self.map.len() + self.shadowed.len()
    }

    /// How many settled entries are shadowed, and their string bytes.
    #[inline]
    pub(super) fn shadowed(&self) -> (usize, usize) {
        (self.shadowed.len(), self.shadowed_bytes)
    }

    /// Whether the settled entry at `at` is shadowed: its id is held by
    /// an earlier entry.
    #[inline]
    pub(super) fn is_shadowed(&self, at: Ref) -> bool {
        !self.shadowed.is_empty() && self.shadowed.binary_search(&at).is_ok()
    }

    /// Settles every entry of `log` up to its published end (see the
    /// module doc); `appended()`, loaded after that end, is at least how
    /// many entries the log holds before it (the shard's counter, which the
    /// writer stores before it publishes each entry: it sizes the map
    /// without a walk to count them); `hash_of` places an id. `conflict(id, kept, rejected)`
    /// is called, in log order, for each entry found holding an id that an
    /// earlier entry holds with other bytes. If memory runs out the map is
    /// emptied (settled up to the log's start, readers walk the whole log
    /// until a settle succeeds) and the error returned: no answer is ever
    /// wrong, and the next settle finds the same conflicts again.
    pub(super) fn settle(
        &mut self,
        log: &Log,
        end: &LogEnd,
        appended: impl Fn() -> usize,
        hash_of: impl Fn(u64) -> u64,
        conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<(), AllocError> {
        let end = end.load();
        if end == self.synced {
            return Ok(());
        }
        let appended = appended();
        let settled = self.settle_to(log, end, appended, hash_of, conflict);
        if settled.is_err() {
            *self = IdMap::new();
        }
        settled
    }

    /// [`settle`](Self::settle) up to `end`, acquired from `log`, which
    /// holds at most `appended` entries before it.
    fn settle_to(
        &mut self,
        log: &Log,
        end: Ref,
        appended: usize,
        hash_of: impl Fn(u64) -> u64,
        mut conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<(), AllocError> {
        // Every settled entry is in the map or shadowed.
        let fresh = appended.saturating_sub(self.map.len() + self.shadowed.len());
        if fresh > self.map.room() - self.map.len() {
            self.rebuild(log, fresh, &hash_of)?;
        }
        // The entries found holding an id an earlier entry holds.
        let mut later: Vec<Ref> = Vec::new();
        let mut out_of_memory = false;
        let map = &mut self.map;
        let flush = |batch: &[(u64, Ref)]| {
            if batch.len() > map.room() - map.len() {
                // More entries than counted: never, by the writer's order;
                // the map is emptied rather than overfilled.
                out_of_memory = true;
                return;
            }
            map.insert_or_update_all(
                batch,
                |&(hash, at)| (hash, at.to_bits()),
                |held, &(_, at)| {
                    // SAFETY: both are refs to published records (this
                    // settle's, acquired through `end`, or an earlier
                    // one's, whose exclusive lock this one acquired since).
                    unsafe { log.entry(Ref::from_bits(held)).id() == log.entry(at).id() }
                },
                |held, &(_, at)| {
                    let first = Ref::from_bits(*held);
                    if first == at {
                        return; // settled by a settle that failed since
                    }
                    // The earlier entry keeps the id: a walk meets a
                    // slab's entries newest first.
                    *held = first.min(at).to_bits();
                    if later.try_reserve(1).is_err() {
                        out_of_memory = true;
                        return;
                    }
                    later.push(first.max(at));
                },
            );
        };
        walk_in_batches(log, self.synced, end, |_| false, &hash_of, flush);
        if out_of_memory || self.shadowed.try_reserve(later.len()).is_err() {
            return Err(AllocError);
        }
        // Later entries come after every shadowed one: each is at or past
        // the old `synced`. Reported in log order, each against the entry
        // that holds its id first, before anything else changes: if a
        // report panics (a logger may), the map is as if this settle had
        // not happened but for the earlier entries it placed, which the
        // next settle places again, and it finds the same conflicts.
        later.sort_unstable();
        for &at in &later {
            // SAFETY: as above.
            let rejected = unsafe { log.entry(at) };
            let id = rejected.id();
            let first = self
                .get(log, id, hash_of(id))
                .expect("an id met again is in the map");
            // SAFETY: as above.
            let kept = unsafe { log.entry(first) };
            if !bytes_eq(kept.bytes(), rejected.bytes()) {
                conflict(id, kept.bytes(), rejected.bytes());
            }
        }
        for at in later {
            // SAFETY: as above.
            self.shadowed_bytes += unsafe { log.entry(at) }.bytes().len();
            self.shadowed.push(at);
        }
        self.synced = end;
        Ok(())
    }

    /// Replaces the map's table by one with room for `fresh` more entries
    /// and half as many again (amortised growth), holding the same refs,
    /// found by walking the log: its records are read in address order,
    /// where moving the refs would read each record again for its id, in
    /// hash order, a cache miss apiece once the log outgrows the cache
    /// (`docs/history.md`). On an allocation failure the map is unchanged.
    fn rebuild(
        &mut self,
        log: &Log,
        fresh: usize,
        hash_of: impl Fn(u64) -> u64,
    ) -> Result<(), AllocError> {
        let mut map = IdTable::with_room(grown(self.map.len() + fresh))?;
        walk_in_batches(
            log,
            Ref::default(),
            self.synced,
            |at| self.is_shadowed(at),
            hash_of,
            |batch| map.insert_all(batch, |&(hash, at)| (hash, at.to_bits())),
        );
        debug_assert_eq!(map.len(), self.map.len(), "every settled entry, once");
        self.map = map;
        Ok(())
    }

    /// Where the map places the entry of `id`, whose hash is `hash`, if it
    /// holds it (entries appended since it was last settled are not looked
    /// at).
    pub(super) fn get(&self, log: &Log, id: u64, hash: u64) -> Option<Ref> {
        self.map
            .find(hash, |at| {
                // SAFETY: a ref to a published record, placed under the
                // exclusive lock, which the caller acquired (its shared
                // lock, or the exclusive one) after.
                unsafe { log.entry(Ref::from_bits(at)) }.id() == id
            })
            .map(Ref::from_bits)
    }

    /// Where `log` stores the entry that holds `id` first, if the map
    /// holds it: looked up under the shared lock only, the entries
    /// appended since the map was last settled not looked at. The map
    /// holds a prefix of the log, each id under its earliest entry, so
    /// nothing appended since can change what it finds; `None` says only
    /// that the map lacks the id.
    pub(super) fn find_mapped(
        lock: &RwLock<IdMap>,
        log: &Log,
        _: &LogEnd,
        id: u64,
        hash: u64,
    ) -> Option<Ref> {
        sync::read(lock).get(log, id, hash)
    }

    /// Where `log` stores the entry that holds `id` first, for a reader:
    /// looked up in the map under the shared lock, then, with the lock
    /// released, among the entries appended since the map was last
    /// settled, walked as a snapshot walks them, keeping the earliest.
    /// Finds every entry published before the call.
    pub(super) fn find_shared(
        lock: &RwLock<IdMap>,
        log: &Log,
        end: &LogEnd,
        id: u64,
        hash: u64,
    ) -> Option<Ref> {
        let map = sync::read(lock);
        if let Some(at) = map.get(log, id, hash) {
            return Some(at);
        }
        let from = map.synced;
        drop(map);
        let mut found: Option<Ref> = None;
        log.walk_between(from, end.load(), |at, entry| {
            if entry.id() == id && found.is_none_or(|first| at < first) {
                found = Some(at);
            }
        });
        found
    }
}
