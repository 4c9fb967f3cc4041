//! Loom models of interned-string-db. Run with `RUSTFLAGS="--cfg interner_loom"`: see run.sh.
