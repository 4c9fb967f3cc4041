//! The striped strategy: the optimistic strategy's shard, moved to stripes
//! after its eighth entry rather than when a miss meets contention
//! (`OptimisticShard`'s `STRIPED_AFTER`).
//!
//! A comparison strategy, and the one that runs the moved path through
//! every test, fuzz target and loom model the crate's list feeds (in loom
//! builds it moves after its first entry, as the models intern two to
//! four names): the default moves an NC only when two writers meet in it,
//! which a test of one thread never does.

use super::optimistic::OptimisticShard;
use super::shard::Sealed;
use super::Strategy;

/// The striped strategy: the [optimistic strategy](super::OptimisticStrategy)
/// whose NCs move to stripes once they hold eight entries, contended or
/// not. An NC's stripes (16, each with its own writer lock, log and
/// by-bytes table, picked by bits of the bytes' hash) take every later
/// miss: a hit probes the frozen first shard, then the stripe its hash
/// picks; a miss takes only its stripe's lock and numbers its record
/// from one NC-wide counter, and the by-id direction is settled across
/// the stripes in the numbers' order when it is read, so the first
/// string of an id wins and the conflicts are recorded in the order the
/// calls were made, as under one lock. An NC with a byte cap or a slab
/// limit never moves.
///
/// Costs beside the optimistic strategy at one thread: 4 bytes a record
/// (its number), a by-id map of about 20 bytes an entry once read, 16
/// small shards an NC, and a second probe for the names interned after
/// the move.
#[derive(Debug, Clone, Copy, Default)]
pub struct StripedStrategy;

impl Strategy for StripedStrategy {
    const NAME: &'static str = "striped";
    const FINDS_CONFLICTS_LAZILY: bool = true;
    type Shard = OptimisticShard<MOVE_AFTER>;
}

/// The entries a striped NC holds before its next miss moves it: 8; 1 in
/// loom builds, so that every generic model (they intern two to four
/// names) runs the moved path, not only those that intern eight first.
const MOVE_AFTER: usize = if cfg!(interner_loom) { 1 } else { 8 };

impl Sealed for StripedStrategy {}
