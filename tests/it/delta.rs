//! Deltas: what `InternedStringDb::delta` delivers to a cursor, run against
//! every strategy.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};

use interned_string_db::{Config, Conflict, Cursor, InternedStringDb, Snapshot, Strategy};

fn db<S: Strategy>(ncs: usize) -> InternedStringDb<S> {
    InternedStringDb::with_config(Config::new().ncs(ncs))
}

type Entries = BTreeMap<u64, Vec<u8>>;

/// Adds `delta` to `union`, checking that no id arrives twice.
fn absorb(union: &mut Entries, conflicts: &mut BTreeSet<Conflict>, delta: &Snapshot) {
    for (id, bytes) in delta {
        let before = union.insert(id, bytes.to_vec());
        assert!(before.is_none(), "id {id} delivered twice");
    }
    conflicts.extend(delta.conflicts().iter().cloned());
}

fn entries(snapshot: &Snapshot) -> Entries {
    snapshot.iter().map(|(id, b)| (id, b.to_vec())).collect()
}

/// A fresh cursor's first delta is the snapshot, conflicts included.
fn first_delta_is_the_snapshot<S: Strategy>() {
    let db = db::<S>(4);
    for i in 0..500 {
        db.intern(i % 4, &crate::common::name(0, i)).unwrap();
        db.intern((i + 1) % 4, &crate::common::name(0, i)).unwrap(); // on two NCs
    }
    db.register(2, 77, b"seventy-seven").unwrap();
    db.register(1, 77, b"other 77").unwrap(); // across NCs: NC 1 is kept
    db.register(3, 78, b"a").unwrap();
    db.register(3, 78, b"b").unwrap(); // in NC 3's log
    let delta = db.delta(&mut Cursor::new());
    assert_eq!(delta, db.snapshot());
    assert_eq!(delta.len(), 502);
    assert_eq!(delta.conflicts().len(), 2);
}

/// Deltas taken between interns add up to the snapshot, with no id twice,
/// and an empty delta when nothing is new.
fn deltas_add_up_to_the_snapshot<S: Strategy>() {
    let db = db::<S>(8);
    let mut cursor = Cursor::new();
    let (mut union, mut conflicts) = (Entries::new(), BTreeSet::new());
    let mut deltas = Vec::new();
    for round in 0..10 {
        for i in 0..300 {
            // Names repeat across rounds and NCs.
            db.intern(
                (i * 7 + round) % 8,
                &crate::common::name(i % 3, i * round % 700),
            )
            .unwrap();
        }
        deltas.push(db.delta(&mut cursor));
        absorb(&mut union, &mut conflicts, deltas.last().unwrap());
    }
    db.register(5, 1, b"one").unwrap();
    db.register(6, 1, b"uno").unwrap();
    deltas.push(db.delta(&mut cursor));
    absorb(&mut union, &mut conflicts, deltas.last().unwrap());
    let snapshot = db.snapshot();
    assert_eq!(Snapshot::merge(&deltas), snapshot);
    assert_eq!(union, entries(&snapshot));
    assert_eq!(conflicts, snapshot.conflicts().iter().cloned().collect());
    assert_eq!(cursor.delivered(), snapshot.len());
    assert!(db.delta(&mut cursor).is_empty());
}

/// Conflicts are reported in the delta that meets them, once, even when the
/// kept string was delivered in an earlier delta.
fn new_conflicts_are_reported_once<S: Strategy>() {
    let db = db::<S>(3);
    let mut cursor = Cursor::new();
    db.register(0, 9, b"nine").unwrap();
    assert!(db.delta(&mut cursor).conflicts().is_empty());
    db.register(2, 9, b"neuf").unwrap(); // another NC
    db.register(0, 9, b"nueve").unwrap(); // NC 0's log
    let delta = db.delta(&mut cursor);
    assert!(delta.is_empty(), "id 9 was delivered already");
    let got: Vec<(u64, &[u8], &[u8])> = delta
        .conflicts()
        .iter()
        .map(|c| (c.id, &*c.kept, &*c.rejected))
        .collect();
    assert_eq!(
        got,
        [(9, &b"nine"[..], &b"neuf"[..]), (9, b"nine", b"nueve")]
    );
    assert!(db.delta(&mut cursor).conflicts().is_empty());
    // NC 2's log now contests its "neuf": only the new bytes are new (its
    // "neuf" was reported against "nine" already).
    db.register(2, 9, b"nove").unwrap();
    let conflicts = db.delta(&mut cursor).conflicts().to_vec();
    let got: Vec<(u64, &[u8], &[u8])> = conflicts
        .iter()
        .map(|c| (c.id, &*c.kept, &*c.rejected))
        .collect();
    assert_eq!(got, [(9, &b"nine"[..], &b"nove"[..])]);
}

/// A delta counts the conflicts dropped past the budget since the cursor's
/// last delta visited their NC; the counts add up to the snapshot's, and a
/// closed NC's count waits for it to reopen.
fn deltas_count_conflicts_newly_dropped<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(
        Config::new()
            .ncs(2)
            .conflict_budget(0)
            .narrow_id_mask_for_tests(0),
    );
    let mut cursor = Cursor::new();
    db.intern(0, "first").unwrap();
    db.intern(1, "first").unwrap();
    assert_eq!(db.delta(&mut cursor).conflicts_dropped(), 0);
    db.intern(0, "second").unwrap();
    db.intern(0, "third").unwrap();
    db.intern(1, "second").unwrap();
    assert_eq!(db.delta(&mut cursor).conflicts_dropped(), 3);
    assert_eq!(db.delta(&mut cursor).conflicts_dropped(), 0, "counted once");
    db.close_nc(1).unwrap();
    db.intern(0, "fourth").unwrap();
    db.open_nc(1).unwrap();
    db.intern(1, "third").unwrap();
    db.close_nc(1).unwrap();
    assert_eq!(db.delta(&mut cursor).conflicts_dropped(), 1, "NC 0 only");
    db.open_nc(1).unwrap();
    assert_eq!(
        db.delta(&mut cursor).conflicts_dropped(),
        1,
        "NC 1 caught up"
    );
    assert_eq!(db.snapshot().conflicts_dropped(), 5);
    assert_eq!(db.conflicts_dropped(), 5);
}

/// Saved deltas load back, and merged in order are the snapshot; a delta
/// that cannot be saved is delivered again by the next one.
fn saved_deltas_merge_into_the_snapshot<S: Strategy>() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("delta-save-{}", S::NAME));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = db::<S>(4);
    let mut cursor = Cursor::new();
    let mut loaded = Vec::new();
    for round in 0..3 {
        for i in 0..200 {
            db.intern((i + round) % 4, &crate::common::name(round, i))
                .unwrap();
        }
        if round == 1 {
            db.register(2, 5, b"five").unwrap();
            db.register(3, 5, b"cinq").unwrap();
            let missing = dir.join("no such directory").join("delta");
            assert!(db.save_delta(&mut cursor, &missing).is_err());
            assert!(!missing.exists());
        }
        let path = dir.join(format!("delta-{round}"));
        let saved = db.save_delta(&mut cursor, &path).unwrap();
        assert_eq!(saved.len(), 200 + usize::from(round == 1), "round {round}");
        let back = Snapshot::load(&path).unwrap();
        assert_eq!(back, saved);
        loaded.push(back);
    }
    let snapshot = db.snapshot();
    assert_eq!(Snapshot::merge(&loaded), snapshot);
    assert_eq!(snapshot.conflicts().len(), 1);
    assert_eq!(cursor.delivered(), snapshot.len());
    assert!(db.delta(&mut cursor).is_empty());
}

/// A closed NC delivers nothing and keeps its place; after it reopens, its
/// undelivered entries arrive.
fn closed_nc_catches_up_after_reopening<S: Strategy>() {
    let db = db::<S>(2);
    let mut cursor = Cursor::new();
    db.intern(1, "before").unwrap();
    db.close_nc(1).unwrap();
    db.intern(0, "open").unwrap();
    let delta = db.delta(&mut cursor);
    assert_eq!(delta.len(), 1);
    assert_eq!(delta.get_str(db.id_of(b"open")), Some(Ok("open")));
    db.open_nc(1).unwrap();
    db.intern(1, "after").unwrap();
    let delta = db.delta(&mut cursor);
    let names: Vec<&[u8]> = delta.iter().map(|(_, b)| b).collect();
    assert_eq!(delta.len(), 2, "{names:?}");
    assert!(delta.contains(db.id_of(b"before")) && delta.contains(db.id_of(b"after")));
}

/// After a reset, or on another db, a cursor starts over.
fn stale_cursor_starts_over<S: Strategy>() {
    let mut db = db::<S>(2);
    let mut cursor = Cursor::new();
    db.intern(0, "a").unwrap();
    db.intern(1, "b").unwrap();
    assert_eq!(db.delta(&mut cursor).len(), 2);
    db.reset();
    db.intern(1, "b").unwrap();
    let delta = db.delta(&mut cursor);
    assert_eq!(delta.len(), 1, "b again, for the new contents");
    let other = self::db::<S>(3);
    other.intern(2, "a").unwrap();
    assert_eq!(other.delta(&mut cursor).len(), 1);
    assert!(other.delta(&mut cursor).is_empty());
}

/// Four threads intern while NCs close and reopen and the main thread takes
/// deltas: every delivered entry is whole (its id is its bytes' id), no id
/// arrives twice, and once everything stops, the deltas add up to the
/// snapshot.
fn deltas_while_interning_and_closing<S: Strategy>() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 2_000;
    let db = db::<S>(8);
    let stop = AtomicBool::new(false);
    let mut cursor = Cursor::new();
    let (mut union, mut conflicts) = (Entries::new(), BTreeSet::new());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    for i in 0..PER_THREAD {
                        let name = crate::common::name(t % 2, i); // shared by pairs
                                                                  // An NC may be closed at the moment: try the next.
                        let _ = db
                            .intern((t + i) % 8, &name)
                            .or_else(|_| db.intern((t + i + 1) % 8, &name));
                    }
                })
            })
            .collect();
        let db = &db;
        let closer = s.spawn(|| {
            let mut nc = 0;
            while !stop.load(Ordering::Relaxed) {
                db.close_nc(nc % 8).unwrap();
                std::thread::yield_now();
                db.open_nc(nc % 8).unwrap();
                nc += 3;
            }
        });
        while !workers.iter().all(|w| w.is_finished()) {
            let delta = db.delta(&mut cursor);
            for (id, bytes) in &delta {
                assert_eq!(db.id_of(bytes), id, "an entry arrives whole");
            }
            absorb(&mut union, &mut conflicts, &delta);
        }
        stop.store(true, Ordering::Relaxed);
        closer.join().unwrap();
    });
    absorb(&mut union, &mut conflicts, &db.delta(&mut cursor));
    let snapshot = db.snapshot();
    assert_eq!(union, entries(&snapshot));
    assert!(conflicts.is_empty() && snapshot.conflicts().is_empty());
}

/// A conflict recorded while a delta runs, under an id that delta did not
/// deliver (its entry came after the walk), is reported by the delta that
/// delivers the id, once: one thread interns new names and registers
/// another string under each one's id while another takes deltas, and the
/// deltas' conflicts are the snapshot's. Before the fix, the deltas lost
/// conflicts here in every run under the optimistic, lock-free, dashmap and
/// arc-swap strategies (6 runs, debug, 2 vCPUs); under the lock strategies,
/// whose window is only between the walk's release of the NC and the read
/// of its conflict log, in some runs (rwlock 4 of 6, sharded-lock 3,
/// parking-lot none).
fn conflicts_recorded_during_a_delta_are_not_lost<S: Strategy>() {
    // A copy-on-write strategy copies the NC's table per insert.
    let names = if S::COPY_ON_WRITE { 3_000 } else { 20_000 };
    let db: InternedStringDb<S> =
        InternedStringDb::with_config(Config::new().ncs(1).conflict_budget(usize::MAX));
    let done = AtomicBool::new(false);
    let mut cursor = Cursor::new();
    let (mut union, mut conflicts) = (Entries::new(), BTreeSet::new());
    let mut reported = 0;
    let mut take = |delta: Snapshot| {
        reported += delta.conflicts().len();
        absorb(&mut union, &mut conflicts, &delta);
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..names {
                let id = db.intern(0, &format!("new/{i}")).unwrap();
                let other = format!("other/{i}");
                assert_eq!(
                    db.register(0, id, other.as_bytes()),
                    Ok(interned_string_db::Registered::Conflict)
                );
            }
            done.store(true, Ordering::Release);
        });
        while !done.load(Ordering::Acquire) {
            take(db.delta(&mut cursor));
        }
    });
    take(db.delta(&mut cursor));
    let snapshot = db.snapshot();
    assert_eq!(snapshot.conflicts().len(), names);
    assert_eq!(union, entries(&snapshot));
    let want: BTreeSet<Conflict> = snapshot.conflicts().iter().cloned().collect();
    let lost = want.difference(&conflicts).count();
    assert_eq!(
        lost,
        0,
        "{}: {lost} of {names} conflicts never reported",
        S::NAME
    );
    assert_eq!(conflicts, want);
    assert_eq!(reported, names, "{}: each conflict reported once", S::NAME);
}

/// A delta that cannot be saved on another db (where the cursor starts
/// over) leaves the cursor as it was: back on its own db, it delivers no id
/// twice and reports conflicts against what it delivered.
fn failed_save_on_another_db_keeps_the_cursor<S: Strategy>() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("delta-other-db-{}", S::NAME));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("no such directory").join("delta");
    let db = db::<S>(2);
    let mut cursor = Cursor::new();
    db.intern(0, "a").unwrap();
    db.register(0, 5, b"five").unwrap();
    assert_eq!(db.delta(&mut cursor).len(), 2);
    let other = self::db::<S>(3);
    other.intern(2, "b").unwrap();
    assert!(other.save_delta(&mut cursor, &missing).is_err());
    assert!(!missing.exists());
    assert_eq!(cursor.delivered(), 2, "the delivered ids are kept");
    db.intern(1, "a").unwrap(); // delivered already, from NC 0
    db.intern(1, "c").unwrap();
    db.register(1, 5, b"cinq").unwrap();
    let delta = db.delta(&mut cursor);
    let names: Vec<&[u8]> = delta.iter().map(|(_, b)| b).collect();
    assert_eq!(names, [&b"c"[..]], "only the new name");
    let conflict = Conflict {
        id: 5,
        kept: b"five"[..].into(),
        rejected: b"cinq"[..].into(),
    };
    assert_eq!(delta.conflicts(), [conflict]);
    assert_eq!(cursor.delivered(), 3);
    // On the other db, the cursor still starts over.
    assert_eq!(other.delta(&mut cursor.clone()).len(), 1);
}

fn conflict(id: u64, kept: &[u8], rejected: &[u8]) -> Conflict {
    Conflict {
        id,
        kept: kept.into(),
        rejected: rejected.into(),
    }
}

/// Merged in order, deltas are the snapshot when no delivered id later
/// gains other bytes on a lower NC and no NC closes after delivering:
/// cross-NC conflicts met in either order, across deltas, equal bytes on a
/// lower NC after delivery.
fn merged_deltas_are_the_snapshot_when_delivery_order_agrees<S: Strategy>() {
    let db = db::<S>(4);
    let mut cursor = Cursor::new();
    let mut deltas = Vec::new();
    db.register(0, 70, b"low").unwrap();
    db.register(2, 71, b"same").unwrap();
    deltas.push(db.delta(&mut cursor));
    db.register(3, 70, b"high").unwrap(); // a higher NC: a conflict
    db.register(1, 71, b"same").unwrap(); // a lower NC, the same bytes
    db.register(1, 72, b"one").unwrap();
    db.register(3, 72, b"three").unwrap(); // both in one delta
    deltas.push(db.delta(&mut cursor));
    db.close_nc(2).unwrap(); // closed, reopened: nothing changes
    db.open_nc(2).unwrap();
    deltas.push(db.delta(&mut cursor));
    let snapshot = db.snapshot();
    assert_eq!(Snapshot::merge(&deltas), snapshot);
    assert_eq!(
        snapshot.conflicts(),
        [
            conflict(70, b"low", b"high"),
            conflict(72, b"one", b"three")
        ]
    );
}

/// Where merged deltas are not the snapshot, as `InternedStringDb::delta`
/// states: deltas cannot retract what they delivered. An id delivered from
/// a higher NC and later registered with other bytes on a lower NC keeps
/// the delivered bytes in the deltas, the lower NC's in the snapshot, the
/// conflict's kept and rejected strings swapped; an NC closed after
/// delivering stays in the merged deltas, out of the snapshot.
fn merged_deltas_differ_from_the_snapshot_only_as_stated<S: Strategy>() {
    // A lower NC gains a delivered id, with other bytes.
    let db = db::<S>(2);
    let mut cursor = Cursor::new();
    db.register(1, 77, b"a").unwrap();
    let first = db.delta(&mut cursor);
    db.register(0, 77, b"b").unwrap();
    let second = db.delta(&mut cursor);
    assert_eq!(second.len(), 0, "77 is not delivered again");
    let merged = Snapshot::merge(&[first, second]);
    let snapshot = db.snapshot();
    assert_eq!(merged.get(77), Some(&b"a"[..]), "the first delivered");
    assert_eq!(merged.conflicts(), [conflict(77, b"a", b"b")]);
    assert_eq!(snapshot.get(77), Some(&b"b"[..]), "the lowest NC's");
    assert_eq!(snapshot.conflicts(), [conflict(77, b"b", b"a")]);
    assert_eq!(merged.len(), snapshot.len());

    // A lower NC, closed when the id was delivered, reopens with other bytes.
    let reopening = InternedStringDb::<S>::with_config(Config::new().ncs(2));
    let mut cursor = Cursor::new();
    reopening.register(0, 77, b"b").unwrap();
    reopening.close_nc(0).unwrap();
    reopening.register(1, 77, b"a").unwrap();
    let first = reopening.delta(&mut cursor);
    reopening.open_nc(0).unwrap();
    let merged = Snapshot::merge(&[first, reopening.delta(&mut cursor)]);
    assert_eq!(merged.get(77), Some(&b"a"[..]));
    assert_eq!(merged.conflicts(), [conflict(77, b"a", b"b")]);
    let snapshot = reopening.snapshot();
    assert_eq!(snapshot.get(77), Some(&b"b"[..]));
    assert_eq!(snapshot.conflicts(), [conflict(77, b"b", b"a")]);

    // An NC closed after its entries were delivered.
    let closing = InternedStringDb::<S>::with_config(Config::new().ncs(2));
    let mut cursor = Cursor::new();
    closing.register(0, 5, b"only in 0").unwrap();
    closing.register(0, 6, b"zero").unwrap();
    closing.register(1, 6, b"one").unwrap();
    let delivered = closing.delta(&mut cursor);
    assert_eq!(delivered, closing.snapshot(), "the same until the close");
    closing.close_nc(0).unwrap();
    assert!(closing.delta(&mut cursor).is_empty());
    let snapshot = closing.snapshot();
    assert_eq!(delivered.get(5), Some(&b"only in 0"[..]));
    assert_eq!(snapshot.get(5), None, "a closed NC is out of the snapshot");
    assert_eq!(delivered.get(6), Some(&b"zero"[..]));
    assert_eq!(delivered.conflicts(), [conflict(6, b"zero", b"one")]);
    assert_eq!(snapshot.get(6), Some(&b"one"[..]));
    assert!(snapshot.conflicts().is_empty());
    // Reopened, the snapshot is the merged deltas again.
    closing.open_nc(0).unwrap();
    assert_eq!(
        Snapshot::merge(&[delivered, closing.delta(&mut cursor)]),
        closing.snapshot()
    );
}

for_each_strategy!(
    first_delta_is_the_snapshot,
    deltas_add_up_to_the_snapshot,
    new_conflicts_are_reported_once,
    deltas_count_conflicts_newly_dropped,
    saved_deltas_merge_into_the_snapshot,
    closed_nc_catches_up_after_reopening,
    stale_cursor_starts_over,
    deltas_while_interning_and_closing,
    conflicts_recorded_during_a_delta_are_not_lost,
    failed_save_on_another_db_keeps_the_cursor,
    merged_deltas_are_the_snapshot_when_delivery_order_agrees,
    merged_deltas_differ_from_the_snapshot_only_as_stated,
);
