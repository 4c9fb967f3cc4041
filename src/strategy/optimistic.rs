//! The optimistic strategy: a lock-free hit path over a per-NC log of
//! entries, with a per-NC lock for misses.
//!
//! A hit is found by the bytes (a fast hash, then an exact compare) and
//! returns the id stored with them: it computes no SipHash at all. A by-id
//! map serves everything else: resolving ids under its shared lock, and
//! finding conflicts under the NC's writer lock.

use super::imp::{
    IdSource, LineAligned, Miss, Probe, Refusal, Sealed, Shard, ShardConfig, ShardStats,
};
use super::parts::{check_cap, compare};
use super::{Registered, Strategy};
use crate::raw::{Entry, RawShard, WriteGuard};

/// The optimistic strategy: when the string is already in the NC's shard
/// (the common case on a trace-emission path), `intern` takes no lock, does
/// no atomic read-modify-write and stores nothing to shared memory: it is a
/// fast hash of the bytes, a few acquire loads, and one compare of length and
/// bytes, returning the stored id: no SipHash.
///
/// Misses take the NC's writer lock, re-check, and append the string to the
/// NC's log of fixed-size slabs. The by-bytes index grows one bucket at a
/// time without blocking readers. Resolving an id (`resolve`,
/// `with_resolved`, a `lookup` of a name the lock-free probe missed) takes
/// no exclusive lock: the by-id map under a shared lock that only the
/// writer's batched updates take exclusively, then a lock-free walk of the
/// few entries the map lacks. Conflicts and caller-supplied ids are checked
/// under the writer lock. See `docs/design.md` for the memory orderings and
/// the memory cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct OptimisticStrategy;

impl Strategy for OptimisticStrategy {
    const NAME: &'static str = "optimistic";
    type Shard = OptimisticShard;
}

impl Sealed for OptimisticStrategy {}

/// The shard (its byte cap included). `repr(transparent)`: the raw shard's
/// hot line first, where its NC's context puts a line's start.
#[repr(transparent)]
pub struct OptimisticShard {
    raw: RawShard,
}

impl core::fmt::Debug for OptimisticShard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OptimisticShard")
            .field("open", &self.raw.is_open())
            .field("entries", &self.raw.len())
            .field("bytes", &self.raw.bytes())
            .field("byte_cap", &self.raw.byte_cap())
            .finish()
    }
}

// Two lines with the NC's conflict log: what hits read, starting a line,
// and the rest. 256 NCs hold one each. (Loom's atomics are larger.)
#[cfg(not(interner_loom))]
const _: () = {
    use crate::nc::NcContext;
    assert!(core::mem::size_of::<NcContext<OptimisticStrategy>>() == 128);
    assert!(core::mem::align_of::<NcContext<OptimisticStrategy>>() == 64);
    assert!(core::mem::offset_of!(NcContext<OptimisticStrategy>, shard) == 0);
};

impl Shard for OptimisticShard {
    const GLOBAL_MERGE_LOCK: bool = false;
    type ContextAlign = LineAligned;

    fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        Ok(OptimisticShard {
            raw: RawShard::try_new(config.initial_capacity, config.byte_cap)
                .map_err(|_| Refusal::OutOfMemory)?,
        })
    }

    /// The hit path: acquire loads only (`is_open`, `find_hashed`), no
    /// lock, no read-modify-write, no store. A miss hands on the bytes'
    /// hash, which the insert places the entry by.
    #[inline]
    fn find_hit(&self, bytes: &[u8]) -> Result<u64, Probe> {
        if !self.raw.is_open() {
            return Err(Probe::NONE);
        }
        self.raw
            .find_hashed(bytes)
            .map(Entry::id)
            .map_err(|hash| Probe(Some(hash)))
    }

    /// The hit path without the open check: `lookup` of a present name
    /// takes no lock.
    #[inline]
    fn find_present(&self, bytes: &[u8]) -> Option<u64> {
        self.raw.find_by_bytes(bytes).map(Entry::id)
    }

    fn find_hits<B: AsRef<[u8]>>(&self, names: &[B], ids: &mut [u64]) {
        if self.raw.is_open() {
            self.raw.find_ids_by_bytes(names, ids);
        } else {
            ids.fill(0);
        }
    }

    #[inline]
    fn register(
        &self,
        id: u64,
        bytes: &[u8],
        source: IdSource,
        on_conflict: impl FnOnce(&[u8]),
    ) -> Result<Registered, Refusal> {
        // Lock-free first, as in `find_hit`, where that can answer: the
        // by-bytes index holds only entries stored under the hash of their
        // bytes, so a caller's other id always takes the lock.
        if !self.raw.is_open() {
            return Err(Refusal::Closed);
        }
        if source == IdSource::Caller {
            return register_miss(self, id, bytes, None, on_conflict);
        }
        match self.raw.find_hashed(bytes) {
            Ok(_) => Ok(Registered::AlreadyPresent),
            Err(hash) => register_miss(self, id, bytes, Some(hash), on_conflict),
        }
    }

    /// `find_hit` just missed: straight to the lock (a second lock-free
    /// probe would read the same bucket and miss again, but for an insert
    /// in between, which the locked re-check finds anyway).
    fn register_after_miss(
        &self,
        id: u64,
        bytes: &[u8],
        probe: Probe,
        on_conflict: impl FnOnce(&[u8]),
    ) -> Result<Registered, Refusal> {
        let hash = probe.0.unwrap_or_else(|| self.raw.bytes_hash(bytes));
        register_miss(self, id, bytes, Some(hash), on_conflict)
    }

    /// One writer lock for every miss: with two threads filling one NC,
    /// the lock's line and what a miss writes (the log's end, the writer's
    /// state, the counters) moved between cores for each miss. The bytes'
    /// hashes are computed first, outside the lock, a step of them at a
    /// time.
    fn register_misses(
        &self,
        misses: &[Miss<'_>],
        mut on_conflict: impl FnMut(usize, &[u8]),
    ) -> Result<(), (usize, Refusal)> {
        const STEP: usize = 64;
        let mut hashes = [0u64; STEP];
        for (step, misses) in misses.chunks(STEP).enumerate() {
            let first = step * STEP;
            for (hash, miss) in hashes.iter_mut().zip(misses) {
                *hash = self.raw.bytes_hash(miss.bytes);
            }
            let mut writer = self.raw.write();
            if !self.raw.is_open() {
                return Err((first, Refusal::Closed));
            }
            for (at, (miss, &hash)) in misses.iter().zip(&hashes).enumerate() {
                let at = first + at;
                register_locked(self, &mut writer, miss.id, miss.bytes, Some(hash), |kept| {
                    on_conflict(at, kept)
                })
                .map_err(|refusal| (at, refusal))?;
            }
        }
        Ok(())
    }

    fn with_entry<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        // `find_by_id` holds no lock when it returns: `f` may call back into
        // the db.
        self.raw.find_by_id(id).map(|entry| f(entry.bytes()))
    }

    /// No copy: `with_entry` already calls `f` with no lock held.
    fn with_entry_unlocked<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.with_entry(id, f)
    }

    fn visit_since(&self, from: usize, mut f: impl FnMut(u64, &[u8])) -> Option<usize> {
        if !self.raw.is_open() {
            return None;
        }
        Some(
            self.raw
                .for_each_since(from, |entry| f(entry.id(), entry.bytes())),
        )
    }

    fn set_open(&self, open: bool) {
        // Under the writer lock, so that no miss in progress inserts into a
        // shard that `close_nc` has returned from closing.
        self.raw.write().set_open(open);
    }

    fn is_open(&self) -> bool {
        self.raw.is_open()
    }

    fn stats(&self) -> ShardStats {
        ShardStats {
            entries: self.raw.len(),
            bytes: self.raw.bytes(),
        }
    }
}

/// The miss path, out of line so the hit path stays small: take the NC's
/// writer lock, re-check by id (another thread may have inserted, the id may
/// be held by other bytes, or a split may have hidden the entry from a
/// lock-free probe), then insert. `by_bytes` is the bytes' hash
/// ([`RawShard::bytes_hash`]) if `id` is the db's id of `bytes`
/// (`IdSource::Hash`), so that the entry is indexed by its bytes too.
#[cold]
#[inline(never)]
fn register_miss(
    shard: &OptimisticShard,
    id: u64,
    bytes: &[u8],
    by_bytes: Option<u64>,
    on_conflict: impl FnOnce(&[u8]),
) -> Result<Registered, Refusal> {
    let mut writer = shard.raw.write();
    if !shard.raw.is_open() {
        return Err(Refusal::Closed);
    }
    register_locked(shard, &mut writer, id, bytes, by_bytes, on_conflict)
}

/// [`register_miss`] under the writer lock, the shard open.
#[inline]
fn register_locked(
    shard: &OptimisticShard,
    writer: &mut WriteGuard<'_>,
    id: u64,
    bytes: &[u8],
    by_bytes: Option<u64>,
    on_conflict: impl FnOnce(&[u8]),
) -> Result<Registered, Refusal> {
    if let Some(entry) = writer.find_by_id(id) {
        let outcome = compare(entry.bytes(), bytes, on_conflict);
        if outcome == Registered::AlreadyPresent && by_bytes.is_some() {
            writer
                .index_by_bytes(entry)
                .map_err(|_| Refusal::OutOfMemory)?;
        }
        return Ok(outcome);
    }
    check_cap(writer.bytes(), shard.raw.byte_cap(), bytes.len())?;
    writer
        .insert_hashed(id, bytes, by_bytes)
        .map_err(|_| Refusal::OutOfMemory)?;
    Ok(Registered::Inserted)
}
