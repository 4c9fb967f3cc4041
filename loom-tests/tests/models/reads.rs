//! The optimistic shard's lock-free readers racing its writer: hits
//! (single and batched) racing inserts, overflows, splits, directory growth
//! and a chain's compaction; a hit followed by a snapshot; `resolve` racing
//! splits, and its settles racing appends and rebuilding the by-id map; a
//! walk racing slab
//! growth, and deltas racing a new arena (a `lookup` racing the settle
//! that finds its entry shadowed is every strategy's, in `models.rs`).
//! Part of the `models` test binary
//! (`loom-tests/run.sh`).

use super::*;

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
                    Some(Ok(&racing[..])),
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
/// past the first does in loom builds) and grows its segment directory,
/// and settles the by-id map (a `resolve` that the map cannot answer does
/// first, from the log, under the map's own lock): a stored id always
/// resolves to its bytes, and the racing one to nothing or to all of its
/// bytes. `resolve` takes no lock of the writer's: the map under its
/// shared lock, then, if the map lacks the id, a lock-free walk of what
/// the map lacks.
#[test]
fn optimistic_resolve_races_split() {
    let stored = names_where("i", 2, 2, |_| true);
    let racing = names_where("r", 2, 1, |_| true).remove(0);
    resolve_races_insert(stored, racing, &[0, 1], 0);
}

/// `resolve` races an insert while its settle rebuilds the by-id map: the
/// first map has room for 3 entries in loom builds and holds the first 2
/// stored ones, settled before the race; the other 2 (a reader settles
/// once the map lags 2 behind, in loom builds) and perhaps the racing one
/// need a larger one, built from a walk of the log and swapped in under
/// the exclusive lock. Every stored id resolves to its bytes throughout,
/// and the racing one to nothing or to all of its bytes.
#[test]
fn optimistic_resolve_races_rebuild() {
    let stored = names_where("b", 2, 4, |_| true);
    let racing = names_where("q", 2, 1, |_| true).remove(0);
    resolve_races_insert(stored, racing, &[0, 3], 2);
}

/// Interns `stored` into one optimistic NC (settling its by-id map after
/// the first `settled` of them, if any), then races the insert of `racing`
/// against a reader that resolves the stored names at `resolved` (each to
/// its bytes) and checks what it sees of `racing`; after both, every name
/// resolves.
fn resolve_races_insert(
    stored: Vec<String>,
    racing: String,
    resolved: &'static [usize],
    settled: usize,
) {
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        for (i, name) in stored.iter().enumerate() {
            db.intern(0, name).unwrap();
            if i + 1 == settled {
                assert_eq!(db.conflict_count(), 0);
            }
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
/// the reader's settles (each snapshot settles the by-id map first, and
/// each resolve that the map cannot answer) race the writer's appends, so
/// the reader's lookup races entries moving from the part the map lacks,
/// which the reader walks, into the map, and a resolve after the snapshot
/// answers from the map alone while the writer appends; and the first
/// entry races the making of the by-id side.
#[test]
fn optimistic_resolve_after_intern_races_catch_up() {
    let names = names_where("c", 2, 2, |_| true);
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
            assert_eq!(
                snapshot.get_str(get_id(name.as_bytes())),
                Some(Ok(&name[..]))
            );
        }
        let seen: Vec<bool> = racing
            .iter()
            .map(|name| match snapshot.get_str(get_id(name.as_bytes())) {
                Some(got) => {
                    assert_eq!(got, Ok(&name[..]), "a half-written entry was walked");
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

/// Deltas race inserts that fill a slab from below (its arena bumps
/// downwards) and open a new arena: a cursor resumes from the low-water mark
/// it reached in the old slab. Every entry arrives once and whole, and the
/// deltas add up to everything interned.
#[test]
fn optimistic_delta_races_a_new_arena() {
    // Records of 18 bytes: two to a 40-byte slab.
    let names = names_where("d", 10, 3, |_| true);
    loom::model(move || {
        let db = db::<OptimisticStrategy>(1);
        db.intern(0, &names[0]).unwrap();
        let writer = {
            let (db, names) = (Arc::clone(&db), names.clone());
            // The second fills the first slab, the third opens a new arena.
            spawn(move || {
                for name in &names[1..] {
                    db.intern(0, name).unwrap();
                }
            })
        };
        let reader = {
            let db = Arc::clone(&db);
            spawn(move || {
                let mut cursor = Cursor::new();
                let first = db.delta(&mut cursor);
                let second = db.delta(&mut cursor);
                (cursor, first, second)
            })
        };
        writer.join().unwrap();
        let (mut cursor, first, second) = reader.join().unwrap();
        let last = db.delta(&mut cursor);
        let mut seen: Vec<Vec<u8>> = [first, second, last]
            .iter()
            .flat_map(|delta| delta.iter().map(|(id, bytes)| (id, bytes.to_vec())))
            .map(|(id, bytes)| {
                assert_eq!(id, get_id(&bytes), "a half-written entry was walked");
                bytes
            })
            .collect();
        seen.sort();
        let mut all: Vec<Vec<u8>> = names.iter().map(|n| n.as_bytes().to_vec()).collect();
        all.sort();
        assert_eq!(seen, all, "each entry once");
    });
}
