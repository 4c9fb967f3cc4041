//! A shard's by-id direction and walks: the by-id map settled from the
//! log by whoever reads that direction first (under the map's exclusive
//! lock, which the writer never takes on a miss), entries found by their
//! id without an exclusive lock, and walks of the log up to where the map
//! is settled, skipping shadowed entries (the parent module's protocol).

use super::RawShard;
use crate::raw::alloc::AllocError;
use crate::raw::optimistic::by_id::IdMap;
use crate::raw::optimistic::log::{Log, LogEnd, Ref};
use crate::raw::optimistic::record::Entry;
use crate::raw::sizes::READ_LAG;
use crate::sync::{self, RwLock};

impl RawShard {
    /// Entries and bytes of string data held: [`len`](Self::len) and
    /// [`bytes`](Self::bytes) less the shadowed entries found by the last
    /// [`settle`](Self::settle).
    pub(crate) fn held(&self) -> (usize, usize) {
        let (entries, bytes) = (self.len(), self.bytes());
        let Some((_, side)) = self.published_side() else {
            return (entries, bytes);
        };
        let (shadowed, shadowed_bytes) = sync::read(&side.map).shadowed();
        (
            entries.saturating_sub(shadowed),
            bytes.saturating_sub(shadowed_bytes),
        )
    }

    /// Calls `f` on every entry from log position `from` up to where the
    /// by-id map is settled ([`settle`](Self::settle)), but the shadowed
    /// ones (whose id an earlier entry holds): slab by slab, newest first
    /// within a slab. Returns the position after them (`from` if the map
    /// is settled no further). The log is read without a lock, under the
    /// map's shared lock, which holds settles off. `0` is the start; any
    /// other `from` must be a value this shard returned.
    pub(crate) fn for_each_since(&self, from: usize, mut f: impl FnMut(Entry<'_>)) -> usize {
        let from = Ref::from_bits(u32::try_from(from).unwrap_or(u32::MAX));
        let log = &self.hot.log;
        let Some((_, side)) = self.published_side() else {
            return from.to_bits() as usize;
        };
        let map = sync::read(&side.map);
        let to = map.synced().max(from);
        // `synced` was stored under the exclusive lock after a settle
        // acquired it as the log's end, and this thread acquired the lock.
        log.walk_between(from, to, |at, entry| {
            if !map.is_shadowed(at) {
                f(entry);
            }
        });
        to.to_bits() as usize
    }

    /// Settles the by-id map up to the log's published end (`by_id`):
    /// `conflict(id, kept, rejected)` is called for each entry found
    /// holding an id that an earlier entry holds with other bytes. Takes
    /// the map's exclusive lock, unless it is settled already. On an
    /// allocation failure the map is left empty (correct, slower to read)
    /// and the entries unsettled.
    pub(crate) fn settle(&self, conflict: impl FnMut(u64, &[u8], &[u8])) -> Result<(), AllocError> {
        self.settle_past(0, conflict)
    }

    /// [`settle`](Self::settle) if the map lags [`READ_LAG`] entries or
    /// more behind the log: what a reader needs so that its walk of what
    /// the map lacks stays short, without taking the exclusive lock for
    /// every few entries a writer appends meanwhile.
    pub(crate) fn settle_lagging(
        &self,
        conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<(), AllocError> {
        self.settle_past(READ_LAG, conflict)
    }

    /// [`settle`](Self::settle) if the map lags `lag` entries or more (and
    /// at least one) behind the log.
    fn settle_past(
        &self,
        lag: usize,
        conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<(), AllocError> {
        let log = &self.hot.log;
        let Some((end, side)) = self.published_side() else {
            return Ok(());
        };
        {
            let map = sync::read(&side.map);
            // The counter may run ahead of `end`: a heuristic, the walk of
            // what the map lacks is exact either way.
            if map.synced() == end || self.len().saturating_sub(map.settled_entries()) < lag {
                return Ok(());
            }
        }
        side.settle(
            log,
            &self.end,
            || self.len(),
            |id| self.id_hash(id),
            conflict,
        )
    }

    /// Settles the map, ignoring conflicts, then calls `f` on every entry
    /// the walk from the start visits.
    #[cfg(test)]
    pub(crate) fn for_each(&self, f: impl FnMut(Entry<'_>)) {
        self.settle(|_, _, _| {}).expect("memory for the map");
        self.for_each_since(0, f);
    }

    /// The entry stored under `id`, without the writer lock: the by-id map
    /// under its shared lock, released before returning (entries are
    /// immutable and live as long as the shard), then the entries the map
    /// does not hold yet, walked lock-free. Finds every entry published
    /// before the call.
    pub(crate) fn find_by_id(&self, id: u64) -> Option<Entry<'_>> {
        self.find_by_id_with(id, IdMap::find_shared)
    }

    /// The entry stored under `id` if the by-id map holds it, without
    /// settling the map or walking what it lacks, and so without a store
    /// to any line the writer writes: an entry found holds its id first
    /// (the map holds a prefix of the log, each id under its earliest
    /// entry), and `None` does not say that the shard lacks `id`
    /// ([`find_by_id`](Self::find_by_id) after a settle does).
    pub(crate) fn find_mapped_by_id(&self, id: u64) -> Option<Entry<'_>> {
        self.find_by_id_with(id, IdMap::find_mapped)
    }

    /// The entry that `find` (a way to look `id` up in the by-id side)
    /// names, once an entry is published.
    #[inline]
    fn find_by_id_with(
        &self,
        id: u64,
        find: impl FnOnce(&RwLock<IdMap>, &Log, &LogEnd, u64, u64) -> Option<Ref>,
    ) -> Option<Entry<'_>> {
        let log = &self.hot.log;
        let (_, side) = self.published_side()?;
        let at = find(&side.map, log, &self.end, id, self.id_hash(id))?;
        // SAFETY: a ref to a published record, acquired through the map's
        // lock or the log's end.
        Some(unsafe { log.entry(at) })
    }
}
