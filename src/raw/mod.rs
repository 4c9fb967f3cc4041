//! All of the crate's `unsafe` code outside the C ABI (the `papaya`
//! pattern): the lock-free shard behind the optimistic strategy.
//!
//! * [`record`]: the layout of one entry (length, id, bytes);
//! * [`log`]: the records in insertion order, in fixed-size slabs, walkable
//!   without a lock;
//! * [`table`]: the by-bytes index that hits read without a lock, grown by
//!   linear hashing;
//! * [`shard`]: the three together with the writer lock and the by-id map;
//! * [`witness`]: in loom builds only, loom-tracked cells standing in for
//!   the records' bytes, so that the models see their publication.
//!
//! The safe API this module exports is small: [`RawShard`] finds entries by
//! their bytes with acquire loads only, walks them without a lock, and does
//! everything else under its writer lock. Everything that must hold for that
//! to be sound is argued at each `unsafe` block and in `docs/design.md`, and
//! checked by Miri (`cargo +nightly miri test --lib`) and loom
//! (`loom-tests/`).

mod alloc;
mod log;
mod record;
mod shard;
mod table;
mod witness;

pub(crate) use self::record::Entry;
pub(crate) use self::shard::{bytes_eq, RawShard};
