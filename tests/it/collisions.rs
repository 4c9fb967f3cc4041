//! Collisions (one id, two strings), every strategy: each conflict is
//! recorded and reported, within the conflict budget, and the first string
//! is never replaced, in the db, its snapshots, deltas, snapshot files, or
//! a merge of files.

use crate::common::colliding_db;
use interned_string_db::{
    get_id, Config, Conflict, Cursor, InternedStringDb, Registered, Snapshot, Strategy,
};

fn conflict_is_recorded<S: Strategy>() {
    let db = colliding_db::<S>(2);
    assert_eq!(
        db.intern_with_outcome(0, b"first").unwrap(),
        (1, Registered::Inserted)
    );
    assert_eq!(
        db.intern_with_outcome(0, b"second").unwrap(),
        (1, Registered::Conflict)
    );
    // A repeat of the conflict is reported to the caller but recorded once.
    assert_eq!(
        db.intern_with_outcome(0, b"second").unwrap(),
        (1, Registered::Conflict)
    );
    assert_eq!(
        db.intern_with_outcome(0, b"first").unwrap(),
        (1, Registered::AlreadyPresent)
    );
    assert_eq!(db.conflict_count(), 1);
    let expected = Conflict {
        id: 1,
        kept: b"first"[..].into(),
        rejected: b"second"[..].into(),
    };
    assert_eq!(db.conflicts(), vec![expected.clone()]);
    assert_eq!(
        db.resolve(0, 1).as_deref(),
        Some(&b"first"[..]),
        "the first string stays"
    );

    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot.get_str(1), Some(Ok("first")));
    assert_eq!(snapshot.conflicts(), &[expected]);
}

fn conflict_across_shards_is_reported<S: Strategy>() {
    let db = colliding_db::<S>(3);
    db.intern(0, "alpha").unwrap();
    db.intern(1, "beta").unwrap();
    db.intern(2, "alpha").unwrap();
    assert_eq!(db.conflict_count(), 0, "no single shard saw two strings");
    let snapshot = db.snapshot();
    assert_eq!(
        snapshot.get_str(1),
        Some(Ok("alpha")),
        "the lowest NC's string is kept"
    );
    assert_eq!(
        snapshot.conflicts(),
        &[Conflict {
            id: 1,
            kept: b"alpha"[..].into(),
            rejected: b"beta"[..].into()
        }]
    );
}

fn shard_conflicts_are_normalised_to_the_kept_string<S: Strategy>() {
    let db = colliding_db::<S>(2);
    db.intern(0, "a").unwrap();
    db.intern(1, "b").unwrap();
    db.intern(1, "c").unwrap(); // NC 1 records (b kept, c rejected)
    let snapshot = db.snapshot();
    let rejected: Vec<&[u8]> = snapshot.conflicts().iter().map(|c| &*c.rejected).collect();
    assert_eq!(rejected, vec![&b"b"[..], &b"c"[..]]);
    assert!(snapshot.conflicts().iter().all(|c| &*c.kept == b"a"));
}

/// Past its conflict budget an NC counts conflicts instead of storing them;
/// the caller still gets `Registered::Conflict` and the first string stays.
fn conflict_budget_counts_what_it_cannot_store<S: Strategy>() {
    let mut db: InternedStringDb<S> = InternedStringDb::with_config(
        Config::new()
            .ncs(2)
            .conflict_budget(0)
            .narrow_id_mask_for_tests(0),
    );
    assert_eq!(
        db.intern_with_outcome(0, b"first").unwrap().1,
        Registered::Inserted
    );
    for dropped in 1..=2 {
        // Not stored, so a repeat cannot be recognised: it counts again.
        assert_eq!(
            db.intern_with_outcome(0, b"second").unwrap().1,
            Registered::Conflict
        );
        assert_eq!(db.conflicts_dropped(), dropped);
    }
    assert!(db.conflicts().is_empty());
    assert_eq!(
        db.intern_with_outcome(1, b"x").unwrap().1,
        Registered::Inserted
    );
    assert_eq!(db.register(1, 1, b"y"), Ok(Registered::Conflict));
    let snapshot = db.snapshot();
    assert_eq!(snapshot.get_str(1), Some(Ok("first")));
    assert_eq!(snapshot.conflicts_dropped(), 3);
    db.close_nc(1).unwrap();
    assert_eq!(
        db.snapshot().conflicts_dropped(),
        2,
        "a closed NC is skipped"
    );
    assert_eq!(db.conflicts_dropped(), 3, "but still counted by the db");
    db.reset();
    assert_eq!(db.conflicts_dropped(), 0);

    // A budget that holds one conflict: the first is stored, the next counted.
    let db: InternedStringDb<S> = InternedStringDb::with_config(
        Config::new()
            .ncs(1)
            .conflict_budget(2 * 128 + 2)
            .narrow_id_mask_for_tests(0),
    );
    db.intern(0, "a").unwrap();
    db.intern(0, "b").unwrap();
    db.intern(0, "c").unwrap();
    assert_eq!(db.conflict_count(), 1);
    assert_eq!(db.conflicts()[0].rejected[..], b"b"[..]);
    assert_eq!(db.conflicts_dropped(), 1);
}

/// Ids are public, so names can be crafted to collide (docs/design.md,
/// "Collisions"). Forced here with the test-only id mask (every string gets
/// id 1): however many colliding strings arrive, by `intern` or `register`,
/// in the same NC or a higher one, with the conflict budget spent or not, the
/// first string stays what the NC, `resolve_any` and every snapshot give.
fn crafted_collision_never_replaces_the_first_string<S: Strategy>() {
    let db = colliding_db::<S>(3);
    assert_eq!(
        db.intern_with_outcome(0, b"victim").unwrap(),
        (1, Registered::Inserted)
    );
    for i in 0..2_000 {
        let crafted = format!("crafted_{i}");
        assert_eq!(
            db.intern_with_outcome(0, crafted.as_bytes()).unwrap(),
            (1, Registered::Conflict)
        );
        assert_eq!(
            db.register(0, 1, crafted.as_bytes()),
            Ok(Registered::Conflict)
        );
        db.intern(1 + i % 2, &crafted).unwrap(); // higher NCs
        assert_eq!(db.lookup(0, &crafted), None);
        if i % 500 == 0 {
            let snapshot = db.snapshot();
            assert_eq!(snapshot.get_str(1), Some(Ok("victim")), "after {i}");
            assert!(snapshot.conflicts().iter().all(|c| &*c.kept == b"victim"));
        }
    }
    db.close_nc(0).unwrap();
    db.open_nc(0).unwrap();
    assert!(db.conflicts_dropped() > 0, "the budget was spent");
    assert_eq!(db.resolve(0, 1).as_deref(), Some(&b"victim"[..]));
    assert_eq!(db.resolve_any(1).as_deref(), Some(&b"victim"[..]));
    assert_eq!(db.lookup(0, "victim"), Some(1));
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot.get_str(1), Some(Ok("victim")));
    assert_eq!(snapshot.conflicts_dropped(), db.conflicts_dropped());
}

/// A real 50-bit collision, found by hashing 2^27 names (docs/design.md,
/// "Collisions"): no mask, real ids. Whichever of the two arrives first in an
/// NC stays there; the snapshot keeps the lower NC's and reports the other.
fn real_collision_keeps_the_first_string<S: Strategy>() {
    const A: &str = "tensor_207462";
    const B: &str = "tensor_63532661";
    const ID: u64 = 886535195763261;
    assert_eq!((get_id(A.as_bytes()), get_id(B.as_bytes())), (ID, ID));
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2));
    assert_eq!(
        db.intern_with_outcome(0, A.as_bytes()).unwrap(),
        (ID, Registered::Inserted)
    );
    assert_eq!(
        db.intern_with_outcome(0, B.as_bytes()).unwrap(),
        (ID, Registered::Conflict)
    );
    assert_eq!(
        db.intern_with_outcome(1, B.as_bytes()).unwrap(),
        (ID, Registered::Inserted)
    );
    assert_eq!(
        db.intern_with_outcome(1, A.as_bytes()).unwrap(),
        (ID, Registered::Conflict)
    );
    assert_eq!(db.lookup(0, A), Some(ID));
    assert_eq!(db.lookup(0, B), None);
    assert_eq!(db.resolve(1, ID).as_deref(), Some(B.as_bytes()));
    let snapshot = db.snapshot();
    assert_eq!(snapshot.get_str(ID), Some(Ok(A)));
    assert_eq!(
        snapshot.conflicts(),
        &[Conflict {
            id: ID,
            kept: A.as_bytes().into(),
            rejected: B.as_bytes().into(),
        }]
    );
}

fn first_string_survives_deltas_files_and_merges<S: Strategy>() {
    let db = colliding_db::<S>(2);
    let mut cursor = Cursor::new();
    db.intern(0, "victim").unwrap();
    let first = db.delta(&mut cursor);
    assert_eq!(first.get_str(1), Some(Ok("victim")));
    for i in 0..100 {
        let crafted = format!("crafted_{i}");
        db.intern(0, &crafted).unwrap();
        db.intern(1, &crafted).unwrap();
        let delta = db.delta(&mut cursor);
        assert!(delta.get(1).is_none(), "id 1 was delivered already: {i}");
        assert!(
            delta.conflicts().iter().all(|c| &*c.kept == b"victim"),
            "delta {i} reports conflicts against the first string"
        );
    }

    // Through a file and back, and merged with a file whose string for the
    // id came later.
    let mut file = Vec::new();
    db.snapshot().write_to(&mut file).unwrap();
    let loaded = Snapshot::read_from(&file[..]).unwrap();
    assert_eq!(loaded.get_str(1), Some(Ok("victim")));
    assert!(loaded.conflicts().iter().all(|c| &*c.kept == b"victim"));

    let other = colliding_db::<S>(1);
    other.intern(0, "crafted_on_another_host").unwrap();
    let merged = Snapshot::merge([&loaded, &other.snapshot()]);
    assert_eq!(
        merged.get_str(1),
        Some(Ok("victim")),
        "the lower input's bytes are kept"
    );
    assert!(merged
        .conflicts()
        .iter()
        .any(|c| &*c.rejected == b"crafted_on_another_host" && &*c.kept == b"victim"));
}

/// The test mask of [`narrow_db`]: 1,024 ids.
const NARROW_MASK: u64 = (1 << 10) - 1;

/// Two NCs whose ids are cut to [`NARROW_MASK`], so that names collide,
/// with room to record every conflict.
fn narrow_db<S: Strategy>() -> InternedStringDb<S> {
    InternedStringDb::with_config(
        Config::new()
            .ncs(2)
            .conflict_budget(usize::MAX)
            .narrow_id_mask_for_tests(NARROW_MASK),
    )
}

/// Many names under few ids (a 10-bit test mask): ids collide within one
/// of the optimistic log's slabs and across them (4,000 names of about 40
/// bytes fill several), and the first name of each id is the one kept by
/// `resolve`, every snapshot and the deltas that add up to them, whatever
/// order a walk reads an NC's records in.
fn first_wins_within_and_across_slabs<S: Strategy>() {
    let names = if S::COPY_ON_WRITE { 600 } else { 4_000 };
    let db = narrow_db::<S>();
    let mut first = std::collections::BTreeMap::new();
    let mut cursor = Cursor::new();
    let mut deltas = Vec::new();
    for i in 0..names {
        let name = crate::common::name(0, i);
        let id = db.intern(0, &name).unwrap();
        first.entry(id).or_insert(name);
        if i % 700 == 0 {
            deltas.push(db.delta(&mut cursor));
        }
    }
    deltas.push(db.delta(&mut cursor));
    assert!(db.conflict_count() > 0, "the mask makes ids collide");
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), first.len());
    for (&id, name) in &first {
        assert_eq!(snapshot.get_str(id), Some(Ok(name.as_str())), "id {id}");
        assert_eq!(db.resolve(0, id).as_deref(), Some(name.as_bytes()));
    }
    for conflict in snapshot.conflicts() {
        assert_eq!(*conflict.kept, *first[&conflict.id].as_bytes());
    }
    let merged = Snapshot::merge(&deltas);
    assert_eq!(merged.len(), first.len(), "each id delivered once");
    for (&id, name) in &first {
        assert_eq!(
            merged.get_str(id),
            Some(Ok(name.as_str())),
            "delta of id {id}"
        );
    }
    // Every conflict reported once: each later string of an id, by the
    // snapshot, by the deltas together, and by the db, whether the strategy
    // found it while interning or when the NC was next read.
    let sorted = |mut v: Vec<interned_string_db::Conflict>| {
        v.sort();
        v
    };
    let from_snapshot = sorted(snapshot.conflicts().to_vec());
    assert_eq!(from_snapshot.len(), names - first.len());
    let from_deltas = sorted(deltas.iter().flat_map(|d| d.conflicts().to_vec()).collect());
    assert_eq!(from_deltas, from_snapshot, "{}", S::NAME);
    assert_eq!(sorted(db.conflicts()), from_snapshot, "{}", S::NAME);
    // Interning the later strings again changes nothing.
    for i in 0..names {
        db.intern(0, &crate::common::name(0, i)).unwrap();
    }
    assert_eq!(sorted(db.snapshot().conflicts().to_vec()), from_snapshot);
    assert!(db.delta(&mut cursor).conflicts().is_empty(), "nothing new");
}

/// Resolves between the inserts of colliding names (a 10-bit test mask):
/// each answers with the first name of its id, whether the NC answers it
/// from what it has settled or settles first, and the conflicts that the
/// resolves did not settle are still reported, each once, by the snapshot
/// and the db.
fn resolves_between_colliding_inserts_keep_the_first_string<S: Strategy>() {
    let names = if S::COPY_ON_WRITE { 600 } else { 3_000 };
    let db = narrow_db::<S>();
    let mut first = std::collections::BTreeMap::new();
    for i in 0..names {
        let name = crate::common::name(0, i);
        let id = db.intern(0, &name).unwrap();
        first.entry(id).or_insert(name);
        // Every few inserts, the ids seen so far, and one not interned.
        if i % 97 == 0 {
            for (&id, name) in &first {
                let want = Some(name.as_bytes());
                assert_eq!(db.with_resolved(0, id, |b| b.to_vec()).as_deref(), want);
                assert_eq!(db.resolve(0, id).as_deref(), want, "{}", S::NAME);
                assert_eq!(db.resolve_any(id).as_deref(), want);
            }
            assert!(db.resolve(0, NARROW_MASK + 2).is_none());
        }
    }
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), first.len());
    for (&id, name) in &first {
        assert_eq!(db.resolve(0, id).as_deref(), Some(name.as_bytes()));
    }
    let mut conflicts = snapshot.conflicts().to_vec();
    conflicts.sort();
    assert_eq!(conflicts.len(), names - first.len(), "each once");
    assert!(conflicts
        .iter()
        .all(|c| *c.kept == *first[&c.id].as_bytes() && *c.rejected != *c.kept));
    let mut from_db = db.conflicts();
    from_db.sort();
    assert_eq!(from_db, conflicts, "{}", S::NAME);
}

for_each_strategy!(
    conflict_is_recorded,
    conflict_across_shards_is_reported,
    shard_conflicts_are_normalised_to_the_kept_string,
    conflict_budget_counts_what_it_cannot_store,
    crafted_collision_never_replaces_the_first_string,
    real_collision_keeps_the_first_string,
    first_string_survives_deltas_files_and_merges,
    first_wins_within_and_across_slabs,
    resolves_between_colliding_inserts_keep_the_first_string,
);
