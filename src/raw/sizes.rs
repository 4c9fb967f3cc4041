//! Every size that loom builds (`--cfg interner_loom`) shrink, in one place
//! (`sharded-slab`'s `cfg.rs` pattern). A loom model interns a handful of
//! names, so these are cut until those few cross slabs, overflow and split
//! buckets, grow directories, rebuild maps and grow tables: the paths the
//! models must reach. Each is defined once, as
//! `if cfg!(interner_loom) { loom's } else { the product's }`; the code that
//! relies on a size keeps the checks it needs beside it.

// The optimistic shard (`optimistic`).

/// Bytes of records a log slab holds (`log.rs`): a `bumpalo::Bump` of this
/// capacity is one 16 KiB block with the arena's footer and the
/// allocator's overhead; 40 in loom builds, so that models cross slabs.
pub(crate) const SLAB_BYTES: usize = if cfg!(interner_loom) {
    40
} else {
    16 * 1024 - 64
};

/// Slabs smaller than [`SLAB_BYTES`] that a log with no slab limit opens
/// first (`log.rs`'s `slab_capacity`): the `k`-th a block of 16 KiB
/// halved `SMALL_SLABS - k` times (1, 2, 4 and 8 KiB), less the block
/// overhead that [`SLAB_BYTES`] leaves of 16 KiB, so that a log
/// of a few records, as each of a moved NC's 64 stripes begins, holds 1
/// KiB, not 16. None in loom builds: the models' slabs are
/// [`SLAB_BYTES`] from the first, as their state space was measured.
pub(crate) const SMALL_SLABS: usize = if cfg!(interner_loom) { 0 } else { 4 };

/// Slot words of a by-bytes bucket (`table.rs`), which with its link make
/// one 64-byte line; 2 in loom builds, so that models overflow buckets.
pub(crate) const WORDS: usize = if cfg!(interner_loom) { 2 } else { 7 };

/// Buckets of a by-bytes segment (`table.rs`), 4 KiB; 1 in loom builds, so
/// that every split needs a segment and models grow the directory.
pub(crate) const SEGMENT_BUCKETS: usize = if cfg!(interner_loom) { 1 } else { 64 };

/// Entries per by-bytes bucket, on average, before a split (`table.rs`):
/// a bucket's slots (why: `docs/history.md`); 1 in loom builds, so that
/// every insert past the first splits.
pub(crate) const LOAD: usize = if cfg!(interner_loom) { 1 } else { 7 };

/// Entries per by-bytes bucket, on average, before a split, once a table
/// has twice [`LARGE_TABLE_BUCKETS`] (`table.rs`'s `capacity_of`): fewer
/// chains overflow, so that a miss into a table far past the caches loads
/// a second random line less often, for some 2 bytes an entry more of
/// buckets (why: `docs/history.md`, "Five entries a bucket in a large
/// table"). [`LOAD`] in loom builds, whose tables never grow that far.
pub(crate) const LARGE_LOAD: usize = if cfg!(interner_loom) { LOAD } else { 5 };

/// Buckets from which a table's load falls from [`LOAD`] towards
/// [`LARGE_LOAD`]: 196,608, some 1.38 million entries at [`LOAD`], past
/// the 10^6 entries an NC that the memory goal covers.
pub(crate) const LARGE_TABLE_BUCKETS: usize = 3 << 16;

/// Buckets a growth step splits before it publishes the shape, which is on
/// the line every hit reads (`table/growth.rs`); 1 in loom builds, so that
/// every split publishes.
pub(crate) const SPLITS_PER_STEP: usize = if cfg!(interner_loom) { 1 } else { 8 };

// A step splits each bucket at most once: a table has at least
// `SEGMENT_BUCKETS` buckets, so a level has at least that many to split.
const _: () = assert!(SPLITS_PER_STEP <= SEGMENT_BUCKETS);

/// Slots of each 16 that the by-id table fills at most (`id_table.rs`); 3
/// in loom builds, so that a model's fourth entry makes a settle rebuild
/// its shard's first map (`optimistic_resolve_races_rebuild`).
pub(crate) const FILL: usize = if cfg!(interner_loom) { 3 } else { 15 };

/// Entries a reader (`resolve`, `lookup`) lets the by-id map lag behind
/// the log before it settles it (`shard/reads.rs`): fewer are walked instead; 2
/// in loom builds, so that models reach both.
pub(crate) const READ_LAG: usize = if cfg!(interner_loom) { 2 } else { 64 };

/// Whether every shard's by-bytes and by-id placement uses
/// `HashSeed::FIXED` (`bytes.rs`) instead of a random seed: in loom builds,
/// so that models can pick names by where they land (`loom_placement`).
pub(crate) const FIXED_SEED: bool = cfg!(interner_loom);

/// Inserts in a row after which a thread's next intern is predicted to
/// miss (the optimistic strategy's `miss_run`: why this many); 2 in loom
/// builds, so that a model's thread reaches the prediction after two.
pub(crate) const PREDICT_AFTER: u32 = if cfg!(interner_loom) { 2 } else { 8 };

// The lock-free strategy (`lock_free`).

/// The first order segment's length as a power of two (`order.rs`); 1 in
/// loom builds (2 positions), so that models publish segments.
#[cfg(feature = "lock-free")]
pub(crate) const FIRST_BITS: u32 = if cfg!(interner_loom) { 1 } else { 4 };

/// Order segments (`order.rs`): room for `2^(FIRST_BITS + SEGMENTS) -
/// 2^FIRST_BITS` positions, over 10^12; 4 in loom builds (30 positions,
/// more than a model claims), so that an order's directory is four atomics
/// for loom to track.
#[cfg(feature = "lock-free")]
pub(crate) const SEGMENTS: usize = if cfg!(interner_loom) { 4 } else { 36 };

/// Slots of the smallest id table (`lock_free/table.rs`); 2 in loom builds,
/// so that models grow the table.
#[cfg(feature = "lock-free")]
pub(crate) const MIN_SLOTS: usize = if cfg!(interner_loom) { 2 } else { 8 };

/// Slots one insert migrates when it meets a growing id table
/// (`lock_free/table.rs`); 1 in loom builds, so that racing inserts share
/// a migration.
#[cfg(feature = "lock-free")]
pub(crate) const CHUNK: usize = if cfg!(interner_loom) { 1 } else { 64 };

/// The hasher placing ids in the lock-free table (`lock_free/table.rs`):
/// seeded per table, so that caller-chosen ids cannot be crafted to share a
/// probe sequence; fixed in loom builds, so that models can pick where ids
/// land. (A type, so a `cfg` pair.)
#[cfg(all(feature = "lock-free", not(interner_loom)))]
pub(crate) type Seeds = foldhash::fast::RandomState;
#[cfg(all(feature = "lock-free", interner_loom))]
pub(crate) type Seeds = foldhash::fast::FixedState;
