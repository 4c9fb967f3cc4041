//! A snapshot's walk of the open NCs ([`Whole`]): every entry and every
//! conflict, into a [`Builder`]. A delta's walk, which starts each NC where
//! a cursor left it, is `cursor::DeltaWalk`.

use super::{Builder, Snapshot};
use crate::conflict::ConflictLog;
use crate::nc::NcWalk;
use crate::strategy::shard::ShardStats;

/// A snapshot's walk: every entry of every open NC, and all their conflicts.
pub(crate) struct Whole(Builder);

impl Whole {
    /// A walk whose builder is sized for `totals` (the NCs' counters, exact
    /// when nothing interns), so that staging never regrows.
    pub(crate) fn with_capacity(totals: ShardStats) -> Self {
        Whole(Builder::with_capacity(totals.entries, totals.bytes))
    }

    /// The snapshot of what the walk met.
    pub(crate) fn finish(self) -> Snapshot {
        self.0.finish()
    }
}

impl NcWalk for Whole {
    fn from(&self, _nc: usize) -> usize {
        0
    }

    fn entry(&mut self, _nc: usize, id: u64, bytes: &[u8]) {
        self.0.push(id, bytes);
    }

    fn walked(&mut self, _nc: usize, _reached: usize, conflicts: &ConflictLog) {
        conflicts.for_each(|c| self.0.add_conflict(c.to_conflict()));
        self.0.add_conflicts_dropped(conflicts.dropped());
    }
}
