//! A concurrent string interner with deterministic 50-bit ids, sharded one
//! table per NeuronCore: a reimplementation of the interner inside the Neuron
//! runtime (`neuron_rustime::string_db`).
//!
//! # Usage
//!
//! ```
//! use interned_string_db::{get_id, InternedStringDb};
//!
//! let db = InternedStringDb::new(); // 256 NCs
//! let id = db.intern(3, "model_3/layer_41/tensor_1207").unwrap();
//! assert_eq!(id, get_id(b"model_3/layer_41/tensor_1207")); // the id is the hash
//! assert_eq!(db.intern(3, "model_3/layer_41/tensor_1207"), Ok(id)); // idempotent
//!
//! let snapshot = db.snapshot(); // every open NC merged
//! assert_eq!(snapshot.get_str(id), Some(Ok("model_3/layer_41/tensor_1207")));
//!
//! // Snapshots merge by union, and save to checksummed files
//! // (`Snapshot::save`, `Snapshot::load`; docs/snapshot-format.md).
//! let merged = interned_string_db::Snapshot::merge([&snapshot, &snapshot]);
//! assert_eq!(merged, snapshot);
//!
//! // A trace writer that flushes repeatedly takes deltas: each id once.
//! let mut cursor = interned_string_db::Cursor::new();
//! assert_eq!(db.delta(&mut cursor).len(), 1);
//! assert!(db.delta(&mut cursor).is_empty());
//! ```
//!
//! An id is `(SipHash-1-3(key 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1`
//! ([`get_id`]): a pure function of the bytes, the same in every process, so
//! a caller can emit it as a trace token without touching any table, and
//! merging shards is a deduplicating union, never a relabel. `0`
//! ([`INVALID_ID`]) is no string's id.
//!
//! # Strategies
//!
//! A [`Strategy`] decides how each NC's shard is synchronised:
//!
//! * [`OptimisticStrategy`] (the default): a string already in the NC's shard
//!   is found with **no lock, no atomic read-modify-write and no store to
//!   shared memory**, and without computing SipHash: a fast hash of the
//!   bytes, acquire loads of one bucket line, one full compare, and the stored
//!   id. Misses take a per-NC lock; entries are appended to the NC's log of
//!   fixed-size slabs and indexed by their bytes, and the index grows one
//!   bucket at a time without blocking readers. A miss does not look its
//!   id up: the NC's by-id map is settled from the log when the by-id
//!   direction is read (before a snapshot, a delta or the conflict list
//!   answers; a resolve once 64 entries are unsettled), and conflicts are
//!   found and recorded then
//!   ([`Strategy::FINDS_CONFLICTS_LAZILY`]). Resolving an id takes no lock
//!   of the writer's: a shared lock on the NC's by-id map.
//! * [`RwLockStrategy`]: the reference's protocol, faithfully: a futex
//!   `RwLock` per NC, taken for write on every intern (hit or miss) and for
//!   read by the merge, under a global `RwLock` taken for read across the
//!   merge. The compatibility mode, and the reference protocol: every
//!   behavioural test runs against every strategy, and
//!   `tests/differential.rs` compares each of the others against it, answer
//!   by answer.
//! * `LockFreeStrategy` (feature `lock-free`): no lock on any
//!   path, misses included: an insert is a compare-and-swap of the entry into
//!   an id-keyed table, which its inserters grow cooperatively; hits and
//!   `resolve` are acquire loads. The tables a growth leaves behind are freed
//!   by `reset` and drop.
//! * `ShardedLockStrategy` (feature `sharded-lock`) and
//!   `ParkingLotStrategy` (feature `parking-lot`): the same protocol on
//!   crossbeam's reader-scalable `ShardedLock` and on `parking_lot::RwLock`,
//!   so the benchmarks compare lock implementations and nothing else.
//! * `DashMapStrategy` and `ArcSwapStrategy` (features `dashmap` and
//!   `arc-swap`): a `DashMap` per NC, and a copy-on-write map per NC behind
//!   `arc-swap`; for comparison in the benchmarks (`docs/benchmarks.md` says
//!   when each strategy wins, with the contention counters that explain it).
//!
//! The default features are the product: the optimistic and reference
//! strategies, snapshots and files (always built) and `pinning`, which adds
//! `InternedStringDb::pin_current_thread` (`core_affinity`). The comparison strategies are opt-in features, each
//! adding its strategy and the crate it is built on (`lock-free` needs
//! none); `all-strategies` turns on all five. The C ABI
//! (`include/interned_string_db.h`) is a crate of its own,
//! `interned-string-db-capi` (`capi/` in the repository), built on this
//! crate's public API.
//!
//! ```
//! use interned_string_db::{Config, InternedStringDb, RwLockStrategy};
//! let compat: InternedStringDb<RwLockStrategy> = InternedStringDb::with_config(Config::new());
//! assert_eq!(compat.intern(0, "a"), Ok(933183196555764));
//! ```
//!
//! A large snapshot file read for a few names need not be loaded:
//! [`MappedSnapshot`] maps it, checks its header, and reads only what each
//! lookup needs (`verify` checks the rest on demand).
//!
//! Many names at once go through
//! [`intern_batch`](InternedStringDb::intern_batch), which looks them up with
//! their cache misses overlapped:
//!
//! ```
//! use interned_string_db::InternedStringDb;
//! let db = InternedStringDb::new();
//! let names = ["span/forward", "span/backward"];
//! let mut ids = [0; 2];
//! db.intern_batch(0, &names, &mut ids).unwrap();
//! assert_eq!(db.intern(0, "span/backward"), Ok(ids[1]));
//! ```
//!
//! Threads that emit for one NC can hold an [`NcHandle`]; worker threads can
//! bind themselves to NCs and CPUs with
//! [`pin_current_thread`](InternedStringDb::pin_current_thread). String
//! literals get compile-time ids with [`intern!`] and [`static_id!`].
//!
//! # Comparison
//!
//! Against the reference (`neuron_rustime::string_db`): the same ids, bit for
//! bit; the same shard and snapshot semantics; and in addition conflicts
//! recorded and reported rather than only logged, byte caps, poisoning
//! recovery, a hit path that takes no lock, and batch interning. Against
//! general-purpose interners (`lasso`, `ustr`, a `DashMap` or
//! `RwLock<HashMap>`): their keys are per-process (lasso, ustr) or need the
//! id computed first; ours are deterministic. `docs/benchmarks.md` has the
//! measured figures, side by side.
//!
//! # Safety and correctness
//!
//! All of this crate's `unsafe` code is in one module (`src/raw/`), each
//! block with its argument, checked by Miri: the crate root denies
//! `unsafe_code`, and only that module allows it. The protocols of our own code
//! have loom models (`loom-tests/`: the optimistic and lock-free shards, the
//! reference protocol's lock nesting, snapshots and deltas racing interns),
//! built by swapping the crate's atomics and locks through one module
//! (`src/sync.rs`); the strategies over other crates' locks and maps
//! (`sharded-lock`, `parking-lot`, `dashmap`, `arc-swap`) and the
//! `StaticName` registration bitset have none (loom cannot model those
//! crates). `docs/reliability.md` lists what checks what. Every lock recovers from poisoning: a
//! thread that panics while interning (in a `log` call, say) leaves the db
//! usable and loses nothing stored. Bad input is an [`Error`], never a panic.
//! Conflicts (one id, two strings) keep the first string and are recorded and
//! reported by the snapshot, never silently lost: past a per-NC budget
//! ([`Config::conflict_budget`]) they are counted
//! ([`InternedStringDb::conflicts_dropped`]) rather than stored, so the log's
//! memory stays bounded. See `docs/design.md`.
//!
//! # Performance
//!
//! A hit of the optimistic strategy reads a bucket line and the stored entry
//! (it compares every byte) and computes no SipHash; with names that do not
//! fit in cache those two reads are cache misses, which
//! [`intern_batch`](InternedStringDb::intern_batch) overlaps across names.
//! A miss takes the NC's lock, so threads that insert new names into one NC
//! wait for each other; give them NCs of their own where they can, or
//! intern in batches, which take the lock once for the misses of up to 64
//! names. An NC that no call ever wrote to costs a pointer (its context is
//! made by its first write). `docs/benchmarks.md` has the figures, time
//! and memory an entry, peers side by side, and how to measure on your
//! machine (`cargo bench`, and the contention harness
//! `cargo run --release -p perf`). Per-thread contention is counted
//! in-process ([`contention`]).

#![deny(unsafe_code, unsafe_op_in_unsafe_fn, missing_docs)]

mod batch;
mod config;
mod conflict;
pub mod contention;
mod db;
mod error;
#[cfg(not(interner_loom))]
mod global;
mod handle;
mod id;
mod nc;
// All of the crate's other `unsafe` code, each block with its argument.
#[allow(unsafe_code)]
mod raw;
mod snapshot;
#[cfg(not(interner_loom))]
mod static_name;
pub mod strategy;
mod sync;

pub use config::{Config, DEFAULT_CONFLICT_BUDGET, DEFAULT_NCS};

/// Loom builds only: where the optimistic shard places `bytes` (its seed
/// is fixed there), for the loom models (a test hook: feature `test-util`).
#[cfg(all(interner_loom, feature = "test-util"))]
#[doc(hidden)]
pub fn __loom_placement(bytes: &[u8]) -> u64 {
    raw::loom_placement(bytes)
}
pub use conflict::Conflict;
pub use db::InternedStringDb;
pub use error::{BatchError, Error};
#[cfg(not(interner_loom))]
pub use global::global;
pub use handle::NcHandle;
pub use id::{get_id, get_id_const, ID_MASK, INVALID_ID, MAX_ID};
pub use snapshot::{
    Cursor, Iter, LoadError, LoadProblem, MappedConflict, MappedConflicts, MappedIter,
    MappedSnapshot, Snapshot,
};
#[cfg(not(interner_loom))]
pub use static_name::StaticName;
// The strategies, the trait and, for this workspace's own tests (feature
// `test-util`), the one list of them: `strategy/mod.rs` says which this
// build ships.
pub use strategy::*;
