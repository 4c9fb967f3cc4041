//! Loom models: run with `loom-tests/run.sh`.
//!
//! Every racing role runs in a spawned thread; the model's main thread only
//! sets up (before any spawn) and checks (after every join). In loom builds a
//! log slab holds 40 bytes, a bucket 2 slot words, a segment 1 bucket, and
//! the by-bytes index splits a bucket on every insert past the first, so
//! small models cross slabs, grow both directories, overflow and split.
#![cfg(interner_loom)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use interned_string_db::{
    get_id, Config, Cursor, Error, InternedStringDb, OptimisticStrategy, Registered,
    RwLockStrategy, Strategy, StripedStrategy,
};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

// A crate root's modules lie beside it; this one lies in `models/`, where
// cargo does not take it for a test target of its own.
#[path = "models/reads.rs"]
mod reads;

fn db<S: Strategy>(ncs: usize) -> Arc<InternedStringDb<S>> {
    with_config(Config::new().ncs(ncs))
}

fn with_config<S: Strategy>(config: Config) -> Arc<InternedStringDb<S>> {
    Arc::new(InternedStringDb::with_config(config))
}

/// A one-NC db whose every id is 1 (the test-only mask), with `first`
/// interned: it holds id 1, and any other string interned after it
/// conflicts.
fn one_id_db<S: Strategy>(first: &str) -> Arc<InternedStringDb<S>> {
    let db = with_config::<S>(Config::new().ncs(1).narrow_id_mask_for_tests(0));
    assert_eq!(db.intern(0, first), Ok(1));
    db
}

fn spawn<T: 'static>(f: impl FnOnce() -> T + 'static) -> thread::JoinHandle<T> {
    thread::spawn(f)
}

/// What a reader may see of `s` while it is being inserted: nothing, or all
/// of it under its own id; and once a lookup has seen it, a resolve after
/// finds it.
fn check_visible<S: Strategy>(db: &InternedStringDb<S>, nc: usize, s: &str) {
    let id = get_id(s.as_bytes());
    if let Some(bytes) = db.resolve(nc, id) {
        assert_eq!(&*bytes, s.as_bytes(), "a half-written entry was visible");
    }
    if let Some(found) = db.lookup(nc, s) {
        assert_eq!(found, id);
        let bytes = db.resolve(nc, id);
        assert_eq!(bytes.as_deref(), Some(s.as_bytes()), "seen, then lost");
    }
}

/// The hash that places `name` in the optimistic shard's by-bytes index in
/// loom builds (whose seed is fixed).
fn placement(name: &str) -> u64 {
    interned_string_db::__loom_placement(name.as_bytes())
}

/// The first `count` names `{prefix}{i}`, padded with `.` to `len` bytes,
/// whose placement satisfies `wanted` (distinct by construction).
fn names_where(
    prefix: &str,
    len: usize,
    count: usize,
    wanted: impl Fn(u64) -> bool,
) -> Vec<String> {
    (0..)
        .map(|i| format!("{prefix}{i:.<width$}", width = len - prefix.len()))
        .filter(|name| wanted(placement(name)))
        .take(count)
        .collect()
}

/// A record of a 25-byte name takes 34 of a slab's 40 bytes: one per slab.
const SLAB_FILLING: usize = 25;

// ---------------------------------------------------------------------------
// Inserts racing inserts and hits.

/// Two threads insert the same string and one string each into one shard:
/// exactly one insert of the shared string wins, nothing is duplicated or
/// lost, and a racing reader never sees a half-written entry. For the
/// optimistic strategy the first insert builds the by-bytes index while the
/// other thread probes it.
fn same_and_different<S: Strategy>() {
    loom::model(|| {
        let db = db::<S>(1);
        let threads: Vec<_> = [("b", "c"), ("c", "b")]
            .into_iter()
            .map(|(own, other)| {
                let db = Arc::clone(&db);
                spawn(move || {
                    let shared = db.intern_with_outcome(0, b"a").unwrap().1;
                    // Races the other thread's insert of `other`.
                    check_visible(&db, 0, other);
                    let mine = db.intern_with_outcome(0, own.as_bytes()).unwrap().1;
                    assert_eq!(mine, Registered::Inserted);
                    check_visible(&db, 0, other);
                    shared
                })
            })
            .collect();
        let outcomes: Vec<Registered> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(
            outcomes
                .iter()
                .filter(|&&o| o == Registered::Inserted)
                .count(),
            1,
            "exactly one thread inserts the shared string: {outcomes:?}"
        );
        assert_eq!(db.nc_len(0), 3);
        let snapshot = db.snapshot();
        assert_eq!(snapshot.len(), 3);
        for s in ["a", "b", "c"] {
            assert_eq!(snapshot.get_str(get_id(s.as_bytes())), Some(Ok(s)));
        }
    });
}

/// A thread's run of inserts (two into NC 0, in loom builds, before any
/// other thread runs) predicts its next intern to miss: it interns `x`
/// into NC 0 without the lock-free probe first (the lock tried, the probe
/// run lock-free where it would wait), racing another thread's intern of
/// `x`. Both get its id, exactly one inserts it, and it is stored once. A
/// strategy that moves an NC after its first entry (the striped one, in
/// loom builds) has moved NC 0 by then: the predicted miss probes only the
/// frozen shard lock-free, then tries its stripe's lock.
fn a_predicted_miss_races_an_insert<S: Strategy>() {
    loom::model(|| {
        let db = db::<S>(2);
        let predicted = {
            let db = Arc::clone(&db);
            spawn(move || {
                for name in ["r0", "r1"] {
                    db.intern(0, name).unwrap();
                }
                let other = {
                    let db = Arc::clone(&db);
                    spawn(move || db.intern_with_outcome(0, b"x").unwrap())
                };
                (db.intern(0, "x").unwrap(), other.join().unwrap())
            })
        };
        let (mine, theirs) = predicted.join().unwrap();
        let id = get_id(b"x");
        assert_eq!((mine, theirs.0), (id, id));
        assert_eq!(db.nc_len(0), 3, "stored once ({theirs:?})");
        assert_eq!(db.snapshot().get_str(id), Some(Ok("x")));
    });
}

/// An NC's context is made by the first call that writes to it
/// (`src/raw/once_box.rs`): one thread interns into an NC no call has
/// made, the other reads it, then interns too, racing to make it. One
/// context is made, and a thread that finds it (the reader's load, the
/// loser's failed swing) sees it whole.
#[test]
fn nc_context_races_its_first_writes() {
    loom::model(|| {
        let db = db::<OptimisticStrategy>(1);
        let maker = {
            let db = Arc::clone(&db);
            spawn(move || db.intern(0, "a").unwrap())
        };
        let other = {
            let db = Arc::clone(&db);
            spawn(move || {
                if let Some(id) = db.lookup(0, "a") {
                    assert_eq!(id, get_id(b"a"));
                }
                db.intern(0, "b").unwrap()
            })
        };
        assert_eq!(maker.join().unwrap(), get_id(b"a"));
        assert_eq!(other.join().unwrap(), get_id(b"b"));
        assert_eq!(db.nc_len(0), 2, "one context holds both");
    });
}

/// A snapshot races an intern and an NC close. The snapshot holds whatever
/// was interned before it was taken (here: before the flag it acquired was
/// released); a closed NC's strings are in no snapshot taken after the close
/// returned, and the close stops further interns into it.
fn snapshot_races_intern_and_close<S: Strategy>() {
    loom::model(|| {
        let db = db::<S>(2);
        let a_done = Arc::new(AtomicBool::new(false));
        let interner = {
            let (db, a_done) = (Arc::clone(&db), Arc::clone(&a_done));
            spawn(move || {
                db.intern(0, "a").unwrap();
                a_done.store(true, Ordering::Release);
                db.intern(1, "b")
            })
        };
        let closer = {
            let db = Arc::clone(&db);
            spawn(move || db.close_nc(1).unwrap())
        };
        let snapshotter = {
            let (db, a_done) = (Arc::clone(&db), Arc::clone(&a_done));
            spawn(move || {
                let a_was_done = a_done.load(Ordering::Acquire);
                let snapshot = db.snapshot();
                if a_was_done {
                    assert_eq!(snapshot.get_str(get_id(b"a")), Some(Ok("a")));
                }
                assert!(snapshot.len() <= 2);
            })
        };
        let b = interner.join().unwrap();
        closer.join().unwrap();
        snapshotter.join().unwrap();
        assert!(matches!(b, Ok(_) | Err(Error::NcClosed { nc: 1 })), "{b:?}");
        let after = db.snapshot();
        assert_eq!(after.get_str(get_id(b"a")), Some(Ok("a")));
        assert!(!after.contains(get_id(b"b")), "NC 1 is closed");
        assert_eq!(db.intern(1, "c"), Err(Error::NcClosed { nc: 1 }));
        assert_eq!(db.nc_len(1), usize::from(b.is_ok()));
    });
}

// ---------------------------------------------------------------------------
// Close and open.

/// A thread that sees an NC closed sees everything that happened before the
/// close: here, the insert its closer made just before.
fn closed_shows_what_preceded<S: Strategy>() {
    loom::model(|| {
        let db = db::<S>(1);
        let closer = {
            let db = Arc::clone(&db);
            spawn(move || {
                db.intern(0, "a").unwrap();
                db.close_nc(0).unwrap();
            })
        };
        let observer = {
            let db = Arc::clone(&db);
            spawn(move || {
                if db.is_open(0) == Ok(false) {
                    assert_eq!((db.nc_len(0), db.nc_bytes(0)), (1, 1));
                }
            })
        };
        closer.join().unwrap();
        observer.join().unwrap();
    });
}

/// A close races the conflict path (an intern of a string whose id another
/// string holds; the test-only id mask gives every string id 1) and a hit of
/// the kept string. The conflict is recorded if and only if its intern
/// succeeded; after the close every intern is refused; the kept string stays.
fn close_races_conflict<S: Strategy>() {
    loom::model(|| {
        let db = one_id_db::<S>("a");
        let conflicting = {
            let db = Arc::clone(&db);
            spawn(move || db.intern_with_outcome(0, b"b"))
        };
        let closer = {
            let db = Arc::clone(&db);
            spawn(move || db.close_nc(0).unwrap())
        };
        let hit = {
            let db = Arc::clone(&db);
            spawn(move || db.intern(0, "a"))
        };
        let outcome = conflicting.join().unwrap();
        closer.join().unwrap();
        let hit = hit.join().unwrap();
        assert!(
            matches!(hit, Ok(1) | Err(Error::NcClosed { nc: 0 })),
            "{hit:?}"
        );
        match outcome {
            Ok((1, Registered::Conflict)) => assert_eq!(db.conflict_count(), 1),
            Err(Error::NcClosed { nc: 0 }) => assert_eq!(db.conflict_count(), 0),
            other => panic!("{other:?}"),
        }
        assert_eq!(db.intern(0, "c"), Err(Error::NcClosed { nc: 0 }));
        assert_eq!(db.nc_len(0), 1);
        db.open_nc(0).unwrap();
        assert_eq!(db.resolve(0, 1).as_deref(), Some(&b"a"[..]));
    });
}

/// Fails every allocation aligned to exactly 64 bytes (the by-bytes index's
/// buckets; the by-id side is aligned to 128) while armed on the current OS
/// thread, which runs every thread of a loom model.
struct FailingAligned;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static FAILED: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to `System`, or returns null (a refusal) without
// allocating.
unsafe impl GlobalAlloc for FailingAligned {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() == 64 && ARMED.try_with(Cell::get).unwrap_or(false) {
            FAILED.with(|f| f.set(f.get() + 1));
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: allocated by `System` above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: FailingAligned = FailingAligned;

/// An insert whose by-bytes index cannot allocate is refused whole (the
/// index's memory is taken before the entry is appended, so no entry is
/// ever stored without its table word), then the same string's insert and
/// a hit race a close. The model fails the index's first allocations.
#[test]
fn optimistic_close_races_insert_after_a_refused_index() {
    loom::model(|| {
        let db = db::<OptimisticStrategy>(1);
        let id = get_id(b"p");
        // The NC's context (line-aligned too) is made by its first write:
        // before the allocations fail.
        db.open_nc(0).unwrap();
        FAILED.with(|f| f.set(0));
        ARMED.with(|a| a.set(true));
        let stored = db.register(0, id, b"p");
        ARMED.with(|a| a.set(false));
        assert!(
            matches!(stored, Err(Error::OutOfMemory { .. })),
            "{stored:?}"
        );
        assert!(FAILED.with(Cell::get) > 0, "the index was built after all");
        assert_eq!(db.nc_len(0), 0, "nothing stored");
        let inserter = {
            let db = Arc::clone(&db);
            spawn(move || db.intern(0, "p"))
        };
        let closer = {
            let db = Arc::clone(&db);
            spawn(move || db.close_nc(0).unwrap())
        };
        let hit = {
            let db = Arc::clone(&db);
            spawn(move || db.intern(0, "p"))
        };
        for t in [inserter, hit] {
            let got = t.join().unwrap();
            assert!(
                got == Ok(id) || got == Err(Error::NcClosed { nc: 0 }),
                "{got:?}"
            );
        }
        closer.join().unwrap();
        assert_eq!(db.intern(0, "p"), Err(Error::NcClosed { nc: 0 }));
        db.open_nc(0).unwrap();
        assert_eq!(db.intern(0, "p"), Ok(id));
        assert_eq!(db.nc_len(0), 1);
        assert_eq!(db.snapshot().len(), 1);
    });
}

/// Two strings under one id (the test-only mask narrows every id to 1):
/// the second, appended by a plain intern that never looks its id up,
/// races a reader's snapshot, which settles the NC's by-id map first. The
/// snapshot holds the first string for the id, never the second, and
/// reports the conflict at most once; in the end the first string keeps the
/// id everywhere, and the conflict is recorded once.
#[test]
fn optimistic_settle_races_a_conflicting_insert() {
    loom::model(|| {
        let db = one_id_db::<OptimisticStrategy>("x");
        let writer = {
            let db = Arc::clone(&db);
            spawn(move || db.intern(0, "y").unwrap())
        };
        let reader = {
            let db = Arc::clone(&db);
            spawn(move || {
                let snapshot = db.snapshot();
                assert_eq!(snapshot.get(1), Some(&b"x"[..]));
                assert!(snapshot.conflicts().len() <= 1);
            })
        };
        assert_eq!(writer.join().unwrap(), 1);
        reader.join().unwrap();
        assert_eq!(db.resolve(0, 1).as_deref(), Some(&b"x"[..]));
        let conflicts = db.conflicts();
        assert_eq!(conflicts.len(), 1, "{conflicts:?}");
        assert_eq!(
            (&conflicts[0].kept[..], &conflicts[0].rejected[..]),
            (&b"x"[..], &b"y"[..])
        );
        assert_eq!(db.nc_len(0), 1);
        let snapshot = db.snapshot();
        assert_eq!(snapshot.len(), 1);
        assert_eq!(db.lookup(0, "y"), None);
    });
}

/// The striped shard's settle (`src/raw/optimistic/striped.rs`): an
/// intern that returned before another began is taken no later, across
/// stripes. Every id is 1. A filler is the NC's first shard's one entry
/// (the striped strategy, in loom builds, then moves it to stripes); `w`
/// (stripe 0) is interned next and left unsettled; then `a` (stripe 0) is
/// interned and, once it has returned (a flag), `b` (stripe 1), racing a
/// reader's settle. The conflicts must end with `a`'s then `b`'s. A settle
/// that took `b` without `a` (its bound's load not synchronising with
/// `b`'s numbering, which `a`'s publication happened before) records them
/// the other way round.
#[test]
fn striped_settle_keeps_the_calls_order_across_stripes() {
    let stripe = |name: &String| (placement(name) >> 32) & 1;
    let zero = names_where("w", 3, 2, |hash| (hash >> 32) & 1 == 0);
    let one = names_where("b", 3, 1, |hash| (hash >> 32) & 1 == 1);
    assert_eq!((stripe(&zero[1]), stripe(&one[0])), (0, 1));
    // The filler's and `w`'s interns, the move between them, take more
    // than loom's default of 1,000 branches before any thread is spawned.
    let mut model = loom::model::Builder::new();
    model.max_branches = 20_000;
    model.check(move || {
        let db = with_config::<StripedStrategy>(Config::new().ncs(1).narrow_id_mask_for_tests(0));
        let [w, a] = [zero[0].clone(), zero[1].clone()];
        let b = one[0].clone();
        let fillers: Vec<String> = (0..1).map(|i| format!("f{i}")).collect();
        for filler in &fillers {
            assert_eq!(db.intern(0, filler), Ok(1));
        }
        assert_eq!(db.intern(0, &w), Ok(1));
        let returned = Arc::new(AtomicBool::new(false));
        let first = {
            let (db, returned, a) = (Arc::clone(&db), Arc::clone(&returned), a.clone());
            spawn(move || {
                db.intern(0, &a).unwrap();
                returned.store(true, Ordering::Release);
            })
        };
        let second = {
            let (db, b) = (Arc::clone(&db), b.clone());
            spawn(move || {
                let after = returned.load(Ordering::Acquire);
                if after {
                    db.intern(0, &b).unwrap();
                }
                after
            })
        };
        let reader = {
            let db = Arc::clone(&db);
            spawn(move || db.conflict_count())
        };
        first.join().unwrap();
        let after = second.join().unwrap();
        assert!(reader.join().unwrap() <= 3);
        let rejected: Vec<Vec<u8>> = db
            .conflicts()
            .into_iter()
            .map(|c| c.rejected.to_vec())
            .collect();
        let mut expected: Vec<Vec<u8>> =
            fillers[1..].iter().map(|f| f.as_bytes().to_vec()).collect();
        expected.push(w.into_bytes());
        expected.push(a.into_bytes());
        if after {
            expected.push(b.into_bytes());
        }
        assert_eq!(rejected, expected);
        assert_eq!(db.resolve(0, 1).as_deref(), Some(fillers[0].as_bytes()));
    });
}

/// The reference's lock nesting: interns take an NC's write lock, a merge
/// takes the global read lock then each NC's read lock, and open/close take
/// the global write lock then the NC's write lock. Loom fails the model on
/// any interleaving that deadlocks.
#[test]
fn rwlock_lock_nesting_does_not_deadlock() {
    loom::model(|| {
        let db = db::<RwLockStrategy>(2);
        let interner = {
            let db = Arc::clone(&db);
            spawn(move || {
                let _ = db.intern(1, "x");
                db.intern(0, "y").unwrap();
            })
        };
        let toggler = {
            let db = Arc::clone(&db);
            spawn(move || {
                db.close_nc(1).unwrap();
                db.open_nc(1).unwrap();
            })
        };
        let merger = {
            let db = Arc::clone(&db);
            spawn(move || assert!(db.snapshot().len() <= 2))
        };
        interner.join().unwrap();
        toggler.join().unwrap();
        merger.join().unwrap();
        assert!(db.snapshot().contains(get_id(b"y")));
    });
}

/// A `lookup` finds the loser of a conflict by its bytes while another
/// thread settles, which finds it shadowed: it must never return the
/// loser's id, whatever it sees. The optimistic shard and a moved NC's
/// stripes answer without the by-id map's lock only if a settled end and
/// the shadowed flag say the entry holds its id first (`IdSide::holds_first`,
/// `StripedShard::find_settled_by_hash`): the end's release store and
/// acquire load order the flag, set first, before it.
fn lookup_races_the_settle_that_shadows_it<S: Strategy>() {
    loom::model(|| {
        let db = one_id_db::<S>("x");
        // Appended and indexed by its bytes, not settled: id 1 is "x"'s
        // (a moved NC's stripe holds "y", its frozen shard "x").
        assert_eq!(db.intern(0, "y"), Ok(1));
        let settler = {
            let db = Arc::clone(&db);
            spawn(move || db.conflicts().len())
        };
        let reader = {
            let db = Arc::clone(&db);
            spawn(move || db.lookup(0, "y"))
        };
        assert_eq!(settler.join().unwrap(), 1);
        assert_eq!(reader.join().unwrap(), None);
        assert_eq!(db.lookup(0, "x"), Some(1));
        assert_eq!(db.lookup(0, "y"), None);
    });
}

/// Makes each generic model `fn name<S: Strategy>()` a test `name` that
/// runs it on every strategy of the crate's one list
/// (`interned_string_db::for_each_strategy`), but those after `except`.
macro_rules! every_strategy {
    ($($model:ident $(except $skip:ty)?),* $(,)?) => {
        mod every_strategy {
            $(
                #[test]
                fn $model() {
                    struct Run;
                    impl interned_string_db::StrategyVisitor for Run {
                        fn visit<S: interned_string_db::Strategy>(&mut self) {
                            $(
                                if S::NAME == <$skip as interned_string_db::Strategy>::NAME {
                                    return;
                                }
                            )?
                            super::$model::<S>();
                        }
                    }
                    interned_string_db::for_each_strategy(&mut Run);
                }
            )*
        }
    };
}

// The lock-free strategy runs the two close models only: on its insert
// path (allocation, order claim, table CAS, frozen slots) the two-writer
// models do not finish in CI's time at 2 preemptions, and
// `tests/lock_free.rs` models the same races at a size loom can explore.
every_strategy! {
    same_and_different except interned_string_db::LockFreeStrategy,
    a_predicted_miss_races_an_insert except interned_string_db::LockFreeStrategy,
    snapshot_races_intern_and_close except interned_string_db::LockFreeStrategy,
    closed_shows_what_preceded,
    close_races_conflict,
    lookup_races_the_settle_that_shadows_it,
}
