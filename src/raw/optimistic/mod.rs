//! The optimistic strategy's shard:
//!
//! * [`record`]: the layout of one entry (length, id, bytes);
//! * [`log`]: the records in insertion order, in fixed-size slabs, walkable
//!   without a lock;
//! * [`table`]: the by-bytes index that hits read without a lock, grown by
//!   linear hashing; [`blocks`]: its buckets, segments, overflow pools and
//!   directories, owned by its writer;
//! * [`by_id`]: the by-id map, read under a shared lock, and the id
//!   filter, under the writer lock; [`id_table`]: the map's table;
//! * [`shard`]: them together with the writer lock;
//! * [`witness`]: in loom builds only, loom-tracked cells standing in for
//!   the records' bytes, so that the models see their publication.

mod blocks;
mod by_id;
mod id_table;
mod log;
mod record;
mod shard;
mod table;
mod witness;

pub(crate) use self::shard::{RawShard, WriteGuard};
