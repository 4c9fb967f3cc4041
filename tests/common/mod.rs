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
#[macro_export]
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
/// selects the strategy called `name`.
#[allow(dead_code)]
pub(crate) fn strategy_selected(name: &str) -> bool {
    std::env::var("ISDB_STRATEGIES")
        .map_or(true, |names| names.split(',').any(|n| n.trim() == name))
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

/// A realistic trace name: 20 to 60 bytes.
#[allow(dead_code)]
pub(crate) fn name(thread: usize, i: usize) -> String {
    format!("model_{}/layer_{}/tensor_{thread}_{i}", i % 7, i % 97)
}

#[allow(dead_code)]
mod snapshot_header;
#[allow(unused_imports)]
pub(crate) use snapshot_header::file_header;
