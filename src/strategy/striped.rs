//! The striped strategy: the optimistic strategy's hit path over an NC
//! split into stripes with a lock each, so that two writers into one NC
//! rarely meet (`raw::optimistic::striped`).
//!
//! A comparison strategy for now: it measures what stripes give two and
//! more writers into one NC, and runs the numbered records and the settle
//! across stripes through every test, before the default strategy moves
//! to stripes when an NC meets contention (`docs/history.md`, Next).

use super::admission::{check_cap, compare};
use super::shard::{
    lookup_by_id, ConflictSink, FastPath, IdSource, Interned, Key, Refusal, Sealed, Shard,
    ShardConfig, ShardStats,
};
use super::{Registered, Strategy};
use crate::raw::{AppendError, ByBytes, StripedShard, STRIPES};

/// The striped strategy: a hit is the optimistic strategy's (a fast hash
/// of the bytes, acquire loads in the stripe the hash picks, one compare;
/// no lock, no read-modify-write, no store, no SipHash). A miss takes
/// only its stripe's writer lock (16 stripes an NC), numbers its record
/// from the NC's counter (one `fetch_add`) and appends it to the stripe.
/// The by-id direction is settled from every stripe in the numbers'
/// order when it is read, so the first string of an id wins and the
/// conflicts are recorded in the order the calls were made, across
/// stripes, as under one lock. An NC with a byte cap or a slab limit has
/// one stripe, so that its limits stay the NC's.
///
/// Costs beside the optimistic strategy: 4 bytes a record (its number),
/// a by-id map of about 20 bytes an entry once read, and 16 small shards
/// an NC written to.
#[derive(Debug, Clone, Copy, Default)]
pub struct StripedStrategy;

impl Strategy for StripedStrategy {
    const NAME: &'static str = "striped";
    const FINDS_CONFLICTS_LAZILY: bool = true;
    type Shard = StripedNcShard;
}

impl Sealed for StripedStrategy {}

/// The striped strategy's shard.
pub struct StripedNcShard {
    raw: StripedShard,
    byte_cap: usize,
}

impl core::fmt::Debug for StripedNcShard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StripedNcShard")
            .field("open", &self.raw.is_open())
            .field("byte_cap", &self.byte_cap)
            .finish_non_exhaustive()
    }
}

impl Shard for StripedNcShard {
    type ContextAlign = ();

    fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        let limited = config.byte_cap != usize::MAX || config.slab_limit != usize::MAX;
        let stripes = if limited { 1 } else { STRIPES };
        let raw = StripedShard::try_new(
            stripes,
            config.initial_capacity,
            config.byte_cap,
            config.slab_limit,
        )
        .map_err(|_| Refusal::OutOfMemory)?;
        Ok(StripedNcShard {
            raw,
            byte_cap: config.byte_cap,
        })
    }

    #[inline]
    fn intern(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned {
        let exact =
            key.wants_outcome() || key.source() == IdSource::Caller || self.byte_cap != usize::MAX;
        if exact {
            return self.intern_exact(key, conflicts);
        }
        let hash = match key.placement() {
            Some(hash) => hash,
            None => match self.find_hit(key.bytes) {
                Ok(id) => return Ok((id, Registered::AlreadyPresent)),
                Err(placed) => placed.unwrap_or_else(|| self.raw.bytes_hash(key.bytes)),
            },
        };
        self.intern_miss(key, hash, conflicts)
    }

    fn settle(&self, conflicts: ConflictSink<'_>) {
        // An allocation failure leaves the records for the next settle.
        let _ = self
            .raw
            .settle(|id, kept, rejected| conflicts.record(id, kept, rejected));
    }

    /// A full settle: what the by-id map lacks is not walked, since a
    /// later settle may meet a smaller number published meanwhile.
    fn settle_for_reads(&self, conflicts: ConflictSink<'_>) {
        self.settle(conflicts);
    }

    fn lookup(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Option<u64> {
        self.settle(conflicts);
        lookup_by_id(self, key)
    }

    /// From the by-id map as settled: the db settles first
    /// ([`settle_for_reads`](Shard::settle_for_reads)) when it lacks `id`.
    fn resolve<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        // No lock is held when `f` runs.
        self.raw.find_mapped(id).map(|(_, entry)| f(entry.bytes()))
    }

    fn resolve_settled<R, F: FnOnce(&[u8]) -> R>(&self, id: u64, f: F) -> Result<R, F> {
        match self.raw.find_mapped(id) {
            Some((_, entry)) => Ok(f(entry.bytes())),
            None => Err(f),
        }
    }

    /// No copy: `resolve` already calls `f` with no lock held.
    fn resolve_unlocked<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.resolve(id, f)
    }

    fn walk(&self, from: usize, mut f: impl FnMut(u64, &[u8])) -> Option<usize> {
        if !self.raw.is_open() {
            return None;
        }
        Some(
            self.raw
                .walk_settled(from, |entry| f(entry.id(), entry.bytes())),
        )
    }

    fn set_open(&self, open: bool) {
        self.raw.set_open(open);
    }

    fn is_open(&self) -> bool {
        self.raw.is_open()
    }

    /// Exact as of the last settle (the db settles before it reads them).
    fn stats(&self) -> ShardStats {
        let (entries, bytes) = self.raw.held();
        ShardStats { entries, bytes }
    }
}

impl FastPath for StripedNcShard {
    /// The optimistic hit, in the stripe the bytes' hash picks.
    #[inline]
    fn find_hit(&self, bytes: &[u8]) -> Result<u64, Option<u64>> {
        self.raw.find_open(bytes).map(|entry| entry.id())
    }
}

impl StripedNcShard {
    /// A plain intern's miss (the db's id of the bytes, no outcome read,
    /// no cap): under the stripe's lock, the probe again, then the
    /// numbered append. Conflicts are found by the next settle.
    #[inline(never)]
    fn intern_miss(&self, key: Key<'_>, hash: u64, conflicts: ConflictSink<'_>) -> Interned {
        let id = key.id()?;
        let mut stripe = self.raw.write(hash);
        if !stripe.is_open() {
            return Err(Refusal::Closed);
        }
        let by_bytes = match stripe.find_by_hash(hash, key.bytes) {
            Ok(entry) => return Ok((entry.id(), Registered::AlreadyPresent)),
            Err(by_bytes) => by_bytes,
        };
        let inserted = stripe
            .insert(id, key.bytes, Some(by_bytes))
            .map_err(|refused| refusal(refused, stripe.slab_limit()))?;
        drop(stripe);
        if inserted.settle {
            self.settle(conflicts);
        }
        Ok((id, Registered::Inserted))
    }

    /// An intern whose outcome must be exact when it returns (the caller
    /// reads it, chose the id, or the NC has a cap). Under the stripe's
    /// lock, the map settled: an entry that holds the id answers. Else
    /// the record is appended and published, the lock released, and the
    /// map settled again: the caller's record is taken (numbered before
    /// that settle's bound), and a concurrent one of the id with a smaller
    /// number wins over it, as it may. With one stripe (a capped NC),
    /// nothing is appended between the first settle and the insert.
    fn intern_exact(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned {
        let id = key.id()?;
        let record = |id, kept: &[u8], rejected: &[u8]| conflicts.record(id, kept, rejected);
        let hash = key
            .placement()
            .unwrap_or_else(|| self.raw.bytes_hash(key.bytes));
        let mut stripe = self.raw.write(hash);
        if !stripe.is_open() {
            return Err(Refusal::Closed);
        }
        self.raw.settle(record).map_err(|_| Refusal::OutOfMemory)?;
        if let Some((_, kept)) = self.raw.find_mapped(id) {
            return Ok((id, compare(kept.bytes(), key.bytes, id, conflicts)));
        }
        check_cap(stripe.bytes(), self.byte_cap, key.bytes.len())?;
        // Indexed by its bytes if `id` is the db's id of them. The stripe
        // holds no entry of these bytes: every entry of the stripe is
        // settled (numbered before the settle above, under this lock), and
        // the map holds no entry of the id.
        let by_bytes = (key.source() == IdSource::Hash).then(|| ByBytes::hash(hash));
        let inserted = stripe
            .insert(id, key.bytes, by_bytes)
            .map_err(|refused| refusal(refused, stripe.slab_limit()))?;
        drop(stripe);
        self.raw.settle(record).map_err(|_| Refusal::OutOfMemory)?;
        let outcome = match self.raw.find_mapped(id) {
            Some((place, _)) if place == inserted.place => Registered::Inserted,
            // The settle recorded the conflict when it took the record.
            Some((_, kept)) if !crate::raw::bytes_eq(kept.bytes(), key.bytes) => {
                Registered::Conflict
            }
            Some(_) => Registered::AlreadyPresent,
            // Not reached: a settle takes every record published before
            // it, and the caller's stripe has no unpublished one before it.
            None => {
                debug_assert!(false, "a settle left the caller's record");
                Registered::Inserted
            }
        };
        Ok((id, outcome))
    }
}

/// The refusal of an append the stripe refused.
fn refusal(refused: AppendError, slab_limit: usize) -> Refusal {
    match refused {
        AppendError::OutOfMemory => Refusal::OutOfMemory,
        AppendError::Full => Refusal::SlabsExhausted { slabs: slab_limit },
    }
}
