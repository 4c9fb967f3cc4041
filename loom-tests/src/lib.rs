//! Loom models of the concurrent protocols of `interned-string-db`'s own code
//! (the optimistic and lock-free shards, the reference protocol's lock nesting,
//! snapshots and deltas racing interns).
//!
//! The models are in `tests/models.rs` and compile only with
//! `RUSTFLAGS="--cfg interner_loom"`, which swaps every atomic and lock in the
//! library for loom's (see the library's `src/sync.rs`). `run.sh` runs them
//! with the bounds CI uses, and documents how to run deeper.
