//! One NC's lock-free shard: the entry [`log`](super::log), the by-bytes
//! [`table`](super::table) that hits read without a lock, and a by-id map
//! behind a lock of its own, which only the writer takes exclusively.
//!
//! * **Hits** (`find_by_bytes`): a seeded `foldhash` of the bytes, the
//!   table's acquire loads, one full compare against the record: no lock, no
//!   read-modify-write, no store. Only entries whose id is the db's id of their
//!   bytes are in the table, so a hit never returns another id.
//! * **Misses** take the writer lock, probe the by-bytes table again (under
//!   the lock it has no false misses), append the entry and index it by its
//!   bytes: nothing else. They never look an id up.
//! * **The by-id side** ([`by_id`](super::by_id)): a table of 4-byte log
//!   refs ([`id_table`](super::id_table)), placed by a per-shard seeded mix
//!   of the id (so caller-chosen ids cannot force long probe chains),
//!   *settled* from the log by whoever reads the by-id direction first
//!   ([`RawShard::settle`]), under its own exclusive lock, which the writer
//!   never takes on a miss. Settling finds conflicts (an id an earlier
//!   entry holds) and shadows the later entry.
//! * **Finding an entry by its id** (`resolve`) takes no exclusive lock:
//!   the by-id map under a shared lock, then a lock-free walk of the
//!   entries appended since it was last settled.
//! * **Walks** (`for_each_since`) read the log without a lock, from any
//!   position a previous walk returned up to where the map is settled,
//!   skipping shadowed entries: slab by slab, newest first within a slab.
//! * **Synchronous outcomes** (a caller's id, `intern_with_outcome`) take
//!   the writer lock and settle the map before they look the id up.
//!
//! The fixed part is small and allocates nothing until the first insert: an
//! NC that never sees a string costs one cache line of hot fields and a few
//! words of cold ones.

use core::ptr;

use super::blocks::TableWriter;
use super::by_id::IdSide;
use super::log::{Log, LogEnd, LogWriter, Ref, MAX_SLABS};
use super::record::Entry;
use super::table::Table;
use crate::raw::alloc::AllocError;
use crate::raw::bytes::{
    bytes_eq, eq_mid, hash_bytes, hash_id, hash_mid, mid_name, prefetch, prefetch_span, HashSeed,
    MidName, CACHE_LINE,
};
use crate::sync::{self, AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Mutex, Ordering};

mod reads;
mod write;

pub(crate) use write::{ByBytes, WriteGuard};

/// What every hit reads, one cache line that the writer writes only to grow
/// the table (once per several splits), to open a slab directory and to
/// open or close; and the by-id side's pointer, written once. The log's
/// end, which every append stores, lives on the writer's line
/// ([`RawShard`]'s `end`), so that a reader on another core keeps this
/// line while a writer appends. It is the
/// shard's first field (`repr(C)`), and the NC's context, which opens with
/// the shard, is line-aligned (`crate::nc::NcContext`), so it is a line of
/// its own there. Not aligned itself: that would round the shard up to two
/// whole lines, and its context, with the conflict log, to three.
struct Hot {
    table: Table,
    log: Log,
    open: AtomicBool,
    /// Places entries in both indexes.
    seed: HashSeed,
    /// The by-id map and its lock, owned (`Box::into_raw`), made before the
    /// first entry is published, freed by drop: null until then.
    ids: AtomicPtr<IdSide>,
    /// The capacity [`try_new`](RawShard::try_new) was given (at most
    /// `u32::MAX`, which an index holds). Never written after; a whole word,
    /// which fills the line.
    capacity: usize,
}

// One line. (Loom's atomics are larger.)
#[cfg(not(interner_loom))]
const _: () = assert!(core::mem::size_of::<Hot>() == 64);

/// What the writer lock guards; allocated on the first insert.
struct Writer {
    log: LogWriter,
    table: TableWriter,
}

/// One NC's lock-free shard: acquire-only hits, everything else under a lock.
/// `repr(C)`: [`Hot`] first.
#[repr(C)]
pub(crate) struct RawShard {
    hot: Hot,
    writer: Mutex<Option<Box<Writer>>>,
    /// Entries appended: 32 bits (a log of [`MAX_SLABS`] slabs holds
    /// fewer records), so that it and the log's end share a word and the
    /// optimistic strategy's shard, with its stripes' pointer, still fits
    /// its NC's two lines.
    entries: AtomicU32,
    /// The log's published end, which every append stores: on the writer's
    /// line (the lock's, the counts'), not on the line hits read.
    end: LogEnd,
    bytes: AtomicUsize,
    /// The NC's cap on bytes of string data, which the strategy checks. Kept
    /// here: the shard and its NC's conflict log still fit two lines.
    byte_cap: usize,
}

impl RawShard {
    /// An empty, open shard with room for `capacity` entries before its
    /// index first grows, a byte cap for its owner to check, and at most
    /// `slab_limit` slabs of log (never more than [`MAX_SLABS`]; inserts
    /// past it fail as [`AppendError::Full`]). With a capacity of 0 and no
    /// lower slab limit it allocates nothing until the first insert;
    /// otherwise it allocates the writer (and the index) now, and refuses
    /// if the allocation fails or the capacity is past what an index can
    /// hold.
    pub(crate) fn try_new(
        capacity: usize,
        byte_cap: usize,
        slab_limit: usize,
    ) -> Result<Self, AllocError> {
        Self::try_new_seeded(capacity, byte_cap, slab_limit, HashSeed::new())
    }

    /// [`try_new`](Self::try_new), placing entries by `seed`: shards that
    /// share one ([`striped`](super::striped)) share
    /// [`bytes_hash`](Self::bytes_hash).
    pub(super) fn try_new_seeded(
        capacity: usize,
        byte_cap: usize,
        slab_limit: usize,
        seed: HashSeed,
    ) -> Result<Self, AllocError> {
        // An index refuses more (`init`, below); with no entries asked
        // for, none is made.
        u32::try_from(capacity).map_err(|_| AllocError)?;
        let shard = RawShard {
            hot: Hot {
                table: Table::new(),
                log: Log::new(),
                open: AtomicBool::new(true),
                seed,
                ids: AtomicPtr::new(core::ptr::null_mut()),
                capacity,
            },
            writer: Mutex::new(None),
            entries: AtomicU32::new(0),
            end: LogEnd::new(),
            bytes: AtomicUsize::new(0),
            byte_cap,
        };
        if capacity > 0 || slab_limit < MAX_SLABS {
            let mut guard = shard.write();
            let writer = guard.writer_mut()?;
            writer.log.limit_slabs(slab_limit);
            if capacity > 0 {
                shard.hot.table.init(&mut writer.table, capacity)?;
            }
            drop(guard);
        }
        Ok(shard)
    }

    /// [`try_new`](Self::try_new), for tests.
    #[cfg(test)]
    pub(crate) fn new(capacity: usize) -> Self {
        Self::try_new(capacity, usize::MAX, MAX_SLABS).expect("allocates nothing")
    }

    /// The byte cap given to [`try_new`](Self::try_new).
    #[inline]
    pub(crate) fn byte_cap(&self) -> usize {
        self.byte_cap
    }

    /// The placement of `bytes` in the by-bytes index (a seeded hash of
    /// the shard's own: pass it only to this shard).
    #[inline]
    pub(crate) fn bytes_hash(&self, bytes: &[u8]) -> u64 {
        hash_bytes(bytes, self.hot.seed)
    }

    /// The by-id map's placement: the id mixed with a per-shard seed.
    #[inline]
    fn id_hash(&self, id: u64) -> u64 {
        hash_id(id, self.hot.seed)
    }

    /// The entry holding exactly `bytes` under the db's id of `bytes`, if
    /// it was interned so. Lock-free: acquire loads only, no store; may miss
    /// an entry inserted concurrently or moved by a split (a false miss),
    /// never returns a wrong one.
    #[cfg(test)]
    pub(crate) fn find_by_bytes(&self, bytes: &[u8]) -> Option<Entry<'_>> {
        let (hash, probe) = self.placement(bytes);
        self.find_probed(hash, probe)
    }

    /// The bytes' hash ([`bytes_hash`](Self::bytes_hash)) and how a probe
    /// compares them: a name of 17 to 64 bytes hashed from the chunks it
    /// is compared by ([`mid_name`]), computed once for every shard probed
    /// ([`find_probed`](Self::find_probed); an NC's stripes, made after
    /// this shard and placing by its seed:
    /// [`StripedShard::find_probed`](super::striped::StripedShard::find_probed)).
    #[inline(always)]
    pub(crate) fn placement<'b>(&self, bytes: &'b [u8]) -> (u64, Probe<'b>) {
        let seed = self.hot.seed;
        match mid_name(bytes) {
            Some(name) => (hash_mid(name, seed), Probe::Mid(name)),
            None => (hash_bytes(bytes, seed), Probe::Bytes(bytes)),
        }
    }

    /// Prefetches the line of the first bucket a probe of `hash` reads
    /// (none before the table's first insert): for a miss predicted
    /// without a probe (the optimistic strategy's `miss_run`), so that the
    /// line arrives while the caller computes the id and takes the writer
    /// lock, whose probe is exact.
    #[inline(always)]
    pub(crate) fn prefetch_bucket(&self, hash: u64) {
        if let Some(buckets) = self.hot.table.buckets() {
            prefetch(ptr::from_ref(buckets.first(hash)).cast());
        }
    }

    /// The first entry under `hash` that holds the name of `probe`.
    #[inline(always)]
    pub(crate) fn find_probed(&self, hash: u64, probe: Probe<'_>) -> Option<Entry<'_>> {
        match probe {
            Probe::Mid(name) => self.find_where(hash, |stored| eq_mid(stored, name)),
            Probe::Bytes(bytes) => self.find_by_hash(hash, bytes),
        }
    }

    /// [`find_by_bytes`](Self::find_by_bytes) with the bytes' hash
    /// ([`bytes_hash`](Self::bytes_hash)) already computed.
    #[inline(always)]
    pub(crate) fn find_by_hash(&self, hash: u64, bytes: &[u8]) -> Option<Entry<'_>> {
        debug_assert_eq!(hash, self.bytes_hash(bytes));
        self.find_where(hash, |stored| bytes_eq(stored, bytes))
    }

    /// The first entry under `hash` in the by-bytes table whose bytes
    /// `is_key` accepts.
    #[inline(always)]
    fn find_where(&self, hash: u64, is_key: impl Fn(&[u8]) -> bool) -> Option<Entry<'_>> {
        self.find_ref_where(hash, is_key).map(|(_, entry)| entry)
    }

    /// [`find_by_hash`](Self::find_by_hash), with where the log stores the
    /// entry.
    #[inline]
    pub(crate) fn find_ref_by_hash(&self, hash: u64, bytes: &[u8]) -> Option<(Ref, Entry<'_>)> {
        debug_assert_eq!(hash, self.bytes_hash(bytes));
        self.find_ref_where(hash, |stored| bytes_eq(stored, bytes))
    }

    /// [`find_where`](Self::find_where), with where the log stores the
    /// entry.
    #[inline(always)]
    fn find_ref_where(
        &self,
        hash: u64,
        is_key: impl Fn(&[u8]) -> bool,
    ) -> Option<(Ref, Entry<'_>)> {
        let log = &self.hot.log;
        // Inlined into the probe: left to the compiler, the candidate's
        // check (its record, its length, the compare) was a call a
        // candidate (`docs/history.md`, "The hit path").
        self.hot.table.find_map(
            hash,
            #[inline(always)]
            |at| {
                // SAFETY: a ref from a slot word loaded with acquire: its record
                // was published before the word was stored with release.
                let entry = unsafe { log.entry(at) };
                is_key(entry.bytes()).then_some((at, entry))
            },
        )
    }

    /// The entry holding exactly `bytes` under the db's id of them, found
    /// as [`find_by_bytes`](Self::find_by_bytes) finds it, if it is
    /// settled and holds its id first (no earlier entry holds it): `Ok` of
    /// it, `Err(true)` if the probe found an entry but it is not known to
    /// hold its id first (another string may, or the map is not settled
    /// past it), `Err(false)` if the probe found none. After a probe that
    /// found an entry, answers without a lock when the side knows it holds
    /// its id first ([`IdSide::holds_first`]), and otherwise takes the
    /// by-id map's shared lock.
    pub(crate) fn find_first_by_bytes(&self, bytes: &[u8]) -> Result<Entry<'_>, bool> {
        self.find_first_by_hash(self.bytes_hash(bytes), bytes)
    }

    /// [`find_first_by_bytes`](Self::find_first_by_bytes) with the bytes'
    /// hash ([`bytes_hash`](Self::bytes_hash)) already computed.
    pub(crate) fn find_first_by_hash(&self, hash: u64, bytes: &[u8]) -> Result<Entry<'_>, bool> {
        let (at, entry) = self.find_ref_by_hash(hash, bytes).ok_or(false)?;
        // SAFETY: the probe acquired a slot word published after the
        // entry, which was published after the side was made.
        let side = unsafe { self.id_side() }.ok_or(true)?;
        if side.holds_first(at) {
            return Ok(entry);
        }
        let map = sync::read(&side.map);
        if at < map.synced() && !map.is_shadowed(at) {
            Ok(entry)
        } else {
            Err(true)
        }
    }

    /// The id found by [`find_by_bytes`](Self::find_by_bytes) for each of
    /// `names`, or `0`, into `ids` (of the same length). Pipelined so that
    /// the cache misses of a batch overlap: hash every name and prefetch its
    /// bucket, then read the buckets and prefetch every candidate record,
    /// then compare. The table's shape and directory are loaded once a
    /// step, and the log's slab directory once after its buckets are read:
    /// each lookup of a step uses them, where a lookup alone loads its own.
    pub(crate) fn find_ids_by_bytes<B: AsRef<[u8]>>(&self, names: &[B], ids: &mut [u64]) {
        const STEP: usize = 32;
        let mut hashes = [0u64; STEP];
        let mut firsts = [None; STEP];
        let mut candidates = [None; STEP];
        let (table, log) = (&self.hot.table, &self.hot.log);
        for (names, ids) in names.chunks(STEP).zip(ids.chunks_mut(STEP)) {
            // The caller's names are often not in cache either: fetching
            // them all first overlaps those misses too.
            for name in names {
                prefetch_span(name.as_ref());
            }
            let Some(buckets) = table.buckets() else {
                // No index yet: nothing to find.
                ids.fill(0);
                continue;
            };
            let hashes = &mut hashes[..names.len()];
            for ((hash, first), name) in hashes.iter_mut().zip(&mut firsts).zip(names) {
                *hash = self.bytes_hash(name.as_ref());
                let bucket = buckets.first(*hash);
                prefetch(ptr::from_ref(bucket).cast());
                *first = Some(bucket);
            }
            for ((candidate, &hash), first) in candidates.iter_mut().zip(&*hashes).zip(firsts) {
                *candidate = first.and_then(|bucket| Table::first_candidate(bucket, hash));
            }
            let candidates = &candidates[..names.len()];
            // Loaded after the slot words above were acquired: it holds
            // their records' slabs. (Absent only if no record is.)
            let slabs = log.slabs();
            for &at in candidates.iter().flatten() {
                // SAFETY: a ref from a slot word loaded with acquire (in
                // `first_candidate`) before `slabs` was loaded.
                let record = unsafe { slabs.expect("a published record").record_addr(at) };
                // A record of a typical name (a header and 70 bytes)
                // mostly spans two lines.
                prefetch(record);
                prefetch(record.wrapping_add(CACHE_LINE));
            }
            for (((id, name), &hash), &candidate) in
                ids.iter_mut().zip(names).zip(&*hashes).zip(candidates)
            {
                let name = name.as_ref();
                // SAFETY: as above.
                let entry = candidate
                    .map(|at| unsafe { slabs.expect("a published record").entry(at) })
                    .filter(|entry| bytes_eq(entry.bytes(), name))
                    .or_else(|| self.find_by_hash(hash, name));
                *id = entry.map_or(0, Entry::id);
            }
        }
    }

    /// Whether the shard is open. Acquire: a reader that sees `false` after
    /// a [`WriteGuard::set_open`] sees everything before it.
    #[inline]
    pub(crate) fn is_open(&self) -> bool {
        self.hot.open.load(Ordering::Acquire)
    }

    /// Entries appended (exact when no insert is running), shadowed ones
    /// included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entries.load(Ordering::Relaxed) as usize
    }

    /// Bytes of string data appended (exact when no insert is running),
    /// shadowed entries' included.
    #[inline]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The log's published end (acquire).
    #[inline]
    pub(super) fn log_end(&self) -> Ref {
        self.end.load()
    }

    /// The log's published end (acquire), as the walk position
    /// [`for_each_since`](Self::for_each_since) returns once it reached it.
    #[inline]
    pub(crate) fn end_position(&self) -> usize {
        self.log_end().to_bits() as usize
    }

    /// Calls `f` on every record of the log from position `from` to
    /// `end` ([`Log::walk_between`]: `end` a published end this thread
    /// acquired, at or after `from`), the shadowed ones included.
    pub(super) fn walk_log(&self, from: Ref, end: Ref, f: impl FnMut(Ref, Entry<'_>)) {
        self.hot.log.walk_between(from, end, f);
    }

    /// The entry at `at`.
    ///
    /// # Safety
    ///
    /// As [`Log::entry`]: `at` names a record of this shard's log whose
    /// publication the caller acquired, or the caller holds the writer
    /// lock it was appended under.
    #[inline]
    pub(super) unsafe fn entry_at(&self, at: Ref) -> Entry<'_> {
        // SAFETY: the caller's contract.
        unsafe { self.hot.log.entry(at) }
    }

    /// The writer lock if no other thread holds it (recovering it from
    /// poisoning, as [`write`](Self::write)): `None` is the contention that
    /// moves an NC to stripes.
    #[inline]
    pub(crate) fn try_write(&self) -> Option<WriteGuard<'_>> {
        sync::try_lock(&self.writer).map(|writer| WriteGuard {
            shard: self,
            writer,
        })
    }

    /// The seed the shard places entries by.
    #[inline]
    pub(super) fn seed(&self) -> HashSeed {
        self.hot.seed
    }

    /// Takes the writer lock (recovering it from poisoning: nothing under it
    /// can panic with the shard half-changed).
    #[inline]
    pub(crate) fn write(&self) -> WriteGuard<'_> {
        WriteGuard {
            shard: self,
            writer: sync::lock(&self.writer),
        }
    }

    /// [`write`](Self::write), waiting as a stripe's writer does
    /// ([`sync::lock_yielding`]).
    #[inline]
    pub(crate) fn write_stripe(&self) -> WriteGuard<'_> {
        WriteGuard {
            shard: self,
            writer: sync::lock_yielding(&self.writer),
        }
    }

    /// The log's published end (acquired) and the by-id side, once an
    /// entry is published: `None` before the first. The side is made
    /// before the first entry is published, so a reader that acquires an
    /// end past the start sees its pointer; it is freed only through
    /// `&mut self`.
    #[inline]
    fn published_side(&self) -> Option<(Ref, &IdSide)> {
        let end = self.end.load();
        if end == Ref::default() {
            return None;
        }
        // SAFETY: an end past the start, acquired just above.
        let side = unsafe { self.id_side() }?;
        Some((end, side))
    }

    /// The by-id side, if made.
    ///
    /// # Safety
    ///
    /// The caller holds the writer lock, or acquired a published log end
    /// past the start.
    #[inline]
    unsafe fn id_side(&self) -> Option<&IdSide> {
        let side = core::ptr::NonNull::new(self.hot.ids.load(Ordering::Relaxed))?;
        // SAFETY: made by `Box::into_raw` before the first entry was
        // published, under the writer lock (the caller's contract shows the
        // store); freed only through `&mut self`.
        Some(unsafe { side.as_ref() })
    }
}

/// A name as a lock-free probe compares it ([`RawShard::find_probed`]): a
/// name of 17 to 64 bytes by its chunks ([`mid_name`]), computed once for
/// every shard probed, any other by its bytes.
#[derive(Clone, Copy)]
pub(crate) enum Probe<'a> {
    Mid(MidName<'a>),
    Bytes(&'a [u8]),
}

impl Drop for RawShard {
    /// Frees the by-id side, if made (the writer, with every slab, segment
    /// and directory, drops with its field).
    fn drop(&mut self) {
        let side = self.hot.ids.swap(core::ptr::null_mut(), Ordering::Relaxed);
        if !side.is_null() {
            // SAFETY: made by `Box::into_raw`; `&mut self`: no reader holds
            // a reference to it.
            drop(unsafe { Box::from_raw(side) });
        }
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests;
