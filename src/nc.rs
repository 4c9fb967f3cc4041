//! One NeuronCore's context: its shard and the conflicts it has seen.

use crate::conflict::ConflictLog;
use crate::strategy::imp::{Refusal, Shard, ShardConfig, ShardStats};
use crate::strategy::Strategy;

/// One NC's slice of the db (the reference's `CONTEXTS[nc]`, less the trace
/// ring): the shard, whose strategy decides how it is synchronised, and the
/// log of conflicts found in it.
pub(crate) struct NcContext<S: Strategy> {
    pub(crate) shard: S::Shard,
    pub(crate) conflicts: ConflictLog,
}

impl<S: Strategy> NcContext<S> {
    /// An open NC whose conflict log stores at most `conflict_budget`
    /// bytes.
    pub(crate) fn new(config: &ShardConfig, conflict_budget: usize) -> Result<Self, Refusal> {
        Ok(NcContext {
            shard: S::Shard::new(config)?,
            conflicts: ConflictLog::new(conflict_budget),
        })
    }
}

/// Entries and bytes summed over `contexts`, in one pass (a string held by
/// two NCs counts twice): what a snapshot or a delta of them is sized from.
pub(crate) fn totals<S: Strategy>(contexts: &[NcContext<S>]) -> ShardStats {
    contexts
        .iter()
        .map(|ctx| ctx.shard.stats())
        .fold(ShardStats::default(), |sum, nc| ShardStats {
            entries: sum.entries + nc.entries,
            bytes: sum.bytes + nc.bytes,
        })
}
