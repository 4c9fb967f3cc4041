//! Loom models of the lock-free strategy (`src/raw/lock_free/`): run with
//! `loom-tests/run.sh`.
//!
//! In loom builds its first table has 2 slots unless the config asks for
//! more (so the second entry of a shard grows it), growth migrates one slot per insert, and the order
//! array's segments hold 2, 4, 8 ... positions, so every model here crosses
//! a growth and a segment publication. Every racing role runs in a spawned
//! thread; the main thread only sets up and checks. Entries carry a loom
//! cell written after their bytes and read before them, so a reader without
//! a happens-before edge from the writer fails the model.
#![cfg(interner_loom)]

use interned_string_db::{get_id, Config, Cursor, InternedStringDb, LockFreeStrategy, Registered};
use std::hash::BuildHasher;

use loom::sync::Arc;
use loom::thread;

type Db = InternedStringDb<LockFreeStrategy>;

fn db(config: Config) -> Arc<Db> {
    Arc::new(InternedStringDb::with_config(config.ncs(1)))
}

/// What a reader may see of `s` while it is being inserted: nothing, or all
/// of it under its own id.
fn check_visible(db: &Db, s: &str) {
    let id = get_id(s.as_bytes());
    if let Some(bytes) = db.resolve(0, id) {
        assert_eq!(&*bytes, s.as_bytes(), "a half-written entry was visible");
    }
}

/// Two threads intern the same string into an empty shard: both get its id,
/// exactly one inserts it, one entry is stored. The loser's entry is
/// allocated, claims a position and is marked dead.
#[test]
fn lock_free_same_string() {
    loom::model(|| {
        let db = db(Config::new());
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let db = Arc::clone(&db);
                thread::spawn(move || db.intern_with_outcome(0, b"a").unwrap())
            })
            .collect();
        let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(outcomes.iter().all(|&(id, _)| id == get_id(b"a")));
        let inserted = outcomes
            .iter()
            .filter(|(_, o)| *o == Registered::Inserted)
            .count();
        assert_eq!(inserted, 1, "{outcomes:?}");
        assert_eq!(db.nc_len(0), 1);
        assert_eq!(db.nc_bytes(0), 1, "the loser's reservation is released");
        assert_eq!(db.delta(&mut Cursor::new()).len(), 1);
    });
}

/// Two threads register different strings under one id (a caller's id, so
/// both race for the same probe sequence): the first placed is kept, the
/// other is a conflict, recorded once, and every reader sees the kept one.
#[test]
fn lock_free_one_id_two_strings() {
    loom::model(|| {
        let db = db(Config::new());
        let threads: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|s| {
                let db = Arc::clone(&db);
                thread::spawn(move || db.register(0, 7, s.as_bytes()).unwrap())
            })
            .collect();
        let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let kept = match outcomes[..] {
            [Registered::Inserted, Registered::Conflict] => "a",
            [Registered::Conflict, Registered::Inserted] => "b",
            _ => panic!("{outcomes:?}"),
        };
        assert_eq!(db.resolve(0, 7).as_deref(), Some(kept.as_bytes()));
        assert_eq!(db.conflict_count(), 1);
        assert_eq!(db.nc_len(0), 1);
        let snapshot = db.snapshot();
        assert_eq!(snapshot.get(7), Some(kept.as_bytes()));
        assert_eq!(snapshot.conflicts().len(), 1);
    });
}

/// Two threads intern two different strings into the 2-slot first table
/// (one probe sequence: the table has only these two slots), each then
/// taking a snapshot: the second insert grows the table while the first may
/// still be placing, and migrates the first's entry; the second claim may
/// find the first's position claimed and advance the frontier past it for
/// it. Nothing is lost, each snapshot holds its taker's string, and the
/// other's whole or not at all.
#[test]
fn lock_free_different_strings_race_growth() {
    loom::model(|| {
        let db = db(Config::new());
        let threads: Vec<_> = [("a", "b"), ("b", "a")]
            .into_iter()
            .map(|(own, other)| {
                let db = Arc::clone(&db);
                thread::spawn(move || {
                    let outcome = db.intern_with_outcome(0, own.as_bytes()).unwrap();
                    let snapshot = db.snapshot();
                    assert_eq!(snapshot.get_str(get_id(own.as_bytes())), Some(Ok(own)));
                    if let Some(found) = snapshot.get(get_id(other.as_bytes())) {
                        assert_eq!(found, other.as_bytes());
                    }
                    outcome
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap().1, Registered::Inserted);
        }
        assert_eq!(db.nc_len(0), 2);
        let snapshot = db.snapshot();
        assert_eq!(snapshot.len(), 2);
        for s in ["a", "b"] {
            assert_eq!(snapshot.get_str(get_id(s.as_bytes())), Some(Ok(s)));
        }
    });
}

/// An insert grows a table that already holds an entry, and migrates it,
/// while a reader resolves the old entry and looks for the new one: the old
/// one is always found whole (in the old table, frozen or not, or in the
/// new one), the new one whole or not at all. Then the db is reset (every
/// table but the first freed: the reclamation) and used again.
#[test]
fn lock_free_hit_races_growth_then_reset() {
    loom::model(|| {
        let mut db = db(Config::new());
        db.intern(0, "a").unwrap();
        let writer = {
            let db = Arc::clone(&db);
            thread::spawn(move || db.intern(0, "b").unwrap())
        };
        let reader = {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                assert_eq!(db.resolve(0, get_id(b"a")).as_deref(), Some(&b"a"[..]));
                check_visible(&db, "b");
            })
        };
        assert_eq!(writer.join().unwrap(), get_id(b"b"));
        reader.join().unwrap();
        assert_eq!(db.nc_len(0), 2);
        let db = Arc::get_mut(&mut db).expect("every thread joined");
        db.reset();
        assert_eq!(db.nc_len(0), 0);
        assert_eq!(db.resolve(0, get_id(b"a")), None);
        db.intern(0, "c").unwrap();
        assert_eq!(db.snapshot().len(), 1);
    });
}

/// A snapshot and a delta race an insert (which also publishes an order
/// segment and grows the table): the entry interned before is in both, the
/// racing one whole or not at all, and a later delta delivers what the
/// racing one missed, once.
#[test]
fn lock_free_walk_races_insert() {
    loom::model(|| {
        let db = db(Config::new());
        for s in ["a", "b"] {
            db.intern(0, s).unwrap();
        }
        let writer = {
            let db = Arc::clone(&db);
            thread::spawn(move || db.intern(0, "c").unwrap())
        };
        let walker = {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                let mut cursor = Cursor::new();
                let delta = db.delta(&mut cursor);
                for s in ["a", "b"] {
                    assert_eq!(delta.get_str(get_id(s.as_bytes())), Some(Ok(s)));
                }
                if let Some(c) = delta.get(get_id(b"c")) {
                    assert_eq!(c, b"c");
                }
                (cursor, delta.len())
            })
        };
        writer.join().unwrap();
        let (mut cursor, first) = walker.join().unwrap();
        let rest = db.delta(&mut cursor).len();
        assert_eq!(first + rest, 3, "each entry delivered once");
        assert_eq!(db.snapshot().len(), 3);
    });
}

/// The first slot `id` probes in the 2-slot first table of loom builds
/// (`src/raw/sizes.rs`: `Seeds`, `foldhash::fast::FixedState`), so that the
/// model can pick a name that lands where it needs it.
fn first_table_home(id: u64) -> usize {
    foldhash::fast::FixedState::default().hash_one(id) as usize & 1
}

/// Two inserts each migrate one slot of the first table (each helps when it
/// leaves the growing table), then resolve the entry stored before: it sits
/// in slot 0, so the thread that copies it is not always the one that moves
/// the root on, and each must find it, wherever it starts.
#[test]
fn lock_free_two_migrators() {
    let old = (0..)
        .map(|i| format!("old{i}"))
        .find(|s| first_table_home(get_id(s.as_bytes())) == 0)
        .unwrap();
    loom::model(move || {
        let db = db(Config::new());
        db.intern(0, &old).unwrap();
        let inserters: Vec<_> = ["x", "y"]
            .into_iter()
            .map(|s| {
                let (db, old) = (Arc::clone(&db), old.clone());
                thread::spawn(move || {
                    db.intern(0, s).unwrap();
                    db.resolve(0, get_id(old.as_bytes()))
                })
            })
            .collect();
        for t in inserters {
            let found = t.join().unwrap();
            assert_eq!(found.as_deref(), Some(old.as_bytes()), "lost in migration");
        }
        assert_eq!(db.nc_len(0), 3);
        assert_eq!(db.snapshot().len(), 3);
    });
}

/// A walk meets a position claimed by another thread that has not yet
/// advanced the frontier: the walker's own second insert advances it for
/// them (the claim lands in a segment the walker published, and the table
/// has room for all three, so nothing else orders the two threads). The
/// walk reads the pending entry, or after a yield the decided one, whole,
/// and holds it whole or not at all.
#[test]
fn lock_free_walk_meets_a_claim_it_helped_past() {
    loom::model(|| {
        let db = db(Config::new().initial_capacity(3));
        let other = {
            let db = Arc::clone(&db);
            thread::spawn(move || db.intern(0, "a").unwrap())
        };
        let walker = {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                db.intern(0, "b").unwrap();
                db.intern(0, "c").unwrap();
                // Once while the other insert may be pending, and once after
                // a yield (which lets it finish, unordered with this thread).
                for walk in 0..2 {
                    if walk == 1 {
                        thread::yield_now();
                    }
                    let snapshot = db.snapshot();
                    for s in ["b", "c"] {
                        assert_eq!(snapshot.get_str(get_id(s.as_bytes())), Some(Ok(s)));
                    }
                    if let Some(a) = snapshot.get(get_id(b"a")) {
                        assert_eq!(a, b"a");
                    }
                }
            })
        };
        other.join().unwrap();
        walker.join().unwrap();
        assert_eq!(db.snapshot().len(), 3);
    });
}
