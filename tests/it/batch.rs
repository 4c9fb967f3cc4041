//! `intern_batch`: the same ids and effects as interning each name in turn,
//! errors that say where the batch stopped, run against every strategy.

use interned_string_db::{get_id, BatchError, Config, Error, InternedStringDb, Strategy};

fn db<S: Strategy>(config: Config) -> InternedStringDb<S> {
    InternedStringDb::with_config(config)
}

/// Names with repeats, within a step of 64 and across steps.
fn names() -> Vec<String> {
    (0..300)
        .map(|i| crate::common::name(0, if i % 5 == 0 { i / 5 } else { i }))
        .collect()
}

fn batch_matches_one_by_one<S: Strategy>() {
    // Colliding ids too: every string gets one of 16 ids.
    for config in [
        Config::new().ncs(2),
        Config::new().ncs(2).narrow_id_mask_for_tests(0xF),
    ] {
        let (batched, single) = (db::<S>(config), db::<S>(config));
        let names = names();
        let mut ids = vec![0; names.len()];
        batched.intern_batch(1, &names, &mut ids).unwrap();
        let expected: Vec<u64> = names.iter().map(|n| single.intern(1, n).unwrap()).collect();
        assert_eq!(ids, expected);
        assert_eq!(batched.nc_len(1), single.nc_len(1));
        assert_eq!(batched.snapshot(), single.snapshot());
        assert_eq!(batched.conflicts(), single.conflicts());
        // Again: every name is now a hit.
        let mut again = vec![0; names.len()];
        batched.intern_batch(1, &names, &mut again).unwrap();
        assert_eq!(again, expected);
        assert_eq!(batched.nc_len(1), single.nc_len(1), "hits store nothing");
    }
}

fn every_slice_of_names_works<S: Strategy>() {
    let db = db::<S>(Config::new().ncs(1));
    let strs = ["a", "b"];
    let strings = vec!["c".to_string()];
    let bytes: [&[u8]; 2] = [b"d", b"\xFF\xFE"];
    let mut two = [0; 2];
    db.intern_batch(0, &strs, &mut two).unwrap();
    assert_eq!(two, [get_id(b"a"), get_id(b"b")]);
    let mut one = [0; 1];
    db.intern_batch(0, &strings, &mut one).unwrap();
    assert_eq!(one, [get_id(b"c")]);
    db.handle(0)
        .unwrap()
        .intern_batch(&bytes, &mut two)
        .unwrap();
    assert_eq!(two, [get_id(b"d"), get_id(b"\xFF\xFE")]);
    assert_eq!(db.nc_len(0), 5);
}

fn length_mismatch_interns_nothing<S: Strategy>() {
    let db = db::<S>(Config::new().ncs(1));
    let mut ids = [0; 1];
    let err = db.intern_batch(0, &["a", "b"], &mut ids).unwrap_err();
    assert_eq!(err, BatchError::LengthMismatch { names: 2, ids: 1 });
    assert_eq!(err.interned(), 0);
    assert_eq!(db.nc_len(0), 0);
    assert_eq!(db.intern_batch(0, &[] as &[&str], &mut []), Ok(()));
}

fn failure_says_where_and_keeps_the_prefix<S: Strategy>() {
    let db = db::<S>(Config::new().ncs(2));
    let mut names = names();
    names[70] = String::new();
    let mut ids = vec![0; names.len()];
    let err = db.intern_batch(0, &names, &mut ids).unwrap_err();
    assert_eq!(
        err,
        BatchError::At {
            index: 70,
            error: Error::EmptyString
        }
    );
    assert_eq!(err.interned(), 70);
    for (name, &id) in names[..70].iter().zip(&ids[..70]) {
        assert_eq!(id, get_id(name.as_bytes()));
        assert_eq!(db.lookup(0, name), Some(id), "{name} interned");
    }
    for name in &names[71..] {
        if !names[..70].contains(name) {
            assert_eq!(db.lookup(0, name), None, "{name} is after the failure");
        }
    }

    // A closed NC fails at the first name; an NC out of range too.
    db.close_nc(1).unwrap();
    let err = db.intern_batch(1, &["x"], &mut [0]).unwrap_err();
    assert_eq!(
        err,
        BatchError::At {
            index: 0,
            error: Error::NcClosed { nc: 1 }
        }
    );
    let err = db.intern_batch(2, &["x"], &mut [0]).unwrap_err();
    assert_eq!(
        err,
        BatchError::At {
            index: 0,
            error: Error::NcOutOfRange { nc: 2, ncs: 2 }
        }
    );
}

fn cap_reached_mid_batch<S: Strategy>() {
    let db = db::<S>(Config::new().ncs(1).byte_cap(100));
    let names: Vec<String> = (0..20).map(|i| format!("name-{i:05}")).collect(); // 10 bytes each
    let mut ids = vec![0; names.len()];
    let err = db.intern_batch(0, &names, &mut ids).unwrap_err();
    assert!(
        matches!(
            err,
            BatchError::At {
                index: 10,
                error: Error::CapReached { nc: 0, .. }
            }
        ),
        "{err:?}"
    );
    assert_eq!(db.nc_len(0), 10);
    assert_eq!(db.nc_bytes(0), 100);
}

fn concurrent_batches_lose_nothing<S: Strategy>() {
    let db = db::<S>(Config::new().ncs(2));
    let names = names();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (db, names) = (&db, &names);
            s.spawn(move || {
                let mut ids = vec![0; names.len()];
                for _ in 0..3 {
                    db.intern_batch(t % 2, names, &mut ids).unwrap();
                    for (name, &id) in names.iter().zip(&ids) {
                        assert_eq!(id, get_id(name.as_bytes()));
                    }
                }
            });
        }
    });
    let distinct: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(db.nc_len(0), distinct.len());
    assert_eq!(db.nc_len(1), distinct.len());
    assert_eq!(db.snapshot().len(), distinct.len());
}

/// The error `intern` gives for the first name of `names` that fails, as a
/// batch reports it.
fn one_by_one<S: Strategy>(
    db: &InternedStringDb<S>,
    nc: usize,
    names: &[&str],
) -> Result<(), BatchError> {
    for (index, name) in names.iter().enumerate() {
        db.intern(nc, name)
            .map_err(|error| BatchError::At { index, error })?;
    }
    Ok(())
}

fn batch_fails_as_the_first_failing_intern<S: Strategy>() {
    // NC 0 never written to, 1 written to, 2 closed unwritten, 3 written to
    // then closed, 4 out of range; a cap of 6 bytes for the rest.
    let prepare = || {
        let db = db::<S>(Config::new().ncs(4).byte_cap(6));
        db.intern(1, "w").unwrap();
        db.intern(3, "w").unwrap();
        db.close_nc(2).unwrap();
        db.close_nc(3).unwrap();
        db
    };
    let inputs: [&[&str]; 7] = [
        &[""],
        &["", "a"],
        &["a", ""],
        &["a"],
        &["x", "", "y"],
        &["w", ""],
        &["abc", "defg", ""],
    ];
    for nc in 0..5 {
        for names in inputs {
            let (single, batched) = (prepare(), prepare());
            let expected = one_by_one(&single, nc, names);
            let mut ids = vec![0; names.len()];
            let got = batched.intern_batch(nc, names, &mut ids);
            assert_eq!(got, expected, "NC {nc}, names {names:?}");
            if nc < 4 {
                assert_eq!(batched.nc_len(nc), single.nc_len(nc), "NC {nc}, {names:?}");
            }
            assert_eq!(batched.snapshot(), single.snapshot(), "NC {nc}, {names:?}");
        }
    }
}

for_each_strategy!(
    batch_matches_one_by_one,
    every_slice_of_names_works,
    length_mismatch_interns_nothing,
    failure_says_where_and_keeps_the_prefix,
    cap_reached_mid_batch,
    concurrent_batches_lose_nothing,
    batch_fails_as_the_first_failing_intern,
);
