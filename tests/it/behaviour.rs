//! The interner's behaviour, run against every strategy.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::colliding_db;
use interned_string_db::{get_id, Config, Error, InternedStringDb, Registered, Strategy, MAX_ID};

fn db<S: Strategy>(ncs: usize) -> InternedStringDb<S> {
    InternedStringDb::with_config(Config::new().ncs(ncs))
}

fn idempotent_reintern<S: Strategy>() {
    let db = db::<S>(4);
    let first = db
        .intern_with_outcome(2, b"model_3/layer_41/tensor_1207")
        .unwrap();
    assert_eq!(
        first,
        (
            get_id(b"model_3/layer_41/tensor_1207"),
            Registered::Inserted
        )
    );
    let bytes = db.nc_bytes(2);
    for _ in 0..3 {
        let again = db
            .intern_with_outcome(2, b"model_3/layer_41/tensor_1207")
            .unwrap();
        assert_eq!(again, (first.0, Registered::AlreadyPresent));
    }
    assert_eq!(db.nc_len(2), 1);
    assert_eq!(db.nc_bytes(2), bytes, "a repeat stores nothing");
    assert_eq!(db.intern(2, "model_3/layer_41/tensor_1207"), Ok(first.0));
    assert_eq!(db.conflict_count(), 0);
}

fn same_string_on_many_ncs_is_one_entry<S: Strategy>() {
    let db = db::<S>(8);
    for nc in 0..8 {
        db.intern(nc, "shared").unwrap();
    }
    assert_eq!(db.total_entries(), 8);
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot.get_str(get_id(b"shared")), Some(Ok("shared")));
    assert!(snapshot.conflicts().is_empty());
}

fn bad_input_is_an_error<S: Strategy>() {
    let db = db::<S>(4);
    assert_eq!(db.intern(0, ""), Err(Error::EmptyString));
    assert_eq!(
        db.intern(4, "x"),
        Err(Error::NcOutOfRange { nc: 4, ncs: 4 })
    );
    assert_eq!(
        db.intern(usize::MAX, "x"),
        Err(Error::NcOutOfRange {
            nc: usize::MAX,
            ncs: 4
        })
    );
    assert_eq!(db.register(0, 7, b""), Err(Error::EmptyString));
    assert_eq!(db.close_nc(9), Err(Error::NcOutOfRange { nc: 9, ncs: 4 }));
    assert_eq!(db.total_entries(), 0);
}

/// An audit of the public API: every public function given the worst
/// values of its arguments answers, without a panic. Caller ids need not be
/// hashes, so any u64 is a valid id, 0 and those past `MAX_ID` included.
fn no_public_function_panics_on_bad_input<S: Strategy>() {
    let db = db::<S>(2);
    for nc in [2, usize::MAX] {
        let out = Some(Error::NcOutOfRange { nc, ncs: 2 });
        assert_eq!(db.intern_bytes(nc, b"x").err(), out);
        assert_eq!(db.intern_with_outcome(nc, b"x").err(), out);
        assert_eq!(db.register(nc, 1, b"x").err(), out);
        assert_eq!(db.open_nc(nc).err(), out);
        assert_eq!(db.is_open(nc).err(), out);
        assert_eq!(db.handle(nc).err(), out);
        assert_eq!(db.lookup(nc, "x"), None);
        assert_eq!(db.resolve(nc, 1), None);
        assert_eq!(db.with_resolved(nc, 1, |_| ()), None);
        assert_eq!((db.nc_len(nc), db.nc_bytes(nc)), (0, 0));
    }
    assert_eq!(db.lookup(0, ""), None);
    assert_eq!(
        db.intern_with_outcome(0, b"").err(),
        Some(Error::EmptyString)
    );
    let ids = [
        0,
        1,
        MAX_ID,
        MAX_ID + 1,
        u64::MAX / 2,
        u64::MAX - 1,
        u64::MAX,
    ];
    for (i, &id) in ids.iter().enumerate() {
        let name = format!("caller id {i}");
        assert_eq!(
            db.register(0, id, name.as_bytes()),
            Ok(Registered::Inserted)
        );
        assert_eq!(db.register(0, id, b"another"), Ok(Registered::Conflict));
    }
    for (i, &id) in ids.iter().enumerate() {
        assert_eq!(
            db.resolve(0, id).as_deref(),
            Some(format!("caller id {i}").as_bytes())
        );
    }
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), ids.len());
    assert_eq!(
        db.resolve_any(u64::MAX).as_deref(),
        Some(&b"caller id 6"[..])
    );
    #[cfg(feature = "pinning")]
    assert!(db.pin_current_thread(usize::MAX).nc() < 2);
}

fn bytes_need_not_be_utf8<S: Strategy>() {
    let db = db::<S>(1);
    let id = db.intern_bytes(0, &[0xff, 0xfe, 0x00, 0x80]).unwrap();
    assert_eq!(id, get_id(&[0xff, 0xfe, 0x00, 0x80]));
    let snapshot = db.snapshot();
    assert_eq!(snapshot.get(id), Some(&[0xff, 0xfe, 0x00, 0x80][..]));
    assert!(matches!(snapshot.get_str(id), Some(Err(_))));
}

fn caller_supplied_id_is_trusted<S: Strategy>() {
    let db = db::<S>(1);
    assert_eq!(db.register(0, 42, b"not hashed"), Ok(Registered::Inserted));
    assert_eq!(
        db.register(0, 42, b"not hashed"),
        Ok(Registered::AlreadyPresent)
    );
    assert_eq!(db.register(0, 42, b"other"), Ok(Registered::Conflict));
    assert_eq!(db.snapshot().get_str(42), Some(Ok("not hashed")));
    // The reference registers its sentinel under id 0.
    assert_eq!(
        db.register(0, 0, b"Invalid interned string"),
        Ok(Registered::Inserted)
    );
    assert_eq!(
        db.snapshot().get_str(0),
        Some(Ok("Invalid interned string"))
    );
}

fn closed_nc_is_skipped<S: Strategy>() {
    let db = db::<S>(3);
    let a = db.intern(0, "on nc 0").unwrap();
    let b = db.intern(1, "on nc 1").unwrap();
    let shared = db.intern(1, "on both").unwrap();
    db.intern(2, "on both").unwrap();
    db.close_nc(1).unwrap();
    assert_eq!(db.is_open(1), Ok(false));
    assert_eq!(db.intern(1, "late"), Err(Error::NcClosed { nc: 1 }));
    assert_eq!(
        db.intern(1, "on nc 1"),
        Err(Error::NcClosed { nc: 1 }),
        "even a hit"
    );

    let snapshot = db.snapshot();
    assert!(snapshot.contains(a));
    assert!(!snapshot.contains(b));
    assert!(snapshot.contains(shared), "still on an open NC");
    assert_eq!(snapshot.len(), 2);
    assert_eq!(db.resolve_any(b), None, "resolve_any sees open NCs only");
    assert_eq!(
        db.resolve(1, b).as_deref(),
        Some(&b"on nc 1"[..]),
        "closing keeps the entries"
    );

    db.open_nc(1).unwrap();
    let snapshot = db.snapshot();
    assert!(snapshot.contains(b));
    assert!(!snapshot.contains(get_id(b"late")));
    assert_eq!(snapshot.len(), 3);
}

/// An NC is made by the first call that writes to it: before that it reads
/// as open and empty, a close before any string holds, and threads that
/// race to write first to one NC share one context.
fn an_nc_is_made_by_its_first_write<S: Strategy>() {
    let db = db::<S>(4);
    assert_eq!(db.is_open(2), Ok(true));
    assert_eq!((db.nc_len(2), db.nc_bytes(2)), (0, 0));
    assert_eq!(db.lookup(2, "x"), None);
    assert_eq!(db.resolve(2, get_id(b"x")), None);
    db.close_nc(2).unwrap();
    assert_eq!(db.is_open(2), Ok(false));
    assert_eq!(db.intern(2, "x"), Err(Error::NcClosed { nc: 2 }));
    db.open_nc(2).unwrap();
    let mut ids = [0; 2];
    db.intern_batch(3, &["b0", "b1"], &mut ids).unwrap();
    assert_eq!(ids, [get_id(b"b0"), get_id(b"b1")]);
    assert_eq!(db.register(1, 5, b"five"), Ok(Registered::Inserted));
    assert_eq!(db.resolve(1, 5).as_deref(), Some(&b"five"[..]));

    let names: Vec<String> = (0..64).map(|i| format!("first/{i}")).collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (db, names) = (&db, &names);
            s.spawn(move || {
                for name in names.iter().cycle().skip(t * 16).take(64) {
                    assert_eq!(db.intern(0, name), Ok(get_id(name.as_bytes())));
                }
            });
        }
    });
    assert_eq!(db.nc_len(0), 64, "one context, every name once");
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), 64 + 2 + 1);
    assert!(names
        .iter()
        .all(|n| snapshot.get_str(get_id(n.as_bytes())) == Some(Ok(n))));
}

fn lookup_never_inserts<S: Strategy>() {
    let db = db::<S>(2);
    assert_eq!(db.lookup(0, "absent"), None);
    assert_eq!(db.total_entries(), 0);
    let id = db.intern(0, "present").unwrap();
    assert_eq!(db.lookup(0, "present"), Some(id));
    assert_eq!(db.lookup(1, "present"), None, "other NC");
    assert_eq!(db.lookup(7, "present"), None, "out of range");
    let colliding = colliding_db::<S>(1);
    colliding.intern(0, "a").unwrap();
    assert_eq!(colliding.lookup(0, "b"), None, "same id, other bytes");
}

fn resolve_by_id<S: Strategy>() {
    let db = db::<S>(3);
    let id = db.intern(2, "tensor_0").unwrap();
    assert_eq!(db.resolve(2, id).as_deref(), Some(&b"tensor_0"[..]));
    assert_eq!(db.resolve(1, id), None);
    assert_eq!(db.resolve(5, id), None);
    assert_eq!(db.resolve_any(id).as_deref(), Some(&b"tensor_0"[..]));
    assert_eq!(db.with_resolved(2, id, |b| b.len()), Some(8));
    assert_eq!(db.resolve_any(12345), None);
}

/// `with_resolved`'s callback may call back into the same NC: intern (new
/// strings and the resolved one), close, open, snapshot. Under the
/// compatibility strategy it once ran under the NC's read lock and deadlocked;
/// a deadlock fails the test after a minute instead of hanging it.
fn with_resolved_callback_may_reenter_the_nc<S: Strategy>() {
    let db = Arc::new(db::<S>(2));
    let id = db.intern(1, "resolved").unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let db_in_thread = Arc::clone(&db);
    std::thread::spawn(move || {
        let db = db_in_thread;
        let outcome = db.with_resolved(1, id, |bytes| {
            // Enough strings that some land in every internal shard of a
            // sharded map.
            for i in 0..64 {
                db.intern(1, &crate::common::name(0, i)).unwrap();
            }
            let again = db.intern(1, "resolved");
            db.close_nc(1).unwrap();
            let closed = db.intern(1, "while closed");
            db.open_nc(1).unwrap();
            let in_snapshot = db.snapshot().contains(id);
            (bytes.to_vec(), again, closed, in_snapshot)
        });
        let _ = done.send(outcome);
    });
    let outcome = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("with_resolved deadlocked: its callback re-entered the NC");
    assert_eq!(
        outcome,
        Some((
            b"resolved".to_vec(),
            Ok(id),
            Err(Error::NcClosed { nc: 1 }),
            true
        ))
    );
    assert_eq!(db.nc_len(1), 65);
}

/// Bad configuration is an error from `try_with_config`, never a panic or
/// an abort: zero NCs, and NC counts or initial capacities past what memory
/// can hold (`with_config` once panicked on the latter and aborted on the
/// former).
fn absurd_configs_are_errors<S: Strategy>() {
    let build = |config| InternedStringDb::<S>::try_with_config(config).map(|db| db.ncs());
    assert_eq!(build(Config::new().ncs(0)), Err(Error::ZeroNcs));
    for (ncs, initial_capacity) in [(1 << 40, 0), (usize::MAX, 0), (2, 1 << 40), (2, usize::MAX)] {
        assert_eq!(
            build(Config::new().ncs(ncs).initial_capacity(initial_capacity)),
            Err(Error::ConfigTooLarge {
                ncs,
                initial_capacity
            }),
            "{ncs} NCs of {initial_capacity} entries"
        );
    }
    // No single allocation of these fails under overcommit, but the tables
    // would take 8 PiB: refused before one is made, where the machine's
    // memory is known (Linux), instead of the process being killed.
    if cfg!(target_os = "linux") {
        let (ncs, initial_capacity) = (1 << 20, 1 << 30);
        assert_eq!(
            build(Config::new().ncs(ncs).initial_capacity(initial_capacity)),
            Err(Error::ConfigTooLarge {
                ncs,
                initial_capacity
            })
        );
    }
    let db = InternedStringDb::<S>::try_with_config(Config::new().ncs(3).initial_capacity(1000))
        .unwrap();
    let id = db.intern(2, "fits").unwrap();
    assert_eq!(db.resolve(2, id).as_deref(), Some(&b"fits"[..]));
}

fn byte_cap_refuses_and_keeps_everything<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2).byte_cap(10));
    assert_eq!(db.intern(0, "12345").map(|_| ()), Ok(()));
    assert_eq!(db.intern(0, "abcde").map(|_| ()), Ok(()));
    assert_eq!(
        db.intern(0, "x"),
        Err(Error::CapReached {
            nc: 0,
            cap: 10,
            used: 10,
            needed: 1
        })
    );
    assert_eq!(
        db.intern(0, "12345").map(|_| ()),
        Ok(()),
        "a hit needs no room"
    );
    assert_eq!(db.intern(1, "x").map(|_| ()), Ok(()), "the cap is per NC");
    assert_eq!(db.nc_bytes(0), 10);
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), 3);
    assert!(snapshot.contains(get_id(b"12345")) && snapshot.contains(get_id(b"abcde")));
}

/// `Config::slab_limit`: a strategy with slabs refuses a name that needs
/// one past the limit with `SlabsExhausted`, a strategy without ignores
/// it; either way nothing stored before is lost and the db goes on.
fn slab_limit_refuses_with_its_own_error<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(2).slab_limit(2));
    // Each takes more than half a 16 KiB slab: two slabs hold two.
    let names: Vec<Vec<u8>> = (0..4u8).map(|i| vec![b'a' + i; 9000]).collect();
    let mut stored = Vec::new();
    for name in &names {
        match db.intern_bytes(0, name) {
            Ok(id) => stored.push(id),
            Err(error) => {
                assert_eq!(
                    error,
                    Error::SlabsExhausted {
                        nc: 0,
                        slabs: 2,
                        needed: 9000
                    }
                );
                assert!(error.to_string().contains("limit of 2 slabs"), "{error}");
            }
        }
    }
    assert!(stored.len() >= 2, "the limit holds what fits it");
    let small = db.intern(0, "fits the last slab's room").unwrap();
    assert_eq!(
        db.intern_bytes(1, &[b'q'; 9000]).map(|_| ()),
        Ok(()),
        "per NC"
    );
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), stored.len() + 2);
    for id in stored.iter().chain([&small]) {
        assert!(snapshot.contains(*id));
    }
}

#[test]
fn the_optimistic_strategy_holds_its_slab_limit() {
    let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(1).slab_limit(2));
    for i in 0..2u8 {
        db.intern_bytes(0, &[b'a' + i; 9000]).unwrap();
    }
    assert!(matches!(
        db.intern_bytes(0, &[b'z'; 9000]),
        Err(Error::SlabsExhausted { slabs: 2, .. })
    ));
    assert_eq!(
        interned_string_db::OptimisticStrategy::MAX_SLABS,
        (1 << 18) - 1,
        "a 32-bit position, 14 bits of it within a slab"
    );
}

fn snapshot_iterates_in_id_order<S: Strategy>() {
    let db = db::<S>(4);
    let mut ids: Vec<u64> = (0..100)
        .map(|i| db.intern(i % 4, &crate::common::name(0, i)).unwrap())
        .collect();
    ids.sort_unstable();
    let snapshot = db.snapshot();
    assert_eq!(snapshot.iter().len(), 100);
    assert_eq!(snapshot.iter().map(|(id, _)| id).collect::<Vec<_>>(), ids);
    for (id, bytes) in &snapshot {
        assert_eq!(get_id(bytes), id);
    }
}

fn reset_frees_everything<S: Strategy>() {
    let mut db = colliding_db::<S>(2);
    db.intern(0, "a").unwrap();
    db.intern(0, "b").unwrap();
    db.close_nc(1).unwrap();
    db.reset();
    assert_eq!(db.total_entries(), 0);
    assert_eq!(db.conflict_count(), 0);
    assert_eq!(db.is_open(1), Ok(true));
    assert!(db.snapshot().is_empty());
    db.intern(1, "b").unwrap();
    assert_eq!(db.snapshot().get_str(1), Some(Ok("b")));
}

/// Eight threads intern while the main thread snapshots: each snapshot holds
/// every string whose intern had returned before it was called. Each
/// snapshot checks every string so far, so the test grows with the square
/// of the strings: a debug build interns a third of them (the same mix of
/// NCs and shared names), to stay within a minute.
fn snapshot_while_eight_threads_intern<S: Strategy>() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = if cfg!(debug_assertions) { 1_000 } else { 3_000 };
    let db = Arc::new(db::<S>(16));
    let progress: Arc<Vec<AtomicUsize>> =
        Arc::new((0..THREADS).map(|_| AtomicUsize::new(0)).collect());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, progress) = (Arc::clone(&db), Arc::clone(&progress));
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    // Half on the thread's own NC, half on one shared NC; a
                    // name shared by all threads every 10th string.
                    let nc = if i % 2 == 0 { t } else { 15 };
                    let name = if i % 10 == 0 {
                        crate::common::name(99, i)
                    } else {
                        crate::common::name(t, i)
                    };
                    db.intern(nc, &name).unwrap();
                    progress[t].store(i + 1, Ordering::Release);
                }
            })
        })
        .collect();
    let mut snapshots = 0;
    loop {
        let done: Vec<usize> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
        let snapshot = db.snapshot();
        snapshots += 1;
        for (t, &n) in done.iter().enumerate() {
            for i in 0..n {
                let name = if i % 10 == 0 {
                    crate::common::name(99, i)
                } else {
                    crate::common::name(t, i)
                };
                assert_eq!(
                    snapshot.get_str(get_id(name.as_bytes())),
                    Some(Ok(name.as_str())),
                    "snapshot {snapshots} lost {name}, interned before it was taken"
                );
            }
        }
        if done.iter().all(|&n| n == PER_THREAD) {
            break;
        }
    }
    for w in workers {
        w.join().unwrap();
    }
    let snapshot = db.snapshot();
    let distinct = THREADS * PER_THREAD * 9 / 10 + PER_THREAD / 10;
    assert_eq!(snapshot.len(), distinct, "nothing duplicated, nothing lost");
    assert!(snapshot.conflicts().is_empty());
    assert!(snapshots > 1);
}

for_each_strategy!(
    idempotent_reintern,
    same_string_on_many_ncs_is_one_entry,
    bad_input_is_an_error,
    no_public_function_panics_on_bad_input,
    bytes_need_not_be_utf8,
    caller_supplied_id_is_trusted,
    closed_nc_is_skipped,
    an_nc_is_made_by_its_first_write,
    lookup_never_inserts,
    resolve_by_id,
    with_resolved_callback_may_reenter_the_nc,
    absurd_configs_are_errors,
    byte_cap_refuses_and_keeps_everything,
    snapshot_iterates_in_id_order,
    slab_limit_refuses_with_its_own_error,
    reset_frees_everything,
    snapshot_while_eight_threads_intern,
);

#[test]
fn global_instance_is_shared() {
    let id = interned_string_db::global()
        .intern(5, "global test string")
        .unwrap();
    let from_other_thread =
        std::thread::spawn(|| interned_string_db::global().lookup(5, "global test string"))
            .join()
            .unwrap();
    assert_eq!(from_other_thread, Some(id));
    assert_eq!(interned_string_db::global().ncs(), 256);
}
