//! Loom models: run with `loom-tests/run.sh`.
#![cfg(interner_loom)]

use interned_string_db::{
    get_id, Config, Error, InternedStringDb, OptimisticStrategy, Registered, RwLockStrategy,
    Strategy,
};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

fn db<S: Strategy>(ncs: usize) -> Arc<InternedStringDb<S>> {
    Arc::new(InternedStringDb::with_config(Config::new().ncs(ncs)))
}

/// What a reader may see of `s` while it is being inserted: nothing, or all
/// of it under its own id.
fn check_visible<S: Strategy>(db: &InternedStringDb<S>, nc: usize, s: &str) {
    let id = get_id(s.as_bytes());
    if let Some(bytes) = db.resolve(nc, id) {
        assert_eq!(&*bytes, s.as_bytes(), "a half-written entry was visible");
    }
    if let Some(found) = db.lookup(nc, s) {
        assert_eq!(found, id);
    }
}

/// Two threads insert the same string and one string each into one shard:
/// exactly one insert of the shared string wins, nothing is duplicated or
/// lost, and a racing reader never sees a half-written entry.
fn same_and_different<S: Strategy>() {
    loom::model(|| {
        let db = db::<S>(1);
        let threads: Vec<_> = [("b", "c"), ("c", "b")]
            .into_iter()
            .map(|(own, other)| {
                let db = Arc::clone(&db);
                thread::spawn(move || {
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
            assert_eq!(snapshot.get_str(get_id(s.as_bytes())), Some(s));
        }
    });
}

#[test]
fn optimistic_same_and_different() {
    same_and_different::<OptimisticStrategy>();
}

#[test]
fn rwlock_same_and_different() {
    same_and_different::<RwLockStrategy>();
}

/// A reader, in a thread of its own, races an insert that splits a bucket
/// of the by-bytes index: the hit path returns the right id for every entry
/// that was there before (a split may hide one from the lock-free probe,
/// and the locked re-check then finds it), and sees the new entry whole or
/// not at all.
#[test]
fn optimistic_reader_races_growth() {
    loom::model(|| {
        // In loom builds a bucket holds 2 words, a segment 1 bucket, and the
        // table splits past 1 entry per bucket: every insert splits.
        let db = db::<OptimisticStrategy>(1);
        let before = ["k0", "k1"];
        for s in before {
            db.intern(0, s).unwrap();
        }
        let writer = {
            let db = Arc::clone(&db);
            thread::spawn(move || db.intern(0, "grows").unwrap())
        };
        let reader = {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                for s in before {
                    assert_eq!(db.intern(0, s), Ok(get_id(s.as_bytes())), "{s} lost");
                }
                check_visible(&db, 0, "grows");
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert_eq!(db.lookup(0, "grows"), Some(get_id(b"grows")));
        assert_eq!(db.nc_len(0), 3);
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
            thread::spawn(move || {
                db.intern(0, "a").unwrap();
                a_done.store(true, Ordering::Release);
                db.intern(1, "b")
            })
        };
        let closer = {
            let db = Arc::clone(&db);
            thread::spawn(move || db.close_nc(1).unwrap())
        };
        let a_was_done = a_done.load(Ordering::Acquire);
        let snapshot = db.snapshot();
        if a_was_done {
            assert_eq!(snapshot.get_str(get_id(b"a")), Some("a"));
        }
        assert!(snapshot.len() <= 2);
        let b = interner.join().unwrap();
        closer.join().unwrap();
        assert!(matches!(b, Ok(_) | Err(Error::NcClosed { nc: 1 })), "{b:?}");
        let after = db.snapshot();
        assert_eq!(after.get_str(get_id(b"a")), Some("a"));
        assert!(!after.contains(get_id(b"b")), "NC 1 is closed");
        assert_eq!(db.intern(1, "c"), Err(Error::NcClosed { nc: 1 }));
        assert_eq!(db.nc_len(1), usize::from(b.is_ok()));
    });
}

#[test]
fn optimistic_snapshot_races_intern_and_close() {
    snapshot_races_intern_and_close::<OptimisticStrategy>();
}

#[test]
fn rwlock_snapshot_races_intern_and_close() {
    snapshot_races_intern_and_close::<RwLockStrategy>();
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
            thread::spawn(move || {
                let _ = db.intern(1, "x");
                db.intern(0, "y").unwrap();
            })
        };
        let toggler = {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                db.close_nc(1).unwrap();
                db.open_nc(1).unwrap();
            })
        };
        let snapshot = db.snapshot();
        assert!(snapshot.len() <= 2);
        interner.join().unwrap();
        toggler.join().unwrap();
        assert!(db.snapshot().contains(get_id(b"y")));
    });
}

/// An entry registered with a caller's id that is the hash is promoted into
/// the by-bytes index by the first intern that finds it; two interns race to
/// do it while a reader looks it up. Nothing is duplicated and every answer
/// is the id.
#[test]
fn optimistic_promotion_races_interns() {
    loom::model(|| {
        let db = db::<OptimisticStrategy>(1);
        let id = get_id(b"p");
        assert_eq!(db.register(0, id, b"p"), Ok(Registered::Inserted));
        let interns: Vec<_> = (0..2)
            .map(|_| {
                let db = Arc::clone(&db);
                thread::spawn(move || db.intern(0, "p").unwrap())
            })
            .collect();
        check_visible(&db, 0, "p");
        for t in interns {
            assert_eq!(t.join().unwrap(), id);
        }
        assert_eq!(db.nc_len(0), 1);
        assert_eq!(db.snapshot().len(), 1);
    });
}
