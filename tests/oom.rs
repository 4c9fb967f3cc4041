//! Allocation failure: an allocator that refuses large allocations while a
//! thread arms it. The intern fails with `Error::OutOfMemory`, stores
//! nothing, and the db stays consistent and usable. Its own binary, for the
//! global allocator.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use interned_string_db::{Config, Error, InternedStringDb, Registered, Strategy};

/// Allocations at least this large fail while armed: the string's copy, never
/// the small bookkeeping a failure path may need.
const REFUSED_FROM: usize = 1 << 20;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    /// Bytes this thread allocated and has not freed (never allocates).
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Adds `bytes` to this thread's live count.
fn count(bytes: isize) {
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

struct Failing;

// SAFETY: forwards to `System`, or returns null, which `GlobalAlloc` allows.
unsafe impl GlobalAlloc for Failing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= REFUSED_FROM && ARMED.try_with(Cell::get).unwrap_or(false) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Failing = Failing;

fn allocation_failure_is_an_error<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2));
    let before: Vec<String> = (0..1000).map(|i| common::name(1, i)).collect();
    for name in &before {
        db.intern(0, name).unwrap();
    }
    let huge = "x".repeat(2 * REFUSED_FROM);
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
    let huge = |fill: u8| vec![fill; 2 * REFUSED_FROM];
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
    let huge = "x".repeat(2 * REFUSED_FROM);
    let names: Vec<String> = (0..3_000).map(|i| common::name(2, i)).collect();
    let baseline = LIVE.with(Cell::get);
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
    let leaked = LIVE.with(Cell::get) - baseline;
    assert_eq!(leaked, 0, "{}: bytes leaked", S::NAME);
}

for_each_strategy!(
    refusals_leak_nothing,
    allocation_failure_is_an_error,
    refused_conflict_copies_are_counted,
);
