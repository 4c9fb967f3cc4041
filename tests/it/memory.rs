//! `drop` and `reset` free every byte the db allocated: a counting global
//! allocator checks live bytes against the baseline.
//!
//! Only threads that opt in are counted: the test harness's own thread
//! allocates concurrently (it registers the running test), which once showed
//! up as a 900-byte "leak" on a loaded machine. Everything the db does here
//! happens on the test's thread.

use std::sync::atomic::Ordering;

use crate::alloc::{COUNTED, COUNTED_ALLOCATIONS, COUNTED_LIVE};
use interned_string_db::{Config, InternedStringDb, Registered, Strategy, DEFAULT_CONFLICT_BUDGET};

/// The counter is process-wide: tests that count take turns, each counting
/// its own thread only while it holds its turn ([`count_this_thread`]).
static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Counts this thread's allocations until the returned turn is dropped. Not
/// after: the harness goes on allocating on the test's thread (its result,
/// its output), and frees on its own, which would skew the next test.
fn count_this_thread() -> impl Drop {
    struct Turn(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>);
    impl Drop for Turn {
        fn drop(&mut self) {
            COUNTED.with(|c| c.set(false));
        }
    }
    let turn = Turn(COUNTING.lock().unwrap_or_else(|e| e.into_inner()));
    COUNTED.with(|c| c.set(true));
    turn
}

fn live() -> isize {
    COUNTED_LIVE.load(Ordering::Relaxed)
}

/// Names [`fill`] and the snapshot's test intern: fewer in a debug build,
/// where filling the copy-on-write strategy (quadratic) took most of a
/// minute; every NC still grows its tables, slabs or copies many times
/// over.
const FILL: usize = if cfg!(debug_assertions) {
    6_000
} else {
    20_000
};

fn fill<S: Strategy>(db: &InternedStringDb<S>) {
    for i in 0..FILL {
        db.intern(
            i % 16,
            &format!("model_{}/layer_{}/tensor_{i}", i % 3, i % 50),
        )
        .unwrap();
    }
    db.close_nc(3).unwrap();
}

fn frees_everything<S: Strategy>() {
    // Process-wide state a dependency allocates once and keeps is not the
    // db's: allocate it before the baseline.
    crate::common::warm_up::<S>();
    let baseline = live();
    {
        let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(16));
        fill(&db);
        assert!(
            live() - baseline > (FILL * 30) as isize,
            "{}: the strings are stored",
            S::NAME
        );
    }
    assert_eq!(live(), baseline, "{}: drop leaked", S::NAME);

    let mut db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(16));
    let empty = live();
    fill(&db);
    db.reset();
    assert_eq!(live(), empty, "{}: reset kept memory", S::NAME);
    fill(&db);
    drop(db);
    assert_eq!(live(), baseline, "{}: drop after reset leaked", S::NAME);
}

fn drop_and_reset_free_every_byte<S: Strategy>() {
    let _turn = count_this_thread();
    frees_everything::<S>();
}

/// A hostile caller: an NC capped at 4,096 bytes, 20,000 `register` calls
/// under one id with distinct 2,000-byte strings. The conflict log once held
/// 80 MB (each conflict with its own copy of the kept string, none of it
/// under the cap); now it stays within its budget, stores the kept string
/// once, and counts the conflicts it does not store. Short strings too, where
/// the log's own tables dominate.
fn conflict_log_stays_within_its_budget<S: Strategy>(len: usize) {
    const OVERHEAD: usize = 128; // per stored string, as `Config::conflict_budget` documents
    let db: InternedStringDb<S> =
        InternedStringDb::with_config(Config::new().ncs(1).byte_cap(4096));
    let kept = vec![b'k'; len];
    db.register(0, 7, &kept).unwrap();
    let before = live();
    let mut rejected = vec![b'r'; len];
    for i in 0..20_000u32 {
        rejected[..4].copy_from_slice(&i.to_le_bytes());
        assert_eq!(db.register(0, 7, &rejected), Ok(Registered::Conflict));
    }
    let grown = live() - before;
    assert!(
        grown <= DEFAULT_CONFLICT_BUDGET as isize,
        "{}: the conflict log holds {grown} bytes after 20,000 conflicts of {len} bytes",
        S::NAME
    );
    // The first conflict is charged both strings, each further one its
    // rejected string.
    let stored = 1 + (DEFAULT_CONFLICT_BUDGET - 2 * (len + OVERHEAD)) / (len + OVERHEAD);
    assert_eq!(db.conflict_count(), stored, "{}", S::NAME);
    assert_eq!(
        db.conflicts_dropped(),
        20_000 - stored as u64,
        "{}",
        S::NAME
    );
    // A repeat of a stored conflict is recognised: not stored, not counted.
    rejected[..4].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(db.register(0, 7, &rejected), Ok(Registered::Conflict));
    assert_eq!(db.conflicts_dropped(), 20_000 - stored as u64);
    let snapshot = db.snapshot();
    assert_eq!(snapshot.get(7), Some(&kept[..]), "the first string is kept");
    assert_eq!(snapshot.conflicts().len(), stored);
    assert_eq!(snapshot.conflicts_dropped(), db.conflicts_dropped());
}

fn conflict_log_is_bounded<S: Strategy>() {
    let _turn = count_this_thread();
    for len in [2000, 8] {
        conflict_log_stays_within_its_budget::<S>(len);
    }
}

/// A snapshot holds its strings and 16 bytes an entry, nothing more, even
/// when every string is on two NCs (the duplicates are staged, then dropped).
fn snapshot_is_strings_and_16_bytes_an_entry<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(16));
    for i in 0..FILL {
        let name = format!("model_{}/layer_{}/tensor_{i}", i % 3, i % 50);
        db.intern(i % 16, &name).unwrap();
        db.intern((i + 1) % 16, &name).unwrap();
    }
    // Settled first: a strategy that builds its by-id index lazily builds
    // it at the first read of the by-id direction, this snapshot's, and
    // the index is the db's memory, not the snapshot's; so is what a
    // dependency makes at a process's first read.
    assert_eq!(db.conflict_count(), 0);
    crate::common::warm_up::<S>();
    let before = live();
    let snapshot = db.snapshot();
    let held = live() - before;
    assert_eq!(snapshot.len(), FILL);
    assert!(snapshot.conflicts().is_empty());
    let bound = snapshot.string_bytes() + 16 * snapshot.len();
    assert!(
        held as usize <= bound,
        "{}: a snapshot holds {held} bytes, more than {bound}",
        S::NAME
    );
}

fn snapshot_memory_is_bounded<S: Strategy>() {
    let _turn = count_this_thread();
    snapshot_is_strings_and_16_bytes_an_entry::<S>();
}

/// An NC that never sees a call that writes to it costs the db a pointer:
/// reading it (lookups, resolves, snapshots, deltas) makes nothing, and
/// the first intern makes that NC's context alone.
fn an_idle_nc_costs_a_pointer<S: Strategy>() {
    let _turn = count_this_thread();
    // What a dependency allocates once per thread or process is not an NC's.
    crate::common::warm_up::<S>();
    let before = live();
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(256));
    let idle = live() - before;
    assert!(
        idle as usize <= 256 * size_of::<usize>() + 64,
        "{}: 256 idle NCs hold {idle} bytes",
        S::NAME
    );
    assert_eq!(db.lookup(9, "absent"), None);
    assert_eq!(db.resolve(9, 1), None);
    assert_eq!(db.is_open(9), Ok(true));
    assert!(db.snapshot().is_empty());
    let mut cursor = interned_string_db::Cursor::new();
    assert!(db.delta(&mut cursor).is_empty());
    drop(cursor);
    assert_eq!(
        live() - before,
        idle,
        "{}: reading an idle NC made it",
        S::NAME
    );
    db.intern(9, "model/layer_0/tensor_0").unwrap();
    let one = live() - before - idle;
    db.intern(10, "model/layer_0/tensor_0").unwrap();
    assert_eq!(
        live() - before - idle,
        2 * one,
        "{}: an intern makes its own NC's context only",
        S::NAME
    );
}

/// An intern of a string its NC holds allocates nothing, before and after
/// the NC's by-id direction is read (a strategy that finds conflicts
/// lazily settles it then), a string whose id another string holds
/// included.
fn a_hit_allocates_nothing<S: Strategy>() {
    let db: InternedStringDb<S> =
        InternedStringDb::with_config(Config::new().ncs(2).narrow_id_mask_for_tests(0x3FF));
    let names: Vec<String> = (0..2_000).map(|i| format!("span_{i}/forward")).collect();
    for name in &names {
        db.intern(1, name).unwrap();
    }
    let _turn = count_this_thread();
    for round in 0..2 {
        let before = COUNTED_ALLOCATIONS.load(Ordering::Relaxed);
        for name in &names {
            db.intern(1, name).unwrap();
        }
        let made = COUNTED_ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert_eq!(made, 0, "{}: round {round}: {made} allocations", S::NAME);
        // Settles the NC (finds its conflicts: the mask makes ids collide).
        assert!(db.conflict_count() > 0);
    }
}

/// The first intern of a present name after a short run of inserts into a
/// fresh NC allocates nothing, at every run length to 40: a strategy that
/// predicts a miss after a run of inserts, or moves an NC past some size,
/// decides to allocate only once it knows the name is new.
fn a_hit_after_a_run_of_inserts_allocates_nothing<S: Strategy>() {
    for run in 1..=40 {
        let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2));
        let names: Vec<String> = (0..run).map(|i| format!("run_{run}/name_{i}")).collect();
        for name in &names {
            db.intern(1, name).unwrap();
        }
        let _turn = count_this_thread();
        let before = COUNTED_ALLOCATIONS.load(Ordering::Relaxed);
        db.intern(1, &names[0]).unwrap();
        let made = COUNTED_ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert_eq!(
            made,
            0,
            "{}: after {run} inserts: {made} allocations",
            S::NAME
        );
    }
}

for_each_strategy!(
    a_hit_allocates_nothing,
    a_hit_after_a_run_of_inserts_allocates_nothing,
    an_idle_nc_costs_a_pointer,
    drop_and_reset_free_every_byte,
    conflict_log_is_bounded,
    snapshot_memory_is_bounded,
);
