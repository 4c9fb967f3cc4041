//! A workspace member with one job: it depends on `interned-string-db` with
//! the `capi` feature, and it is a default member, so every build at the
//! workspace root (`cargo build --release --lib`, `cargo test --workspace`)
//! compiles the library with its C ABI, and `target/release/` holds
//! `libinterned_string_db.so` and `.a` with the `nrt_interned_string_db_*`
//! symbols.
//!
//! The published crate leaves `capi` off by default: a Rust program that ends
//! up with two versions of `interned-string-db` in its dependency graph then
//! links no unmangled symbol twice. A C build outside this workspace turns it
//! on: `cargo build --release --lib --features capi`.

pub use interned_string_db::ffi;
