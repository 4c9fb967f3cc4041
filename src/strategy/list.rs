//! The one list of the strategies this build ships, for the crate's own
//! tests, benches and harness (feature `test-util`). Adding a strategy
//! touches its own file, `strategy/mod.rs` and `lib.rs` (the module and its
//! re-exports), `Cargo.toml` (its feature) and this list; the tests, the
//! loom models, the benches and the harness expand from the list. What they
//! size differently per strategy is a property of the strategy
//! ([`Strategy::COPY_ON_WRITE`](super::Strategy::COPY_ON_WRITE)), which the
//! tests, the benches and the harness read.
//!
//! `__for_each_strategy!(callback { args })` expands to
//! `callback! { { args } module: Type, ... }`: a module name and the
//! strategy's type for each strategy compiled in, in report order. Each
//! optional strategy is a stage defined twice, with and without it, under
//! this crate's `cfg`, because an exported macro's body is read in the
//! caller's crate, where this crate's features are unknown.

/// Calls `$callback! { { $args } module: Type, ... }` with every strategy
/// this build of the crate ships. Not public API: for this crate's tests,
/// benches and harness (feature `test-util`; hidden from the docs, since an
/// exported macro is documented at the crate root).
#[doc(hidden)]
#[macro_export]
macro_rules! __for_each_strategy {
    ($callback:ident $args:tt) => {
        $crate::__strategies_stage_lock_free! { $callback $args
            optimistic: $crate::OptimisticStrategy,
        }
    };
}

#[cfg(feature = "lock-free")]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_lock_free {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_rwlock! { $callback $args $($list)*
            lock_free: $crate::LockFreeStrategy,
        }
    };
}

#[cfg(not(feature = "lock-free"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_lock_free {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_rwlock! { $callback $args $($list)* }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_rwlock {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_sharded_lock! { $callback $args $($list)*
            rwlock: $crate::RwLockStrategy,
        }
    };
}

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_sharded_lock {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_parking_lot! { $callback $args $($list)*
            sharded_lock: $crate::ShardedLockStrategy,
        }
    };
}

#[cfg(not(all(feature = "sharded-lock", not(interner_loom))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_sharded_lock {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_parking_lot! { $callback $args $($list)* }
    };
}

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_parking_lot {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_dashmap! { $callback $args $($list)*
            parking_lot: $crate::ParkingLotStrategy,
        }
    };
}

#[cfg(not(all(feature = "parking-lot", not(interner_loom))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_parking_lot {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_dashmap! { $callback $args $($list)* }
    };
}

#[cfg(all(feature = "dashmap", not(interner_loom)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_dashmap {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_arc_swap! { $callback $args $($list)*
            dashmap: $crate::DashMapStrategy,
        }
    };
}

#[cfg(not(all(feature = "dashmap", not(interner_loom))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_dashmap {
    ($callback:ident $args:tt $($list:tt)*) => {
        $crate::__strategies_stage_arc_swap! { $callback $args $($list)* }
    };
}

#[cfg(all(feature = "arc-swap", not(interner_loom)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_arc_swap {
    ($callback:ident $args:tt $($list:tt)*) => {
        $callback! { $args $($list)*
            arc_swap: $crate::ArcSwapStrategy,
        }
    };
}

#[cfg(not(all(feature = "arc-swap", not(interner_loom))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __strategies_stage_arc_swap {
    ($callback:ident $args:tt $($list:tt)*) => {
        $callback! { $args $($list)* }
    };
}
