//! All of the crate's `unsafe` code outside the C ABI (the `papaya`
//! pattern): the lock-free shard behind the optimistic strategy.
//!
//! The safe API this module exports is small: [`RawShard`] finds entries with
//! acquire loads only, and inserts under its writer lock. Everything that must
//! hold for that to be sound is argued at each `unsafe` block and in
//! `docs/design.md`, and checked by Miri (`cargo +nightly miri test --lib`) and
//! loom (`loom-tests/`).

mod shard;

pub(crate) use self::shard::{bytes_eq, Entry, RawShard};
