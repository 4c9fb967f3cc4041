//! The shard's unit tests with threads: readers racing a writer, and
//! lookups by id that must not wait for its lock.

use super::*;

#[test]
fn concurrent_readers_and_a_writer() {
    let shard = RawShard::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..N {
                shard.write().insert(i, &i.to_le_bytes(), true).unwrap();
            }
        });
        for _ in 0..2 {
            s.spawn(|| {
                for round in 0..3 {
                    let mut walked = 0;
                    shard.for_each(|e| {
                        assert_eq!(e.bytes(), &e.id().to_le_bytes(), "round {round}");
                        walked += 1;
                    });
                    for i in 0..N {
                        if let Some(e) = shard.find_by_bytes(&i.to_le_bytes()) {
                            assert_eq!(e.id(), i, "round {round}");
                        }
                    }
                    assert!(walked <= N);
                }
            });
        }
    });
    assert_eq!(shard.len() as u64, N);
    for i in 0..N {
        assert_eq!(shard.find_by_bytes(&i.to_le_bytes()).unwrap().id(), i);
    }
}

#[test]
fn finding_by_id_does_not_wait_for_the_writer_lock() {
    let shard = RawShard::new(0);
    // Past a settle, and a tail the map lacks.
    let n = 105;
    for i in 0..n {
        shard.write().insert(i, &key(i), true).unwrap();
        if i == 80 {
            settle(&shard);
        }
    }
    let held = shard.write();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..n {
                assert_eq!(shard.find_by_id(i).unwrap().bytes(), &key(i)[..]);
            }
            assert!(shard.find_by_id(n).is_none());
            done.send(()).unwrap();
        });
        // Not a timing: a reader that took the writer lock never finishes.
        let answer = finished.recv_timeout(std::time::Duration::from_secs(60));
        drop(held);
        answer.expect("find_by_id waited for the writer lock");
    });
}

#[test]
fn finding_by_id_races_a_writer() {
    let shard = RawShard::new(0);
    let inserted = AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..WALKED {
                shard.write().insert(i, &key(i), i % 3 != 0).unwrap();
                inserted.store(i as usize + 1, Ordering::Release);
            }
        });
        for reader in 0..2u64 {
            let (shard, inserted) = (&shard, &inserted);
            s.spawn(move || loop {
                let known = inserted.load(Ordering::Acquire) as u64;
                // Every id inserted before the load is found, whole; a later
                // one is found whole or not at all.
                for i in (reader..known.min(WALKED)).step_by(7) {
                    assert_eq!(shard.find_by_id(i).unwrap().bytes(), &key(i)[..]);
                }
                if let Some(e) = shard.find_by_id(known) {
                    assert_eq!(e.bytes(), &key(known)[..]);
                }
                if known == WALKED {
                    break;
                }
            });
        }
    });
}
