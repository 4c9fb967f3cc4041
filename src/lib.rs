//! A high-throughput concurrent string interner for trace emission,
//! lock-free where an emitter spends its time: interning a name the NC's
//! shard already holds takes **no lock, no atomic read-modify-write and no
//! store to shared memory** (except right after a run of inserts by the
//! same thread: [Performance](#performance)). Names are sharded one table
//! per NeuronCore (NC), and snapshots merge the shards while interning goes
//! on.
//!
//! An id is [`get_id(bytes)`](get_id), `(SipHash-1-3(key 0, bytes ++ [0xFF])
//! & (2^50 - 1)) + 1`: a pure function of the bytes, the same in every
//! process and on every machine, and bit-exact with the interner it
//! reimplements, the Neuron runtime's `neuron_rustime::string_db` (whose C
//! ABI the `interned-string-db-capi` crate provides). A caller can emit an
//! id as a trace token without touching any table, merging shards or files
//! is a deduplicating union, never a relabel, and `0` ([`INVALID_ID`]) is no
//! string's id.
//!
//! # Usage
//!
//! Threads intern into NCs (their own, or shared), then one snapshot holds
//! every open NC's names, and [`resolve`](InternedStringDb::resolve) maps an
//! id back to its bytes in one NC:
//!
//! ```
//! use std::thread;
//! use interned_string_db::{get_id, InternedStringDb};
//!
//! let db = InternedStringDb::new(); // 256 NCs, the optimistic strategy
//! thread::scope(|scope| {
//!     for nc in 0..4 {
//!         let db = &db;
//!         scope.spawn(move || {
//!             for step in 0..1_000 {
//!                 // A hot loop: the same few names, over and over.
//!                 let name = format!("model_{nc}/layer_{}", step % 10);
//!                 let id = db.intern(nc, &name).unwrap();
//!                 assert_eq!(id, get_id(name.as_bytes())); // the id is the hash
//!             }
//!             db.intern(nc, "span/forward").unwrap(); // on every NC
//!         });
//!     }
//! });
//!
//! let snapshot = db.snapshot(); // every open NC, merged: each id once
//! assert_eq!(snapshot.len(), 4 * 10 + 1);
//! let forward = get_id(b"span/forward");
//! assert_eq!(snapshot.get_str(forward), Some(Ok("span/forward")));
//! assert_eq!(db.resolve(2, forward).as_deref(), Some(&b"span/forward"[..]));
//! // An id another NC holds: resolve_any looks in every open NC.
//! let layer = get_id(b"model_3/layer_7");
//! assert_eq!(db.resolve(0, layer), None);
//! assert_eq!(db.resolve_any(layer).as_deref(), Some(&b"model_3/layer_7"[..]));
//! ```
//!
//! Snapshots save atomically to checksummed files ([`Snapshot::save`],
//! [`Snapshot::load`]; the [file format](docs::snapshot_format)) and merge
//! by union across processes and hosts ([`Snapshot::merge`]). A large file
//! read for a few names need not be loaded: [`MappedSnapshot`] maps it,
//! checks its header, and reads only what each lookup needs (`verify`
//! checks the rest on demand). A trace writer that flushes repeatedly
//! takes deltas, each id once, with a [`Cursor`]
//! ([`InternedStringDb::delta`], [`InternedStringDb::save_delta`]).
//! Many names at once go through
//! [`intern_batch`](InternedStringDb::intern_batch), which overlaps their
//! cache misses. Threads that emit for one NC can hold an [`NcHandle`];
//! worker threads can bind themselves to NCs and CPUs with
//! [`pin_current_thread`](InternedStringDb::pin_current_thread) (feature
//! `pinning`, on by default). String literals get compile-time ids with
//! [`intern!`] and [`static_id!`].
//!
//! # Strategies
//!
//! Use the default, [`OptimisticStrategy`]: its hits take no lock, so a
//! thread interning a name the NC holds never waits for one inserting
//! another, and it is the strategy for a hot emission path. Use [`RwLockStrategy`] when you need
//! the reference's own protocol, a futex `RwLock` per NC taken for write on
//! every intern: the compatibility mode, with the reference's locking as
//! well as its answers (every strategy gives the same answers; the tests
//! compare each with it). The others are optional features for comparison
//! in the benchmarks ([`benchmarks`](docs::benchmarks) says when each wins).
//! A [`Strategy`] is chosen by type:
//!
//! ```
//! use interned_string_db::{Config, InternedStringDb, RwLockStrategy};
//! let compat: InternedStringDb<RwLockStrategy> = InternedStringDb::with_config(Config::new());
//! assert_eq!(compat.intern(0, "a"), Ok(933183196555764));
//! ```
//!
//! * [`OptimisticStrategy`] (the default, [`DefaultStrategy`]): a hit is a
//!   fast hash of the bytes, acquire loads of one bucket line, one full
//!   compare and the stored id, with no SipHash. A miss takes the NC's
//!   lock, appends to the NC's log and indexes the entry by its bytes; the
//!   by-id map is settled from the log when the by-id direction is read,
//!   and conflicts are found then ([`Strategy::FINDS_CONFLICTS_LAZILY`]).
//!   Resolving takes a shared lock on that map, never the writer's, and
//!   settles only for an id the map does not hold yet. An NC whose
//!   writers meet moves to 64 stripes, each with its own lock; records
//!   numbered from one NC-wide counter keep first-wins and the
//!   conflicts' order across them.
//! * [`RwLockStrategy`]: the reference's protocol, faithfully, and the
//!   reference the others are tested against, answer by answer.
//! * [`StripedStrategy`] (feature `striped`): the optimistic strategy
//!   with every NC moved to its stripes after eight entries, contended or
//!   not: the moved path under every test and loom model.
//! * [`LockFreeStrategy`] (feature `lock-free`): no lock on any path; an
//!   insert is a compare-and-swap into an id-keyed table that its inserters
//!   grow cooperatively.
//! * [`ShardedLockStrategy`] (feature `sharded-lock`) and
//!   [`ParkingLotStrategy`] (feature `parking-lot`): the reference's
//!   protocol on crossbeam's `ShardedLock` and on `parking_lot::RwLock`, so
//!   the benchmarks compare lock implementations and nothing else.
//! * [`DashMapStrategy`] (feature `dashmap`) and [`ArcSwapStrategy`]
//!   (feature `arc-swap`): a `DashMap` per NC, and a copy-on-write map per
//!   NC; the common Rust choices.
//!
//! `all-strategies` turns on the six optional ones. The C ABI
//! (`include/interned_string_db.h`, the [C API](docs::c_api)) is a crate of
//! its own, `interned-string-db-capi`, built on this crate's public API.
//!
//! # Safety
//!
//! All of this crate's `unsafe` code is in one private module (`src/raw/`),
//! each block with its argument: the crate root denies `unsafe_code`, and
//! only that module allows it. Miri runs over it; the protocols of our own
//! code (the optimistic and lock-free shards, the reference's lock nesting,
//! snapshots and deltas racing interns) have loom models, and every memory
//! ordering in them is shown necessary by a mutant the models catch.
//! [Reliability](docs::reliability) lists what checks what. Every lock
//! recovers from poisoning: a thread that panics while interning leaves the
//! db usable and loses nothing stored. Bad input is an [`Error`] (a bad
//! file a [`LoadError`]), never a panic or an abort. Conflicts (one id, two
//! strings) keep the first string and are recorded and reported, never
//! silently lost: past a per-NC budget ([`Config::conflict_budget`]) they
//! are counted ([`InternedStringDb::conflicts_dropped`]) rather than stored,
//! so memory stays bounded.
//!
//! # Performance
//!
//! A hit of the optimistic strategy reads a bucket line and the stored entry
//! and computes no SipHash; when the names do not fit in cache those two
//! reads are cache misses, which
//! [`intern_batch`](InternedStringDb::intern_batch) overlaps across names.
//! A miss takes the NC's lock, so threads that insert new names into one NC
//! wait for each other: give them NCs of their own where they can, or
//! intern in batches, which take the lock once for the misses of up to 64
//! names. (An NC whose writers meet moves to 64 stripes, each with its
//! own lock, so later misses wait only when their names pick the same
//! one.) A thread whose last eight interns all inserted (one filling an
//! NC) is predicted to insert again: its next intern prefetches the
//! name's bucket and takes the lock (its stripe's, in a moved NC) without
//! the lock-free probe that would wait for that bucket to say "absent";
//! under the lock it writes the record while the bucket's line is on its
//! way, then the probe decides (a name found there takes the unpublished
//! record back). If the name is there after all, that one hit has tried
//! the lock (it never waits: a held lock sends it to the lock-free
//! probe) and computed the id, and the thread's next intern probes first
//! again; a thread that mostly hits never skips a probe. An NC that no
//! call ever wrote to costs a pointer (its context is made by its first
//! write). Per-thread contention is counted in-process
//! ([`contention`]). The figures, time and memory an entry with peers side
//! by side, and how to measure on your machine are in
//! [benchmarks](docs::benchmarks).
//!
//! # Documents
//!
//! * [Design](docs::design): the protocols with their memory orderings, the
//!   invariants, and the decisions; the modules' own docs are the map.
//! * [Reliability](docs::reliability): what checks what (tests, loom, Miri,
//!   sanitizers, fuzzing).
//! * [History](docs::history): the decisions and the designs ruled out, with
//!   the figures that decided them.
//! * [Benchmarks](docs::benchmarks): how to measure, and the figures.
//! * [Snapshot file format](docs::snapshot_format) and the
//!   [C API](docs::c_api).
//! * [Offline analysis](docs::offline_analysis): dictionaries from many hosts
//!   joined with traces in DuckDB and Spark SQL.
// The feature-gated strategies link to their type when it is built, and
// to the strategy module otherwise (docs.rs builds every strategy). The
// blank line ends the list above: a definition cannot interrupt a paragraph.
#![doc = ""]
#![cfg_attr(not(feature = "lock-free"), doc = "[`LockFreeStrategy`]: strategy")]
#![cfg_attr(not(feature = "striped"), doc = "[`StripedStrategy`]: strategy")]
#![cfg_attr(
    not(feature = "sharded-lock"),
    doc = "[`ShardedLockStrategy`]: strategy"
)]
#![cfg_attr(not(feature = "parking-lot"), doc = "[`ParkingLotStrategy`]: strategy")]
#![cfg_attr(not(feature = "dashmap"), doc = "[`DashMapStrategy`]: strategy")]
#![cfg_attr(not(feature = "arc-swap"), doc = "[`ArcSwapStrategy`]: strategy")]
#![deny(unsafe_code, unsafe_op_in_unsafe_fn, missing_docs)]

mod batch;
mod config;
mod conflict;
pub mod contention;
mod db;
#[cfg(doc)]
pub mod docs;
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

/// The README's Rust blocks, compiled and run with the crate's doctests
/// (its `sh` blocks are commands, which rustdoc leaves alone).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
