//! All of the crate's `unsafe` code outside the C ABI crate (the `papaya`
//! pattern; the crate root denies `unsafe` everywhere else):
//!
//! * [`optimistic`]: the lock-free shard behind the optimistic strategy: the
//!   records in fixed-size slabs, walkable without a lock (slab by slab,
//!   newest first within a slab); the by-bytes index that hits read without
//!   a lock, grown by linear hashing; and the two together with the writer
//!   lock and the by-id map, settled from the log off the miss path;
//! * [`lock_free`]: the lock-free strategy's shard: an id → entry table
//!   filled by compare-and-swap and grown cooperatively, and an append-only
//!   order array (feature `lock-free`);
//! * [`bytes`]: the fast seeded hash, the short-string compare and the
//!   prefetch hints that hits use;
//! * [`once_box`]: a heap value made at most once and read without a lock
//!   (each NC's context, made by its first write);
//! * [`alloc`]: fallible allocation, and [`AllocError`](alloc::AllocError),
//!   the one way this module says that memory ran out;
//! * [`mapping`]: a file mapped read-only, for the mapped snapshot reader.
//!
//! The safe API this module exports is small: [`RawShard`] finds entries by
//! their bytes with acquire loads only, walks them without a lock, and does
//! everything else under its writer lock. Everything that must hold for that
//! to be sound is argued at each `unsafe` block and in `docs/design.md`, and
//! checked by Miri (`cargo +nightly miri test --lib`) and loom
//! (`loom-tests/`).

mod alloc;
mod bytes;
#[cfg(feature = "lock-free")]
mod lock_free;
pub(crate) mod mapping;
mod once_box;
mod optimistic;
mod sizes;

/// Unit tests' fault injection ([`alloc::refusals`]): every fallible
/// allocation of `raw` on the arming thread fails.
#[cfg(test)]
pub(crate) use self::alloc::refusals;
pub(crate) use self::bytes::bytes_eq;
#[cfg(feature = "lock-free")]
pub(crate) use self::lock_free::{Inserted, RawLockFreeShard};
pub(crate) use self::once_box::OnceBox;
pub(crate) use self::optimistic::{AppendError, ByBytes, RawShard, WriteGuard, MAX_SLABS};
pub(crate) use self::optimistic::{Entry, Place, Probe, Refused, StripeGuard, StripedShard};
pub(crate) use self::sizes::PREDICT_AFTER;

/// Where the optimistic shard's by-bytes index places `bytes` in loom
/// builds (whose seed is fixed), so that the models can pick names that
/// land where they need them.
#[cfg(all(interner_loom, feature = "test-util"))]
pub(crate) fn loom_placement(bytes: &[u8]) -> u64 {
    bytes::hash_bytes(bytes, bytes::HashSeed::FIXED)
}
