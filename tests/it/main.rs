//! The integration tests, one binary (`cargo test --test it`): one module
//! per subject, the shared helpers in `common` (its `for_each_strategy!`
//! makes each generic test a test over the crate's one list of strategies,
//! `<module>::every_strategy::<test>`), and the binary's one global
//! allocator in `alloc`, which `memory`, `oom` and `sparse_files` watch.
//!
//! One binary links the crate once, where a binary per file linked it for
//! each. Select by name: `cargo test --test it -- delta::` runs a module,
//! `-- every_strategy::` every test over the list; the `#[ignore]`d long
//! tests of `stress` and `faults` run in release (`.ci/stress.sh`).

#[macro_use]
mod common;

mod alloc;

mod batch;
mod behaviour;
mod collisions;
mod crafted_ids;
mod delta;
mod differential;
mod faults;
mod get_id;
mod handles;
mod hit_then_snapshot;
mod mapped_file;
mod memory;
mod model;
mod oom;
mod poison;
mod snapshot_file;
mod sparse_files;
mod strategy_list;
mod stress;
