//! Collisions at scale and a cap reached mid-stream, for every strategy.

use std::collections::{BTreeMap, BTreeSet};

use interned_string_db::{Config, Conflict, Error, InternedStringDb, Registered, Strategy};

/// `n` strings squeezed into at most `n / 6` ids by the test-only mask: most of
/// them collide. Each conflict is recorded once with both strings, the first
/// string of each id stays resolvable, and the snapshot reports every one.
fn collisions_are_recorded_once<S: Strategy>(n: usize) {
    // The largest power of two not above n / 6.
    let mask = (1u64 << (63 - (n as u64 / 6).leading_zeros())) - 1;
    // A budget that stores every conflict: this test checks each one.
    let db: InternedStringDb<S> = InternedStringDb::with_config(
        Config::new()
            .ncs(2)
            .conflict_budget(usize::MAX)
            .narrow_id_mask_for_tests(mask),
    );
    let names: Vec<String> = (0..n).map(|i| crate::common::name(i % 3, i)).collect();
    let mut first: BTreeMap<u64, &str> = BTreeMap::new();
    let mut expected: BTreeSet<(u64, String, String)> = BTreeSet::new();
    for round in 0..2 {
        for name in &names {
            let id = db.id_of(name.as_bytes());
            let kept = *first.entry(id).or_insert(name);
            let (got, outcome) = db.intern_with_outcome(0, name.as_bytes()).unwrap();
            assert_eq!(got, id);
            if kept == name {
                let want = if round == 0 {
                    Registered::Inserted
                } else {
                    Registered::AlreadyPresent
                };
                assert_eq!(outcome, want, "{name}");
            } else {
                assert_eq!(outcome, Registered::Conflict, "{name}");
                expected.insert((id, kept.to_string(), name.clone()));
            }
        }
    }
    assert!(
        expected.len() > n * 3 / 4,
        "the mask makes most strings collide"
    );
    let as_set = |conflicts: &[Conflict]| -> BTreeSet<(u64, String, String)> {
        conflicts
            .iter()
            .map(|c| {
                let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                (c.id, s(&c.kept), s(&c.rejected))
            })
            .collect()
    };
    let recorded = db.conflicts();
    assert_eq!(
        recorded.len(),
        expected.len(),
        "{}: each conflict once, across two rounds",
        S::NAME
    );
    assert_eq!(as_set(&recorded), expected);
    for (&id, kept) in &first {
        assert_eq!(db.resolve(0, id).as_deref(), Some(kept.as_bytes()));
    }
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), first.len());
    assert_eq!(as_set(snapshot.conflicts()), expected);
    println!(
        "collisions {:>10}: {n} strings, {} ids, {} conflicts, each recorded once",
        S::NAME,
        first.len(),
        expected.len()
    );
}

/// Threads filling one NC past its cap: each intern either stores or is
/// refused with `CapReached`; nothing stored is lost; the cap holds.
fn cap_reached_mid_stream<S: Strategy>() {
    const CAP: usize = 200_000;
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2).byte_cap(CAP));
    let stored: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..3_000 {
                        let name = crate::common::name(t, i);
                        match db.intern(0, &name) {
                            Ok(_) => mine.push(name),
                            Err(Error::CapReached {
                                nc: 0,
                                cap: CAP,
                                used,
                                needed,
                            }) => {
                                assert!(used + needed > CAP);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let count: usize = stored.iter().map(Vec::len).sum();
    let bytes: usize = stored.iter().flatten().map(String::len).sum();
    assert!(count > 0 && count < 12_000, "the cap was reached: {count}");
    assert!(bytes <= CAP);
    assert_eq!(db.nc_bytes(0), bytes);
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), count);
    for name in stored.iter().flatten() {
        assert!(db.lookup(0, name).is_some(), "{name} lost");
    }
    assert!(db.intern(1, "another NC has room").is_ok());
}

fn collisions_20k<S: Strategy>() {
    collisions_are_recorded_once::<S>(20_000);
}

/// 10^5 strings: slow in debug, so run in release by `.ci/run` with the
/// stress tests.
fn collisions_100k<S: Strategy>() {
    collisions_are_recorded_once::<S>(100_000);
}

for_each_strategy!(
    collisions_20k,
    cap_reached_mid_stream,
    #[ignore = "long: run in release by .ci/run"]
    collisions_100k,
);
