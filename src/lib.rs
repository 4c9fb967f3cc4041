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
//! assert_eq!(snapshot.get_str(id), Some("model_3/layer_41/tensor_1207"));
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
//! * [`RwLockStrategy`]: the reference's protocol, faithfully: a futex
//!   `RwLock` per NC, taken for write on every intern (hit or miss) and for
//!   read by the merge, under a global `RwLock` taken for read across the
//!   merge. The compatibility mode, and the oracle the other strategies are
//!   tested against: every behavioural test runs against every strategy.
//!
//! # Safety and correctness
//!
//! Every lock recovers from poisoning: a thread that panics while interning
//! (in a `log` call, say) leaves the db usable and loses nothing stored. Bad
//! input is an [`Error`], never a panic. Conflicts (one id, two strings) keep
//! the first string and are recorded and reported by the snapshot, never
//! silently lost. See `docs/design.md`.

#![deny(unsafe_op_in_unsafe_fn, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod conflict;
pub mod contention;
mod db;
mod error;
#[cfg(not(interner_loom))]
mod global;
mod id;
mod nc;
mod pin;
mod raw;
mod snapshot;
#[cfg(not(interner_loom))]
mod static_name;
pub mod strategy;
mod sync;

pub use conflict::Conflict;
pub use db::{Config, InternedStringDb, DEFAULT_NCS};
pub use error::Error;
#[cfg(not(interner_loom))]
pub use global::global;
pub use id::{get_id, get_id_const, ID_MASK, INVALID_ID, MAX_ID};
pub use pin::NcHandle;
pub use snapshot::{Iter, Snapshot};
#[cfg(not(interner_loom))]
pub use static_name::StaticName;
pub use strategy::{DefaultStrategy, OptimisticStrategy, Registered, RwLockStrategy, Strategy};
