//! One NeuronCore's context: its shard and the conflicts it has seen, made
//! by the NC's first write (`NcSlot`, a [`OnceBox`]: until then the NC reads
//! as open and empty); the walk of the open NCs that snapshots and deltas
//! share, and the one pass that sizes them.

use crate::conflict::ConflictLog;
use crate::raw::OnceBox;
use crate::strategy::shard::{Refusal, Shard, ShardConfig, ShardStats};
use crate::strategy::Strategy;

/// An NC's place in the db: its context, made by the first call that writes
/// to the NC (an intern, a register, a close or an open), so that an NC
/// that never sees a string costs the db one pointer, not a context and
/// whatever its shard allocates up front. Until made, an NC is open and
/// empty, and every read of it answers so.
pub(crate) type NcSlot<S> = OnceBox<NcContext<S>>;

/// One NC's slice of the db (the reference's `CONTEXTS[nc]`, less the trace
/// ring): the shard, whose strategy decides how it is synchronised, and the
/// log of conflicts found in it.
///
/// The shard comes first (`repr(C)`), and the context takes the alignment
/// the shard asks for ([`Shard::ContextAlign`]): a shard whose hot fields
/// open it (the optimistic one) gets them at a line's start, and the
/// conflict log still takes the room after the shard's last field, which
/// it could not if the shard's own alignment rounded its size up to whole
/// lines (the optimistic shard is 112 bytes, its context 128, two lines,
/// where it took three).
#[repr(C)]
pub(crate) struct NcContext<S: Strategy> {
    pub(crate) shard: S::Shard,
    pub(crate) conflicts: ConflictLog,
    _align: [<S::Shard as Shard>::ContextAlign; 0],
}

// The optimistic strategy's context: two lines with the NC's conflict
// log, what hits read starting a line, and the rest. 256 NCs hold one
// each. (Loom's atomics are larger.)
#[cfg(not(interner_loom))]
const _: () = {
    use crate::strategy::OptimisticStrategy;
    assert!(core::mem::size_of::<NcContext<OptimisticStrategy>>() == 128);
    assert!(core::mem::align_of::<NcContext<OptimisticStrategy>>() == 64);
    assert!(core::mem::offset_of!(NcContext<OptimisticStrategy>, shard) == 0);
};

impl<S: Strategy> NcContext<S> {
    /// An open NC, with no conflicts.
    pub(crate) fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        Ok(NcContext {
            shard: S::Shard::new(config)?,
            conflicts: ConflictLog::try_new().ok_or(Refusal::OutOfMemory)?,
            _align: [],
        })
    }
}

/// The contexts made among `slots`, with their NC indexes.
pub(crate) fn made<S: Strategy>(
    slots: &[NcSlot<S>],
) -> impl Iterator<Item = (usize, &NcContext<S>)> {
    slots
        .iter()
        .enumerate()
        .filter_map(|(nc, slot)| Some((nc, slot.get()?)))
}

/// Entries and bytes summed over `slots`, in one pass (a string held by
/// two NCs counts twice): what a snapshot or a delta of them is sized from.
pub(crate) fn totals<S: Strategy>(slots: &[NcSlot<S>]) -> ShardStats {
    made(slots)
        .map(|(_, ctx)| ctx.shard.stats())
        .fold(ShardStats::default(), |sum, nc| ShardStats {
            entries: sum.entries + nc.entries,
            bytes: sum.bytes + nc.bytes,
        })
}

/// What a walk of the open NCs ([`walk_open`]) does: a snapshot's, and a
/// delta's.
pub(crate) trait NcWalk {
    /// The insertion position to walk NC `nc` from.
    fn from(&self, nc: usize) -> usize;

    /// An entry of NC `nc`, in its shard's walk order ([`Shard::walk`]).
    fn entry(&mut self, nc: usize, id: u64, bytes: &[u8]);

    /// NC `nc` was open and is walked to insertion position `reached`;
    /// `conflicts` is its conflict log, read after the walk.
    fn walked(&mut self, nc: usize, reached: usize, conflicts: &ConflictLog);
}

/// Walks every open NC among `slots`, in NC order: the one walk of
/// snapshots and deltas (the caller holds the db's global lock under the
/// reference protocol). A closed NC is skipped, visiting nothing.
pub(crate) fn walk_open<S: Strategy>(slots: &[NcSlot<S>], walk: &mut impl NcWalk) {
    for (nc, ctx) in made(slots) {
        let from = walk.from(nc);
        if let Some(reached) = ctx.shard.walk(from, |id, bytes| walk.entry(nc, id, bytes)) {
            walk.walked(nc, reached, &ctx.conflicts);
        }
    }
}
