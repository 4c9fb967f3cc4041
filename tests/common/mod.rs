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
/// A realistic trace name: 20 to 60 bytes.
#[allow(dead_code)]
pub(crate) fn name(thread: usize, i: usize) -> String {
    format!("model_{}/layer_{}/tensor_{thread}_{i}", i % 7, i % 97)
}

/// The 64-byte header of a snapshot file (`docs/snapshot-format.md`)
/// claiming `counts` (entries, string bytes, conflicts, conflicts dropped),
/// its checksum included: for tests that forge files.
#[allow(dead_code)]
pub(crate) fn file_header(counts: [u64; 4]) -> Vec<u8> {
    let mut header = Vec::new();
    header.extend_from_slice(b"ISDBSNAP");
    header.extend_from_slice(&1u32.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    for count in counts {
        header.extend_from_slice(&count.to_le_bytes());
    }
    header.extend_from_slice(&[0; 12]);
    let crc = crc32fast::hash(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    header
}
