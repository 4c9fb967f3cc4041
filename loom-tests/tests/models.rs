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
    get_id, Config, Error, InternedStringDb, OptimisticStrategy, Registered, RwLockStrategy,
    Strategy,
};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

fn db<S: Strategy>(ncs: usize) -> Arc<InternedStringDb<S>> {
    with_config(Config::new().ncs(ncs))
}

fn with_config<S: Strategy>(config: Config) -> Arc<InternedStringDb<S>> {
    Arc::new(InternedStringDb::with_config(config))
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
            assert_eq!(snapshot.get_str(get_id(s.as_bytes())), Some(s));
        }
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

/// Interns `stored` in one NC, then two threads intern `racing`: one inserts
/// it while the other probes the index lock-free. Both get its id, exactly
/// one inserts it, and everything is stored once.
fn race_to_insert(stored: &[String], racing: &str) {
    let (stored, racing) = (stored.to_vec(), racing.to_string());
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        for name in &stored {
            db.intern(0, name).unwrap();
        }
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (db, name) = (Arc::clone(&db), racing.clone());
                spawn(move || db.intern_with_outcome(0, name.as_bytes()).unwrap())
            })
            .collect();
        let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let id = get_id(racing.as_bytes());
        assert!(outcomes.iter().all(|&(got, _)| got == id), "{outcomes:?}");
        let inserted = outcomes
            .iter()
            .filter(|(_, o)| *o == Registered::Inserted)
            .count();
        assert_eq!(inserted, 1, "{outcomes:?}");
        assert_eq!(db.nc_len(0), stored.len() + 1);
        for name in stored.iter().chain([&racing]) {
            assert_eq!(db.intern(0, name), Ok(get_id(name.as_bytes())));
        }
    });
}

/// A hit races the insert of its string into an index that exists, so the
/// slot word's release is the only edge from the record to the reader (the
/// first insert of a shard also publishes the index's directory).
#[test]
fn optimistic_hit_races_insert() {
    race_to_insert(&["z".to_string()], "a");
}

/// A hit races the insert of its string into a full bucket: a new overflow
/// bucket, linked with release, then a split that moves the string on.
#[test]
fn optimistic_hit_races_overflow_and_split() {
    // All three in bucket 0 of a 2-bucket index; the racing one has bit 1
    // set, so the split after its insert moves it to bucket 2.
    let stored = names_where("o", 2, 2, |h| h % 4 == 0);
    race_to_insert(&stored, &names_where("r", 2, 1, |h| h % 4 == 2)[0]);
}

/// A by-bytes reader (the hit path: `intern` of a stored string) races an
/// insert that opens a new log slab, grows the slab directory, splits the
/// bucket holding the reader's string (moving it) and grows the index's
/// segment directory. Every hit returns the right id (a split may hide the
/// string from the lock-free probe; the locked re-check then finds it).
#[test]
fn optimistic_hit_races_split_and_growth() {
    // After 4 inserts the index has 4 buckets and a full segment directory,
    // and the log 4 full slabs in a full directory. The 5th insert splits
    // bucket 0 into bucket 4: `moving` (placed at 4 mod 8) goes there.
    let moving = names_where("m", SLAB_FILLING, 1, |h| h % 8 == 4);
    let staying = names_where("s", SLAB_FILLING, 3, |h| h % 8 != 4);
    let new = names_where("n", SLAB_FILLING, 1, |_| true);
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        for name in staying.iter().chain(&moving) {
            db.intern(0, name).unwrap();
        }
        let writer = {
            let (db, name) = (Arc::clone(&db), new[0].clone());
            spawn(move || db.intern(0, &name).unwrap())
        };
        let reader = {
            let (db, moving, staying) = (Arc::clone(&db), moving[0].clone(), staying[0].clone());
            spawn(move || {
                for name in [moving, staying] {
                    assert_eq!(db.intern(0, &name), Ok(get_id(name.as_bytes())), "{name}");
                }
            })
        };
        assert_eq!(writer.join().unwrap(), get_id(new[0].as_bytes()));
        reader.join().unwrap();
        assert_eq!(db.nc_len(0), 5);
        for name in staying.iter().chain(&moving).chain(&new) {
            assert_eq!(db.lookup(0, name), Some(get_id(name.as_bytes())), "{name}");
        }
    });
}

/// A hit races a split that compacts its bucket's chain and hands the
/// emptied overflow bucket back, and the next insert, which links that
/// bucket again with the hit's own string in it. The reader may have
/// loaded the link to the bucket before it was unlinked, and read the
/// string's word there without reaching it through the new link: the
/// word's own release is then the only edge from the record to the reader.
#[test]
fn optimistic_hit_races_compaction_and_reuse() {
    // Inserted in this order into a 1-bucket index that splits on every
    // insert past the first: `first` and `moving` fill bucket 0, and
    // `staying` overflows it into a bucket of its own; `other` goes to
    // bucket 1. The writer's first insert splits bucket 0 at level 2:
    // `moving` leaves, `staying` moves up into its slot, and the overflow
    // bucket is handed back. Its second insert, the reader's string, finds
    // bucket 0 full and links the handed-back bucket again.
    let at = |residue: u64| move |h: u64| h % 8 == residue;
    let first = names_where("f", 2, 1, at(0)).remove(0);
    let moving = names_where("m", 2, 1, at(4)).remove(0);
    let other = names_where("o", 2, 1, at(1)).remove(0);
    let staying = names_where("s", 2, 1, at(0)).remove(0);
    let splitting = names_where("p", 2, 1, at(3)).remove(0);
    let racing = names_where("r", 2, 1, at(0)).remove(0);
    let stored = [first, moving, other, staying];
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        for name in &stored {
            db.intern(0, name).unwrap();
        }
        let writer = {
            let (db, splitting, racing) = (Arc::clone(&db), splitting.clone(), racing.clone());
            spawn(move || {
                db.intern(0, &splitting).unwrap();
                db.intern(0, &racing).unwrap()
            })
        };
        let reader = {
            let (db, racing) = (Arc::clone(&db), racing.clone());
            spawn(move || db.intern(0, &racing).unwrap())
        };
        let id = get_id(racing.as_bytes());
        assert_eq!(writer.join().unwrap(), id);
        assert_eq!(reader.join().unwrap(), id);
        assert_eq!(db.nc_len(0), 6);
        for name in stored.iter().chain([&splitting, &racing]) {
            assert_eq!(db.lookup(0, name), Some(get_id(name.as_bytes())), "{name}");
        }
    });
}

/// The pipelined batch lookup (`intern_batch`: bucket prefetch, first
/// candidate, compare) races the first insert, which builds the index, and
/// the second, which splits it into a new segment, where the batch's name
/// goes.
#[test]
fn optimistic_batch_races_first_inserts() {
    let first = names_where("f", 2, 1, |_| true).remove(0);
    let second = names_where("s", 2, 1, |h| h % 2 == 1).remove(0);
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        let writer = {
            let (db, first, second) = (Arc::clone(&db), first.clone(), second.clone());
            spawn(move || {
                db.intern(0, &first).unwrap();
                db.intern(0, &second).unwrap();
            })
        };
        let batch = {
            let (db, second) = (Arc::clone(&db), second.clone());
            spawn(move || {
                let mut ids = [0];
                db.intern_batch(0, &[second], &mut ids).unwrap();
                ids[0]
            })
        };
        writer.join().unwrap();
        assert_eq!(batch.join().unwrap(), get_id(second.as_bytes()));
        assert_eq!(db.nc_len(0), 2);
    });
}

/// A hit on an entry that another thread is still inserting returns; a
/// snapshot taken right after it must hold the entry. The insert splits a
/// bucket (every insert past the first does in loom builds), so a shard
/// that made the entry findable by hits before publishing it to walks
/// would let the snapshot miss it.
#[test]
fn optimistic_hit_then_snapshot_holds_the_entry() {
    let stored = names_where("h", 2, 1, |_| true).remove(0);
    let racing = names_where("r", 2, 1, |_| true).remove(0);
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        db.intern(0, &stored).unwrap();
        let writer = {
            let (db, racing) = (Arc::clone(&db), racing.clone());
            spawn(move || db.intern(0, &racing).unwrap())
        };
        let reader = {
            let (db, racing) = (Arc::clone(&db), racing.clone());
            spawn(move || {
                let id = db.intern(0, &racing).unwrap();
                assert_eq!(
                    db.snapshot().get_str(id),
                    Some(&racing[..]),
                    "the intern returned before the snapshot"
                );
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert_eq!(db.nc_len(0), 2);
    });
}

/// `resolve` races an insert that splits the by-bytes index (every insert
/// past the first does in loom builds), grows its segment directory and
/// brings the by-id map up to date (the third insert does: in loom builds
/// the map takes its entries two at a time): a stored id always resolves to
/// its bytes, and the racing one to nothing or to all of its bytes.
/// `resolve` takes no exclusive lock: the map under its shared lock, then a
/// lock-free walk of what it lacks.
#[test]
fn optimistic_resolve_races_split() {
    let stored = names_where("i", 2, 2, |_| true);
    let racing = names_where("r", 2, 1, |_| true).remove(0);
    resolve_races_insert(stored, racing, &[0, 1]);
}

/// `resolve` races an insert that rebuilds the by-id map (the first map has
/// room for 7 entries, so the 8th insert builds a larger one and swaps it
/// in under the exclusive lock): every stored id resolves to its bytes
/// throughout, and the racing one to nothing or to all of its bytes.
#[test]
fn optimistic_resolve_races_rebuild() {
    let stored = names_where("b", 2, 7, |_| true);
    let racing = names_where("q", 2, 1, |_| true).remove(0);
    resolve_races_insert(stored, racing, &[0, 6]);
}

/// Interns `stored` into one optimistic NC, then races the insert of
/// `racing` against a reader that resolves the stored names at `resolved`
/// (each to its bytes) and checks what it sees of `racing`; after both,
/// every name resolves.
fn resolve_races_insert(stored: Vec<String>, racing: String, resolved: &'static [usize]) {
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        for name in &stored {
            db.intern(0, name).unwrap();
        }
        let writer = {
            let (db, racing) = (Arc::clone(&db), racing.clone());
            spawn(move || db.intern(0, &racing).unwrap())
        };
        let reader = {
            let (db, stored, racing) = (Arc::clone(&db), stored.clone(), racing.clone());
            spawn(move || {
                for name in resolved.iter().map(|&i| &stored[i]) {
                    let bytes = db.resolve(0, get_id(name.as_bytes()));
                    assert_eq!(bytes.as_deref(), Some(name.as_bytes()), "{name}");
                }
                check_visible(&db, 0, &racing);
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        for name in stored.iter().chain([&racing]) {
            let bytes = db.resolve(0, get_id(name.as_bytes()));
            assert_eq!(bytes.as_deref(), Some(name.as_bytes()));
        }
    });
}

/// `resolve` of an id whose intern returned (a flag, released after it,
/// says so), or that a snapshot showed, finds it while the writer goes on:
/// its next inserts bring the by-id map up to date (every second insert in
/// loom builds), so the reader's lookup races the entry moving from the
/// part the map lacks, which the reader walks, into the map; and the first
/// entry races the making of the by-id side.
#[test]
fn optimistic_resolve_after_intern_races_catch_up() {
    let names = names_where("c", 2, 3, |_| true);
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        let returned = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, names, returned) = (Arc::clone(&db), names.clone(), Arc::clone(&returned));
            spawn(move || {
                db.intern(0, &names[0]).unwrap();
                returned.store(true, Ordering::Release);
                for name in &names[1..] {
                    db.intern(0, name).unwrap();
                }
            })
        };
        let reader = {
            let (db, names, returned) = (Arc::clone(&db), names.clone(), Arc::clone(&returned));
            spawn(move || {
                // The first entry, seen by a walk (which acquires the log's
                // end): the by-id side it was made with is seen too.
                let id = get_id(names[0].as_bytes());
                if db.snapshot().get_str(id).is_some() {
                    let bytes = db.resolve(0, id);
                    assert_eq!(
                        bytes.as_deref(),
                        Some(names[0].as_bytes()),
                        "walked, not found"
                    );
                }
                if returned.load(Ordering::Acquire) {
                    let bytes = db.resolve(0, id);
                    assert_eq!(bytes.as_deref(), Some(names[0].as_bytes()));
                }
                check_visible(&db, 0, &names[1]);
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        for name in &names {
            let bytes = db.resolve(0, get_id(name.as_bytes()));
            assert_eq!(bytes.as_deref(), Some(name.as_bytes()));
        }
    });
}

// ---------------------------------------------------------------------------
// Walks.

/// A walk (`snapshot`) races inserts that open a new slab, grow the slab
/// directory, then cross into another new slab. The walk holds everything
/// interned before it began, and of the racing inserts a prefix in
/// insertion order, each whole.
#[test]
fn optimistic_walk_races_slab_growth() {
    let before = names_where("w", SLAB_FILLING, 4, |_| true);
    // A long one (a 5th slab, which grows the directory), then a short one
    // that does not fit after it (a 6th slab).
    let racing = [
        names_where("l", SLAB_FILLING, 1, |_| true).remove(0),
        "x".to_string(),
    ];
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        for name in &before {
            db.intern(0, name).unwrap();
        }
        let writer = {
            let (db, racing) = (Arc::clone(&db), racing.clone());
            spawn(move || {
                for name in &racing {
                    db.intern(0, name).unwrap();
                }
            })
        };
        let walker = {
            let db = Arc::clone(&db);
            spawn(move || db.snapshot())
        };
        writer.join().unwrap();
        let snapshot = walker.join().unwrap();
        for name in &before {
            assert_eq!(snapshot.get_str(get_id(name.as_bytes())), Some(&name[..]));
        }
        let seen: Vec<bool> = racing
            .iter()
            .map(|name| match snapshot.get_str(get_id(name.as_bytes())) {
                Some(got) => {
                    assert_eq!(got, name, "a half-written entry was walked");
                    true
                }
                None => false,
            })
            .collect();
        assert!(seen[0] || !seen[1], "the walk skipped an entry: {seen:?}");
        assert_eq!(
            snapshot.len(),
            before.len() + seen.iter().filter(|&&s| s).count()
        );
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
                    assert_eq!(snapshot.get_str(get_id(b"a")), Some("a"));
                }
                assert!(snapshot.len() <= 2);
            })
        };
        let b = interner.join().unwrap();
        closer.join().unwrap();
        snapshotter.join().unwrap();
        assert!(matches!(b, Ok(_) | Err(Error::NcClosed { nc: 1 })), "{b:?}");
        let after = db.snapshot();
        assert_eq!(after.get_str(get_id(b"a")), Some("a"));
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
        let db = with_config::<S>(Config::new().ncs(1).narrow_id_mask_for_tests(0));
        assert_eq!(db.intern(0, "a"), Ok(1));
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

/// A promotion (an intern finding, under the lock, an entry stored under its
/// hash that is not in the by-bytes index, and indexing it) races a close and
/// a hit. The only way to such an entry is an index that could not allocate
/// when it was stored: the model fails the index's first allocation.
#[test]
fn optimistic_close_races_promotion() {
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
        assert_eq!(stored, Ok(Registered::Inserted));
        assert!(FAILED.with(Cell::get) > 0, "the index was built after all");
        let promoter = {
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
        for t in [promoter, hit] {
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

/// The models above, per strategy in loom builds (the crate's one list:
/// `optimistic::same_and_different`, ...). The lock-free strategy runs the
/// two close models only: on its insert path (allocation, order claim, table
/// CAS, frozen slots) the two-writer models below do not finish in CI's
/// time at 2 preemptions (one ran for over 8 minutes), and
/// `tests/lock_free.rs` models the same races at a size loom can explore.
macro_rules! models_per_strategy {
    ({}) => {};
    ({} lock_free: $strategy:path, $($rest:tt)*) => {
        mod lock_free {
            $crate::close_models!($strategy);
        }
        models_per_strategy!({} $($rest)*);
    };
    ({} $module:ident: $strategy:path, $($rest:tt)*) => {
        mod $module {
            #[test]
            fn same_and_different() {
                super::same_and_different::<$strategy>();
            }

            #[test]
            fn snapshot_races_intern_and_close() {
                super::snapshot_races_intern_and_close::<$strategy>();
            }

            $crate::close_models!($strategy);
        }
        models_per_strategy!({} $($rest)*);
    };
}

/// The models of closing an NC, for one strategy.
#[macro_export]
macro_rules! close_models {
    ($strategy:path) => {
        #[test]
        fn closed_shows_what_preceded() {
            super::closed_shows_what_preceded::<$strategy>();
        }

        #[test]
        fn close_races_conflict() {
            super::close_races_conflict::<$strategy>();
        }
    };
}

interned_string_db::__for_each_strategy!(models_per_strategy {});
