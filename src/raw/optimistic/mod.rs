//! The optimistic strategy's shard:
//!
//! * [`record`]: the layout of one entry (length, id, bytes);
//! * [`log`]: the records in fixed-size slabs, slab by slab in insertion
//!   order and newest first within a slab, walkable without a lock;
//! * [`table`]: the by-bytes index that hits read without a lock, grown by
//!   linear hashing; [`blocks`]: its buckets, segments, overflow pools and
//!   directories, owned by its writer;
//! * [`by_id`]: the by-id map, settled from the log when the by-id
//!   direction is read (misses never touch it), read under a shared lock;
//!   [`id_table`]: the map's table;
//! * [`shard`]: them together with the writer lock, its hits and locks
//!   (`shard.rs`), its by-id direction and walks (`shard/reads.rs`) and
//!   its writer's guard (`shard/write.rs`);
//! * `striped`: several shards as the stripes of one NC, their records
//!   numbered from one counter, one by-id map over them, after a frozen
//!   shard's entries if the NC moved to stripes when it met contention;
//! * [`witness`]: in loom builds only, loom-tracked cells standing in for
//!   the records' bytes, so that the models see their publication.

mod blocks;
mod by_id;
mod id_table;
mod log;
mod record;
mod shard;
mod striped;
mod table;
mod witness;

pub(crate) use self::log::{AppendError, MAX_SLABS};
pub(crate) use self::record::Entry;
pub(crate) use self::shard::{ByBytes, Probe, RawShard, WriteGuard};
pub(crate) use self::striped::{Place, Refused, StripeGuard, StripedShard};
