//! A forced collision never replaces the first string, in deltas, in
//! snapshot files, or in a merge of files (the db and its snapshots are
//! covered in `tests/behaviour.rs`). Every strategy.

mod common;

use interned_string_db::{Config, Cursor, InternedStringDb, Snapshot, Strategy};

fn first_string_survives_deltas_files_and_merges<S: Strategy>() {
    // Every string gets id 1.
    let db: InternedStringDb<S> =
        InternedStringDb::with_config(Config::new().ncs(2).narrow_id_mask_for_tests(0));
    let mut cursor = Cursor::new();
    db.intern(0, "victim").unwrap();
    let first = db.delta(&mut cursor);
    assert_eq!(first.get_str(1), Some("victim"));
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
    assert_eq!(loaded.get_str(1), Some("victim"));
    assert!(loaded.conflicts().iter().all(|c| &*c.kept == b"victim"));

    let other: InternedStringDb<S> =
        InternedStringDb::with_config(Config::new().ncs(1).narrow_id_mask_for_tests(0));
    other.intern(0, "crafted_on_another_host").unwrap();
    let merged = Snapshot::merge([&loaded, &other.snapshot()]);
    assert_eq!(
        merged.get_str(1),
        Some("victim"),
        "the lower input's bytes are kept"
    );
    assert!(merged
        .conflicts()
        .iter()
        .any(|c| &*c.rejected == b"crafted_on_another_host" && &*c.kept == b"victim"));
}

for_each_strategy!(first_string_survives_deltas_files_and_merges);
