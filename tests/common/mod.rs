//! Shared by the integration tests: the list of strategies every behavioural
//! test runs against.

#[allow(dead_code)]
pub mod model;

/// Instantiates each generic test `fn name<S: Strategy>()` once per strategy,
/// as `strategy_module::name`. Add a strategy here and every behavioural test
/// runs against it.
#[macro_export]
macro_rules! for_each_strategy {
    ($($test:ident),* $(,)?) => {
        mod rwlock {
            $(#[test] fn $test() { super::$test::<interned_string_db::RwLockStrategy>(); })*
        }
        mod optimistic {
            $(#[test] fn $test() { super::$test::<interned_string_db::OptimisticStrategy>(); })*
        }
        mod dashmap {
            $(#[test] fn $test() { super::$test::<interned_string_db::DashMapStrategy>(); })*
        }
        mod lock_free {
            $(#[test] fn $test() { super::$test::<interned_string_db::LockFreeStrategy>(); })*
        }
        mod arc_swap {
            $(#[test] fn $test() { super::$test::<interned_string_db::ArcSwapStrategy>(); })*
        }
    };
}

/// A realistic trace name: 20 to 60 bytes.
#[allow(dead_code)]
pub fn name(thread: usize, i: usize) -> String {
    format!("model_{}/layer_{}/tensor_{thread}_{i}", i % 7, i % 97)
}
