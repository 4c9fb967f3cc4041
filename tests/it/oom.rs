//! Allocation failure: an allocator that refuses large allocations while a
//! thread arms it. The intern fails with `Error::OutOfMemory`, stores
//! nothing, and the db stays consistent and usable. The allocator is the
//! binary's (`crate::alloc`).

use std::cell::Cell;

use crate::alloc::{ARMED, ARMED_REFUSES_FROM, THREAD_LIVE};
use interned_string_db::{Config, Error, InternedStringDb, Registered, Strategy};

fn allocation_failure_is_an_error<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2));
    let before: Vec<String> = (0..1000).map(|i| crate::common::name(1, i)).collect();
    for name in &before {
        db.intern(0, name).unwrap();
    }
    let huge = "x".repeat(2 * ARMED_REFUSES_FROM);
    ARMED.with(|a| a.set(true));
    let refused = db.intern(0, &huge);
    ARMED.with(|a| a.set(false));
    assert_eq!(
        refused,
        Err(Error::OutOfMemory {
            nc: 0,
            needed: huge.len()
        }),
        "{}",
        S::NAME
    );
    assert_eq!(db.nc_len(0), 1000, "nothing stored");
    assert_eq!(db.lookup(0, &huge), None);
    for name in &before {
        assert!(db.lookup(0, name).is_some(), "{name} lost");
    }
    // Usable afterwards, for the same string too.
    assert!(db.intern(0, &huge).is_ok());
    assert_eq!(db.snapshot().len(), 1001);
}

/// A conflict whose strings cannot be copied is counted, not stored, and
/// the call neither fails nor aborts; once memory is back, the same
/// conflicts are stored.
fn refused_conflict_copies_are_counted<S: Strategy>() {
    let db: InternedStringDb<S> =
        InternedStringDb::with_config(Config::new().ncs(1).conflict_budget(64 << 20));
    let huge = |fill: u8| vec![fill; 2 * ARMED_REFUSES_FROM];
    // A short kept string, a rejected one too large to copy; a kept string
    // too large to copy, a short rejected one.
    db.register(0, 7, b"kept").unwrap();
    db.register(0, 8, &huge(b'k')).unwrap();
    let (rejected_7, rejected_8) = (huge(b'r'), b"rejected".to_vec());
    for round in 1..=2 {
        ARMED.with(|a| a.set(true));
        let results = (
            db.register(0, 7, &rejected_7),
            db.register(0, 8, &rejected_8),
        );
        ARMED.with(|a| a.set(false));
        assert_eq!(
            results,
            (Ok(Registered::Conflict), Ok(Registered::Conflict)),
            "{}",
            S::NAME
        );
        assert_eq!(db.conflict_count(), 0, "{}: nothing stored", S::NAME);
        assert_eq!(db.conflicts_dropped(), 2 * round, "{}: counted", S::NAME);
    }
    assert_eq!(db.snapshot().conflicts_dropped(), 4, "{}", S::NAME);
    // Memory back: the same conflicts are stored.
    assert_eq!(db.register(0, 7, &rejected_7), Ok(Registered::Conflict));
    assert_eq!(db.register(0, 8, &rejected_8), Ok(Registered::Conflict));
    assert_eq!(db.conflict_count(), 2, "{}", S::NAME);
    assert_eq!(db.conflicts_dropped(), 4, "{}", S::NAME);
    let snapshot = db.snapshot();
    assert_eq!(snapshot.get(7), Some(&b"kept"[..]));
    assert_eq!(snapshot.conflicts().len(), 2);
}

/// Refused interns leak nothing: a huge name refused at every fill of an
/// NC (some refusals needing a larger slab directory first, which the
/// optimistic log once allocated before the refused slab and then lost),
/// and the db dropped, leaves this thread's live bytes where they were.
fn refusals_leak_nothing<S: Strategy>() {
    // Just large enough to be refused: each refusal hashes it first.
    let huge = "x".repeat(ARMED_REFUSES_FROM);
    let names: Vec<String> = (0..3_000).map(|i| crate::common::name(2, i)).collect();
    // What a dependency keeps once made is not a leak of the db's.
    crate::common::warm_up::<S>();
    let baseline = THREAD_LIVE.with(Cell::get);
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(1));
    for (i, name) in names.iter().enumerate() {
        db.intern(0, name).unwrap();
        if i % 10 == 0 {
            ARMED.with(|a| a.set(true));
            let refused = db.intern(0, &huge);
            ARMED.with(|a| a.set(false));
            assert!(
                matches!(refused, Err(Error::OutOfMemory { .. })),
                "{refused:?}"
            );
        }
    }
    assert_eq!(db.nc_len(0), names.len());
    drop(db);
    let leaked = THREAD_LIVE.with(Cell::get) - baseline;
    assert_eq!(leaked, 0, "{}: bytes leaked", S::NAME);
}

for_each_strategy!(
    refusals_leak_nothing,
    allocation_failure_is_an_error,
    refused_conflict_copies_are_counted,
);
