//! The optimistic strategy: a lock-free hit path over a per-NC log of
//! entries, with a per-NC lock for misses.
//!
//! A hit is found by the bytes (a fast hash, then an exact compare) and
//! returns the id stored with them: it computes no SipHash at all. A miss
//! appends the entry and indexes it by its bytes, nothing else. A by-id map,
//! settled from the log when the by-id direction is read, serves everything
//! else: resolving ids under its shared lock, finding conflicts, and
//! synchronous outcomes under the NC's writer lock.
//!
//! An NC whose writers meet moves to stripes (`stripes.rs`, over
//! `raw::optimistic::striped`): its first shard frozen, later misses under
//! one of 64 locks.

use super::shard::{
    lookup_by_id, ConflictSink, FastPath, IdSource, Interned, Key, LineAligned, Misses, Placement,
    Refusal, Sealed, Shard, ShardConfig, ShardStats,
};
use super::stripes::Stripes;
use super::{Registered, Strategy};
use crate::raw::{Entry, OnceBox, Probe, RawShard, StripedShard};

mod miss;
mod miss_run;

use miss::{intern_miss, looks_id_up, register_locked};

/// Walk positions from here on are the stripes' (this less it), once
/// an NC moved to stripes; below it, the frozen shard's log positions
/// (32 bits).
const STRIPED_WALK: usize = 1 << 32;

/// The optimistic strategy: when the string is already in the NC's shard
/// (the common case on a trace-emission path), `intern` takes no lock, does
/// no atomic read-modify-write and stores nothing to shared memory: it is a
/// fast hash of the bytes, a few acquire loads, and one compare of length and
/// bytes, returning the stored id: no SipHash. (Except once after a run of
/// inserts by the calling thread, which predicts a miss: below.)
///
/// Misses take the NC's writer lock, probe the by-bytes index again (the
/// probe notes where the new word goes), and append the string to the NC's
/// log of fixed-size slabs and to the index, which grows a few buckets at a
/// time without blocking readers: a miss never looks its id up. Conflicts
/// (another string under the id) are found when the NC's by-id map is next
/// *settled* from the log, in bulk, the first string of an id winning:
/// before a snapshot, a delta, the conflict list,
/// the counters or an intern whose outcome the caller reads
/// (`intern_with_outcome`, `register`, the C ABI); a resolve or a lookup
/// settles once the map lags 64 entries behind. Resolving an id takes no
/// lock of the writer's: the by-id map under a shared lock, then a
/// lock-free walk of the entries appended since it was settled. A lookup,
/// or an intern whose outcome the caller reads, that finds its entry by its
/// bytes must know the entry holds its id first: two loads tell it for an
/// entry a settle reached in a shard that never saw a conflict, and that
/// shared lock otherwise.
///
/// A thread whose last eight interns all inserted is predicted to insert
/// again (`miss_run`): its next intern prefetches the name's bucket (in a
/// moved NC, its stripe's, the frozen shard probed meanwhile) and takes
/// the lock without the lock-free probe, so that the bucket's line arrives
/// while it computes the id and the lock's probe decides; a name found
/// there ends the run. Its lock is only tried: held, the lock-free probe
/// runs before any wait, so no hit waits for a lock.
///
/// An NC whose writers meet (a miss finds its writer lock held) moves to
/// 64 *stripes*, each with its own writer lock, log and by-bytes index,
/// picked by bits of the bytes' hash: its entries so far stay where hits
/// look first, frozen, and later misses take only their stripe's lock.
/// Each record after the move is numbered from one NC-wide counter, and
/// the by-id map over the stripes is settled in the numbers' order, so the
/// first string of an id and the order of the conflicts still follow the
/// calls' order across threads. An NC with a byte cap or a slab limit never
/// moves. See `docs/design.md` for the memory orderings and the memory
/// cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct OptimisticStrategy;

impl OptimisticStrategy {
    /// The most slabs of strings an NC's log can have (262,143): what a
    /// 32-bit position names. See [`Config::slab_limit`](crate::Config::slab_limit).
    pub const MAX_SLABS: usize = crate::raw::MAX_SLABS;
}

impl Strategy for OptimisticStrategy {
    const NAME: &'static str = "optimistic";
    const FINDS_CONFLICTS_LAZILY: bool = true;
    type Shard = OptimisticShard;
}

impl Sealed for OptimisticStrategy {}

/// The shard (its byte cap included). `repr(C)`: the raw shard's hot line
/// first, where its NC's context puts a line's start.
///
/// **Stripes on contention.** A miss that finds the NC's writer lock held
/// (its `try_lock` fails) moves the NC to stripes (`stripes`, made under
/// that lock, as the striped strategy's: `raw::optimistic::striped`).
/// From then on nothing is appended to `raw`, which stays where hits look
/// first; every later miss, and every intern whose outcome is read, goes to
/// the stripes, their records numbered after every entry of `raw`. An NC
/// with a byte cap or a slab limit never moves (its limits are one log's).
///
/// `STRIPED_AFTER`: a number of entries past which a miss moves the NC to
/// stripes even without contention (`usize::MAX`, the default: never);
/// the striped strategy's shard moves after its eighth, so that every
/// test runs the moved path.
#[repr(C)]
pub struct OptimisticShard<const STRIPED_AFTER: usize = { usize::MAX }> {
    raw: RawShard,
    stripes: OnceBox<StripedShard>,
}

impl<const STRIPED_AFTER: usize> OptimisticShard<STRIPED_AFTER> {
    /// The NC's stripes, once it moved to them, after `raw` (frozen).
    #[inline]
    fn stripes(&self) -> Option<Stripes<'_>> {
        self.stripes.get().map(|stripes| Stripes {
            stripes,
            base: &self.raw,
        })
    }

    /// [`lookup`](Shard::lookup) of `bytes` (of hash `hash`) in a moved
    /// NC's stripes without a settle: `Some` of the answer if the bytes'
    /// stripe holds them and either its settled end says the entry holds
    /// its id first (no lock) or a by-id map holds their id, whose first
    /// string nothing interned later changes: the stripes' map first (a
    /// settle of the stripes maps no id that the frozen shard holds, and
    /// settled the frozen shard wholly before), then the frozen shard's
    /// (its first string of an id is the NC's); `None` if neither can
    /// tell. A settle per lookup read every stripe's end under the map's
    /// exclusive lock: 72 to 105 ns a lookup alone, 744 to 1,565 under a
    /// writer (the `readers` bench, the striped strategy).
    fn lookup_settled(&self, hash: u64, bytes: &[u8]) -> Option<Option<u64>> {
        let stripes = self.stripes()?;
        let (entry, first) = stripes.stripes.find_settled_by_hash(hash, bytes)?;
        let id = entry.id();
        if first {
            return Some(Some(id));
        }
        let kept = match stripes.stripes.find_mapped(id) {
            Some((_, kept)) => kept,
            None => stripes.base.find_mapped_by_id(id)?,
        };
        Some(crate::raw::bytes_eq(kept.bytes(), bytes).then_some(id))
    }

    /// The lock-free probe of the name placed at `(hash, probe)`
    /// ([`RawShard::placement`]): the frozen shard, then its stripes. May
    /// miss an entry inserted concurrently (a false miss), never returns a
    /// wrong one.
    #[inline(always)]
    fn find_placed(&self, hash: u64, probe: Probe<'_>) -> Option<Entry<'_>> {
        self.raw
            .find_probed(hash, probe)
            .or_else(|| find_in_stripes(self.stripes.get()?, hash, probe))
    }
}

impl<const STRIPED_AFTER: usize> core::fmt::Debug for OptimisticShard<STRIPED_AFTER> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OptimisticShard")
            .field("open", &self.raw.is_open())
            .field("entries", &self.raw.len())
            .field("bytes", &self.raw.bytes())
            .field("byte_cap", &self.raw.byte_cap())
            .finish()
    }
}

impl<const STRIPED_AFTER: usize> Shard for OptimisticShard<STRIPED_AFTER> {
    type ContextAlign = LineAligned;

    fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        Ok(OptimisticShard {
            raw: RawShard::try_new(config.initial_capacity, config.byte_cap, config.slab_limit)
                .map_err(|_| Refusal::OutOfMemory)?,
            stripes: OnceBox::new(),
        })
    }

    /// A key the probe has not seen yet (a caller's id that is the hash)
    /// is looked up lock-free first, as in [`find_hit`](FastPath::find_hit);
    /// a key that wants its outcome is answered so only if the entry found
    /// is settled and holds its id first. Then the miss path.
    #[inline]
    fn intern(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned {
        let placed = match key.placement() {
            Some(placed) => Some(placed),
            None if key.source() == IdSource::Hash && key.wants_outcome() => {
                // A closed shard refuses on the miss path, after an empty
                // name.
                if self.raw.is_open() {
                    if let Ok(entry) = self.raw.find_first_by_bytes(key.bytes) {
                        return Ok((entry.id(), Registered::AlreadyPresent));
                    }
                }
                None
            }
            None if key.source() == IdSource::Hash => match self.find_hit(key.bytes) {
                Ok(id) => return Ok((id, Registered::AlreadyPresent)),
                Err(placed) => placed,
            },
            None => None,
        };
        intern_miss(self, key, placed, conflicts)
    }

    /// Settles the by-id map, recording the conflicts found in
    /// `conflicts`. An allocation failure leaves the map empty, which is
    /// correct, only slower to read, and is tried again at the next read.
    fn settle(&self, conflicts: ConflictSink<'_>) {
        if let Some(stripes) = self.stripes() {
            let _ = stripes.settle(conflicts);
            return;
        }
        let _ = self
            .raw
            .settle(|id, kept, rejected| conflicts.record(id, kept, rejected));
    }

    /// Settles once the map lags 64 entries behind the log: a resolve
    /// under a writer walks at most those (keeping the earliest of an id),
    /// where settling for every few appended took the exclusive lock on
    /// almost every call.
    /// With stripes, a full settle: what the stripes' map lacks is not
    /// walked, since a later settle may meet a smaller number published
    /// meanwhile.
    fn settle_for_reads(&self, conflicts: ConflictSink<'_>) {
        if self.stripes.get().is_some() {
            self.settle(conflicts);
            return;
        }
        let _ = self
            .raw
            .settle_lagging(|id, kept, rejected| conflicts.record(id, kept, rejected));
    }

    /// The hit path without the open check, so `lookup` of a present name
    /// takes no writer lock (to know that the entry holds its id first it
    /// loads the by-id side's settled end and flag, and takes the map's
    /// shared lock only when they cannot tell); in a moved NC, a name in
    /// its stripe is answered from the stripes' map as settled, if it
    /// holds the name's id (`lookup_settled`); any other name is looked up
    /// by its id, after the map is settled (so that the walk of what the
    /// map lacks stays short).
    fn lookup(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Option<u64> {
        let hash = self.raw.bytes_hash(key.bytes);
        let answer = match self.raw.find_first_by_hash(hash, key.bytes) {
            Ok(entry) => return Some(entry.id()),
            // The frozen shard holds the bytes, so no stripe does.
            Err(true) => None,
            Err(false) => self.lookup_settled(hash, key.bytes),
        };
        answer.unwrap_or_else(|| {
            self.settle_for_reads(conflicts);
            lookup_by_id(self, key)
        })
    }

    fn resolve<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        // `find_by_id` holds no lock when it returns: `f` may call back into
        // the db. The stripes' entries follow every one of `raw`.
        let entry = match self.raw.find_by_id(id) {
            Some(entry) => entry,
            None => self.stripes.get()?.find_mapped(id)?.1,
        };
        Some(f(entry.bytes()))
    }

    /// From the by-id map as it is, under its shared lock: unless the map
    /// lacks `id`, a resolve under a writer neither settles what the
    /// writer appended since nor checks how far the map lags (the entry
    /// count, on a line the writer stores to on every insert, and a second
    /// round trip of the map's lock).
    fn resolve_settled<R, F: FnOnce(&[u8]) -> R>(&self, id: u64, f: F) -> Result<R, F> {
        let found = match self.stripes() {
            Some(stripes) => stripes.find_mapped(id).map(|(_, entry)| entry),
            None => self.raw.find_mapped_by_id(id),
        };
        match found {
            // No lock is held: `f` may call back into the db.
            Some(entry) => Ok(f(entry.bytes())),
            None => Err(f),
        }
    }

    /// No copy: `resolve` already calls `f` with no lock held.
    fn resolve_unlocked<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.resolve(id, f)
    }

    /// With stripes, `raw` to its end, then the stripes' settled entries
    /// (positions from [`STRIPED_WALK`] on).
    fn walk(&self, from: usize, mut f: impl FnMut(u64, &[u8])) -> Option<usize> {
        if !self.raw.is_open() {
            return None;
        }
        let mut f = |entry: crate::raw::Entry<'_>| f(entry.id(), entry.bytes());
        let Some(stripes) = self.stripes.get() else {
            return Some(self.raw.for_each_since(from, f));
        };
        let from = match from.checked_sub(STRIPED_WALK) {
            Some(from) => from,
            None => {
                // Frozen: its end is final. Walked to it only once settled
                // to it (a settle that failed leaves it behind).
                let reached = self.raw.for_each_since(from, &mut f);
                if reached != self.raw.end_position() {
                    return Some(reached);
                }
                0
            }
        };
        Some(STRIPED_WALK + stripes.walk_settled(from, f))
    }

    fn set_open(&self, open: bool) {
        // Under the writer lock, so that no miss in progress inserts into a
        // shard that `close_nc` has returned from closing, and no move to
        // stripes runs meanwhile: the stripes, if made, are opened or
        // closed before it is released.
        let mut writer = self.raw.write();
        writer.set_open(open);
        if let Some(stripes) = self.stripes.get() {
            stripes.set_open(open);
        }
    }

    fn is_open(&self) -> bool {
        self.raw.is_open()
    }

    /// Exact as of the last settle (the db settles before it reads them).
    fn stats(&self) -> ShardStats {
        let (entries, bytes) = match self.stripes() {
            Some(stripes) => stripes.held(),
            None => self.raw.held(),
        };
        ShardStats { entries, bytes }
    }
}

impl<const STRIPED_AFTER: usize> FastPath for OptimisticShard<STRIPED_AFTER> {
    /// The hit path, inlined into the caller: acquire loads only
    /// (`is_open`, the probe), no lock, no read-modify-write, no store to
    /// shared memory, and no SipHash. A miss hands on the bytes' hash,
    /// which the insert places the entry by. The by-bytes index holds only
    /// entries stored under the hash of their bytes, so a caller's other id
    /// never hits. A thread in a run of inserts into an NC that has not
    /// moved skips the probe ([`miss_run`]): the bucket prefetched, the
    /// miss path's probe under the lock decides.
    #[inline]
    fn find_hit(&self, bytes: &[u8]) -> Result<u64, Option<Placement>> {
        if !self.raw.is_open() {
            return Err(None);
        }
        let run = miss_run::current();
        let (hash, probe) = self.raw.placement(bytes);
        if run >= miss_run::PREDICT_AFTER {
            match self.stripes.get() {
                None => self.raw.prefetch_bucket(hash),
                Some(stripes) => {
                    if let Some(id) = predicted_in_stripes(&self.raw, stripes, hash, bytes) {
                        miss_run::end();
                        return Ok(id);
                    }
                }
            }
            return Err(Some(Placement {
                hash,
                probed: false,
            }));
        }
        match self.find_placed(hash, probe) {
            Some(entry) => {
                if run != 0 {
                    miss_run::end();
                }
                Ok(entry.id())
            }
            None => Err(Some(Placement { hash, probed: true })),
        }
    }

    /// Pipelined: the lookups' cache misses overlap (`find_ids_by_bytes`).
    fn find_hits<B: AsRef<[u8]>>(&self, names: &[B], ids: &mut [u64]) {
        if !self.raw.is_open() {
            ids.fill(0);
            return;
        }
        self.raw.find_ids_by_bytes(names, ids);
        if let Some(stripes) = self.stripes.get() {
            for (id, name) in ids.iter_mut().zip(names) {
                if *id == 0 {
                    let name = name.as_ref();
                    let hash = self.raw.bytes_hash(name);
                    *id = stripes
                        .find_by_hash(hash, name)
                        .map_or(0, |entry| entry.id());
                }
            }
        }
    }

    /// One writer lock for a step of misses: with two threads filling one
    /// NC, a lock per miss moved the lock's line and what a miss writes (the
    /// log's end, the writer's state, the counters) between cores for each
    /// one. The bytes' hashes are computed first, outside the lock.
    fn intern_misses(&self, misses: &[Key<'_>], conflicts: ConflictSink<'_>) -> Misses {
        const STEP: usize = 64;
        let mut hashes = [0u64; STEP];
        for (step, misses) in misses.chunks(STEP).enumerate() {
            let first = step * STEP;
            for (hash, miss) in hashes.iter_mut().zip(misses) {
                *hash = self.raw.bytes_hash(miss.bytes);
            }
            if self.stripes.get().is_none() {
                let mut writer = self.write_or_stripe();
                if self.stripes.get().is_none() {
                    if !self.raw.is_open() {
                        return Err((first, Refusal::Closed));
                    }
                    for (at, (miss, &hash)) in misses.iter().zip(&hashes).enumerate() {
                        let at = first + at;
                        miss.id()
                            .and_then(|id| {
                                let outcome = looks_id_up(self, *miss);
                                register_locked(
                                    self,
                                    &mut writer,
                                    id,
                                    miss.bytes,
                                    Some(hash),
                                    outcome,
                                    false,
                                    conflicts,
                                )
                            })
                            .map_err(|refusal| (at, refusal))?;
                    }
                    continue;
                }
            }
            // Moved to stripes, before this step or while it waited for the
            // lock (released above): `raw` takes no more entries. (Once
            // made, the stripes stay: this is always `Some`.)
            if let Some(stripes) = self.stripes() {
                for (at, (miss, &hash)) in misses.iter().zip(&hashes).enumerate() {
                    stripes
                        .intern(*miss, Some(hash), false, conflicts)
                        .map_err(|refusal| (first + at, refusal))?;
                }
            }
        }
        Ok(())
    }
}

/// [`find_hit`](FastPath::find_hit) in the NC's stripes, after its frozen
/// shard missed the name of `probe` (of hash `hash`; a mid-sized name's
/// chunks are computed once for both probes): out of line, so that the hit
/// path of an NC that never moved stays as small as it was.
#[inline(never)]
fn find_in_stripes<'s>(
    stripes: &'s StripedShard,
    hash: u64,
    probe: Probe<'_>,
) -> Option<Entry<'s>> {
    stripes.find_probed(hash, probe)
}

/// [`find_hit`](FastPath::find_hit) of a miss predicted ([`miss_run`]) in
/// a moved NC: the name's bucket in its stripe prefetched, then the frozen
/// shard probed (exact: nothing is added to it any more, and its lines are
/// most often cached) while the stripe's line is on its way; the stripe
/// itself is probed under its lock (`Stripes::intern`). The id of the
/// frozen shard's entry of `bytes`, if it holds one. Out of line, as
/// [`find_in_stripes`] is; it takes the bytes, not their probe, so that
/// the hit path need not keep the probe for it (a predicted miss on one
/// lock has no use for it: 4 instructions an insert).
#[inline(never)]
fn predicted_in_stripes(
    frozen: &RawShard,
    stripes: &StripedShard,
    hash: u64,
    bytes: &[u8],
) -> Option<u64> {
    stripes.prefetch_bucket(hash);
    frozen.find_by_hash(hash, bytes).map(|entry| entry.id())
}

#[cfg(all(test, not(interner_loom)))]
mod tests;
