//! Shared by the integration tests: every behavioural test runs against
//! every strategy the crate ships (the crate's one list,
//! `interned_string_db::for_each_strategy`).

#[allow(dead_code)]
pub(crate) mod model;

/// Makes each generic test `fn name<S: Strategy>()` a test `name` that runs
/// it on every strategy of the crate's one list
/// ([`interned_string_db::for_each_strategy`]), or on those named in
/// `ISDB_STRATEGIES` (comma-separated `Strategy::NAME`s) when it is set.
/// Attributes written before a name (such as `#[ignore]`) go on its test.
/// In scope in every module declared after `common` (`#[macro_use]`).
macro_rules! for_each_strategy {
    ($($(#[$attr:meta])* $test:ident),* $(,)?) => {
        mod every_strategy {
            $(
                $(#[$attr])*
                #[test]
                fn $test() {
                    struct Run;
                    impl interned_string_db::StrategyVisitor for Run {
                        fn visit<S: interned_string_db::Strategy>(&mut self) {
                            $crate::common::run_on::<S>(super::$test::<S>);
                        }
                    }
                    interned_string_db::for_each_strategy(&mut Run);
                }
            )*
        }
    };
}

/// Runs `test` on strategy `S` unless `ISDB_STRATEGIES` leaves it out,
/// saying which strategy failed if it panics.
#[allow(dead_code)]
pub(crate) fn run_on<S: interned_string_db::Strategy>(test: fn()) {
    if !strategy_selected(S::NAME) {
        return;
    }
    struct Failing(&'static str);
    impl Drop for Failing {
        fn drop(&mut self) {
            if std::thread::panicking() {
                eprintln!("... on strategy {}", self.0);
            }
        }
    }
    let _failing = Failing(S::NAME);
    test();
}

/// Whether `ISDB_STRATEGIES` (comma-separated names; unset: every one)
/// selects the strategy called `name`. Panics if it names a strategy the
/// list does not have, so that a misspelt filter fails instead of running
/// nothing.
#[allow(dead_code)]
pub(crate) fn strategy_selected(name: &str) -> bool {
    let Ok(names) = std::env::var("ISDB_STRATEGIES") else {
        return true;
    };
    let listed = listed_names();
    let mut selected = false;
    for wanted in names.split(',').map(str::trim) {
        assert!(
            listed.contains(&wanted),
            "ISDB_STRATEGIES names {wanted:?}, which is none of the list's {listed:?}"
        );
        selected |= wanted == name;
    }
    selected
}

/// The `Strategy::NAME`s of the crate's one list.
#[allow(dead_code)]
fn listed_names() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl interned_string_db::StrategyVisitor for Names {
        fn visit<S: interned_string_db::Strategy>(&mut self) {
            self.0.push(S::NAME);
        }
    }
    let mut names = Names(Vec::new());
    interned_string_db::for_each_strategy(&mut names);
    names.0
}

/// A db of `ncs` NCs in which every string gets id 1: each distinct pair
/// of strings collides.
#[allow(dead_code)]
pub(crate) fn colliding_db<S: interned_string_db::Strategy>(
    ncs: usize,
) -> interned_string_db::InternedStringDb<S> {
    interned_string_db::InternedStringDb::with_config(
        interned_string_db::Config::new()
            .ncs(ncs)
            .narrow_id_mask_for_tests(0),
    )
}

/// Makes, on this thread, what strategy `S`'s dependencies allocate once
/// and keep (arc-swap's per-thread debt node; crossbeam's registry of the
/// threads that read a `ShardedLock`, made at the first read in the
/// process): a test that counts the db's bytes calls it before its
/// baseline, so that what it counts does not depend on which tests ran
/// before it in the process.
pub(crate) fn warm_up<S: interned_string_db::Strategy>() {
    use interned_string_db::{Config, InternedStringDb};
    let warm: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(1));
    warm.intern(0, "warm-up").unwrap();
    assert_eq!(warm.snapshot().len(), 1);
}

/// A realistic trace name: 20 to 60 bytes.
#[allow(dead_code)]
pub(crate) fn name(thread: usize, i: usize) -> String {
    format!("model_{}/layer_{}/tensor_{thread}_{i}", i % 7, i % 97)
}

#[allow(dead_code)]
mod snapshot_header;
#[allow(unused_imports)]
pub(crate) use snapshot_header::{file_header, file_header_of_version};

/// A snapshot file of `header` followed by the `entries` and `conflicts`
/// sections, each with its right checksum: to reach the checks behind them.
#[allow(dead_code)]
pub(crate) fn forged_file(header: Vec<u8>, entries: &[u8], conflicts: &[u8]) -> Vec<u8> {
    let mut file = header;
    for section in [entries, conflicts] {
        file.extend_from_slice(section);
        file.extend_from_slice(&crc32fast::hash(section).to_le_bytes());
    }
    file
}

/// An entry record: an id, and a length (version 1) or an end (version 2).
#[allow(dead_code)]
pub(crate) fn entry_record(id: u64, field: u64) -> Vec<u8> {
    [id.to_le_bytes(), field.to_le_bytes()].concat()
}

/// Whether `problem` is one a reader meets first in the zeros of a sparse
/// file's hole: an id 0 repeated, lengths that do not add up, a conflict
/// that rejects its kept bytes.
#[allow(dead_code)]
pub(crate) fn found_in_a_hole(problem: &interned_string_db::LoadProblem) -> bool {
    use interned_string_db::LoadProblem;
    matches!(
        problem,
        LoadProblem::Unsorted(0) | LoadProblem::LengthsDisagree | LoadProblem::BadConflict(0)
    )
}
