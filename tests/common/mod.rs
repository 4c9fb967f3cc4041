//! Shared by the integration tests: every behavioural test runs against
//! every strategy the crate ships (the crate's one list,
//! `interned_string_db::__for_each_strategy!`).

#[allow(dead_code)]
pub(crate) mod model;

/// Instantiates each generic test `fn name<S: Strategy>()` once per strategy,
/// as `strategy_module::name`. Attributes written before a name (such as
/// `#[ignore]`) go on each of its instances.
#[macro_export]
macro_rules! for_each_strategy {
    ($($tests:tt)*) => {
        interned_string_db::__for_each_strategy!(__tests_per_strategy { $($tests)* });
    };
}

/// The callback of [`for_each_strategy`]: one module per strategy.
#[macro_export]
macro_rules! __tests_per_strategy {
    ($tests:tt $($module:ident: $strategy:path,)*) => {
        $(
            mod $module {
                $crate::__tests_for!($strategy, $tests);
            }
        )*
    };
}

/// One strategy's instances of the tests.
#[macro_export]
macro_rules! __tests_for {
    ($strategy:path, { $($(#[$attr:meta])* $test:ident),* $(,)? }) => {
        $(
            $(#[$attr])*
            #[test]
            fn $test() {
                super::$test::<$strategy>();
            }
        )*
    };
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
