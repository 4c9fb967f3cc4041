//! The optimistic strategy's unit tests: refusals, outcomes, moved NCs
//! and their lookups.

use super::*;
use crate::conflict::ConflictLog;

fn shard(byte_cap: usize, slab_limit: usize) -> OptimisticShard {
    let config = ShardConfig {
        byte_cap,
        initial_capacity: 0,
        slab_limit,
    };
    OptimisticShard::new(&config).unwrap()
}

/// What moving to stripes (as a contended miss does) leaves: the
/// entries before it found first, later ones in the stripes, one
/// settle's conflicts in the calls' order across both, walks that see
/// each entry once.
#[test]
fn an_nc_moved_to_stripes_keeps_its_entries_first() {
    let log = ConflictLog::try_new().unwrap();
    let sink = ConflictSink::new(&log, usize::MAX, 0);
    let nc = shard(usize::MAX, usize::MAX);
    let intern = |name: &str, id: u64| {
        let key = Key::with_id(name.as_bytes(), id, IdSource::Caller);
        nc.intern(key, sink).unwrap()
    };
    assert_eq!(intern("first", 1), (1, Registered::Inserted));
    nc.move_to_stripes(&nc.raw.write());
    assert!(nc.stripes.get().is_some());
    // A moved NC moves no more, and its first shard takes no entry.
    let before = nc.raw.len();
    for i in 2..200 {
        assert_eq!(intern(&format!("name {i}"), i), (i, Registered::Inserted));
    }
    assert_eq!(nc.raw.len(), before);
    assert_eq!(intern("first", 1), (1, Registered::AlreadyPresent));
    assert_eq!(intern("other", 1), (1, Registered::Conflict));
    assert_eq!(intern("again", 7), (7, Registered::Conflict));
    nc.settle(sink);
    assert_eq!(nc.stats().entries, 199);
    assert_eq!(nc.resolve(1, <[u8]>::to_vec).unwrap(), b"first");
    assert_eq!(nc.resolve(7, <[u8]>::to_vec).unwrap(), b"name 7");
    let mut seen = Vec::new();
    let end = nc.walk(0, |id, _| seen.push(id)).unwrap();
    seen.sort_unstable();
    assert_eq!(seen, (1..200).collect::<Vec<_>>());
    assert!(end >= STRIPED_WALK);
    assert_eq!(nc.walk(end, |_, _| unreachable!()), Some(end));
    let mut rejected = Vec::new();
    log.for_each(|conflict| rejected.push(conflict.rejected.to_vec()));
    assert_eq!(rejected, [b"other".to_vec(), b"again".to_vec()]);
}

/// `name` with `id` given as if it were the bytes' hash, so that tests
/// can collide ids.
fn key(name: &str, id: u64) -> Key<'_> {
    Key::with_id(name.as_bytes(), id, IdSource::Hash)
}

/// A moved NC's lookups: the stripes' map answers for what a settle
/// took, the first string of an id only, and a settle answers for the
/// rest, the same way.
#[test]
fn a_moved_ncs_lookup_answers_for_the_first_string_of_an_id() {
    let log = ConflictLog::try_new().unwrap();
    let sink = ConflictSink::new(&log, usize::MAX, 0);
    let nc = shard(usize::MAX, usize::MAX);
    nc.intern(key("base", 9), sink).unwrap();
    nc.move_to_stripes(&nc.raw.write());
    for (name, id) in [("kept", 5), ("lost", 5), ("lost to base", 9), ("alone", 6)] {
        nc.intern(key(name, id), sink).unwrap();
    }
    let answers = |nc: &OptimisticShard| {
        [
            ("base", 9),
            ("kept", 5),
            ("lost", 5),
            ("lost to base", 9),
            ("alone", 6),
            ("absent", 7),
        ]
        .map(|(name, id)| nc.lookup(key(name, id), sink))
    };
    let expected = [Some(9), Some(5), None, None, Some(6), None];
    let settled = |name: &[u8]| nc.lookup_settled(nc.raw.bytes_hash(name), name);
    // Before a settle the stripes' map lacks every id: a settle answers.
    assert!(settled(b"kept").is_none());
    assert_eq!(answers(&nc), expected);
    // Settled: the map answers, a settle is not needed.
    assert_eq!(settled(b"kept"), Some(Some(5)));
    assert_eq!(settled(b"lost"), Some(None));
    assert_eq!(settled(b"lost to base"), Some(None));
    assert_eq!(settled(b"base"), None);
    assert_eq!(answers(&nc), expected);
    assert_eq!(log.len(), 2);
}

/// A moved NC's lookup answers without the by-id map's lock for an
/// entry at or before its stripe's settled end while no settle left an
/// entry unmapped, and asks the map for one after the end, or once a
/// conflict's loser was settled.
#[test]
fn a_moved_ncs_settled_end_answers_without_the_map() {
    let log = ConflictLog::try_new().unwrap();
    let sink = ConflictSink::new(&log, usize::MAX, 0);
    let nc = shard(usize::MAX, usize::MAX);
    nc.move_to_stripes(&nc.raw.write());
    let stripes = nc.stripes.get().unwrap();
    let first = |name: &str| {
        let hash = nc.raw.bytes_hash(name.as_bytes());
        stripes
            .find_settled_by_hash(hash, name.as_bytes())
            .unwrap()
            .1
    };
    nc.intern(key("one", 1), sink).unwrap();
    assert!(!first("one"), "not settled yet");
    nc.settle(sink);
    assert!(first("one"));
    nc.intern(key("two", 2), sink).unwrap();
    assert!(first("one"));
    assert!(!first("two"), "after its stripe's settled end");
    assert_eq!(nc.lookup(key("two", 2), sink), Some(2));
    assert!(first("two"), "the lookup settled");
    // A loser, once settled, turns every answer to the map's.
    nc.intern(key("loser", 1), sink).unwrap();
    nc.settle(sink);
    assert!(!first("one") && !first("two") && !first("loser"));
    assert_eq!(nc.lookup(key("one", 1), sink), Some(1));
    assert_eq!(nc.lookup(key("loser", 1), sink), None);
    assert_eq!(log.len(), 1);
}

#[test]
fn an_nc_with_a_limit_or_closed_never_moves() {
    for (cap, slabs) in [(1 << 20, usize::MAX), (usize::MAX, 1000)] {
        let nc = shard(cap, slabs);
        nc.move_to_stripes(&nc.raw.write());
        assert!(nc.stripes.get().is_none());
    }
    let nc = shard(usize::MAX, usize::MAX);
    nc.set_open(false);
    nc.move_to_stripes(&nc.raw.write());
    assert!(nc.stripes.get().is_none());
    nc.set_open(true);
    nc.move_to_stripes(&nc.raw.write());
    assert!(nc.stripes.get().is_some());
    nc.set_open(false);
    assert!(!nc.is_open());
    let log = ConflictLog::try_new().unwrap();
    let key = Key::hashed(b"late", crate::ID_MASK);
    assert_eq!(
        nc.intern(key, ConflictSink::new(&log, usize::MAX, 0)),
        Err(Refusal::Closed)
    );
}

/// Runs `f` with an NC of no limits and a sink into a fresh conflict log,
/// on a thread of its own, so that its run of misses (`miss_run`, one a
/// thread) starts empty whatever ran before on the test's thread.
fn on_a_fresh_thread(f: impl FnOnce(&OptimisticShard, ConflictSink<'_>) + Send + 'static) {
    std::thread::spawn(|| {
        let log = ConflictLog::try_new().unwrap();
        let nc = shard(usize::MAX, usize::MAX);
        f(&nc, ConflictSink::new(&log, usize::MAX, 0));
    })
    .join()
    .unwrap();
}

/// Interns `name` under the db's id of it, as a plain `intern` does.
fn intern_plain(nc: &OptimisticShard, sink: ConflictSink<'_>, name: &str) -> Interned {
    nc.intern(Key::hashed(name.as_bytes(), crate::ID_MASK), sink)
}

/// That the hit path of `name` predicts a miss: it goes to the miss path
/// with the bytes' hash, unprobed.
fn assert_predicted(nc: &OptimisticShard, name: &str) {
    let unprobed = Placement {
        hash: nc.raw.bytes_hash(name.as_bytes()),
        probed: false,
    };
    assert_eq!(nc.find_hit(name.as_bytes()), Err(Some(unprobed)));
}

/// That a plain intern of `name`, which `nc` holds, answers it as present
/// and ends the thread's run, so that the next hit path probes.
fn assert_found_ends_the_run(nc: &OptimisticShard, sink: ConflictSink<'_>, name: &str) {
    let id = crate::get_id(name.as_bytes());
    let answer = intern_plain(nc, sink, name);
    assert_eq!(answer, Ok((id, Registered::AlreadyPresent)));
    assert_eq!(miss_run::current(), 0);
    assert_eq!(nc.find_hit(name.as_bytes()), Ok(id));
}

/// A thread's run of inserts predicts its next intern to miss: the hit
/// path skips its probe, and the name, found under the lock, is answered
/// as present (nothing stored twice) and ends the run, so that the next
/// hit probes lock-free again.
#[test]
fn a_run_of_inserts_predicts_a_miss_and_a_hit_ends_it() {
    on_a_fresh_thread(|nc, sink| {
        let names: Vec<String> = (0..miss_run::PREDICT_AFTER)
            .map(|i| format!("name {i}"))
            .collect();
        for name in &names {
            let (id, registered) = intern_plain(nc, sink, name).unwrap();
            assert_eq!(
                (id, registered),
                (crate::get_id(name.as_bytes()), Registered::Inserted)
            );
        }
        assert_eq!(miss_run::current(), miss_run::PREDICT_AFTER);
        assert_predicted(nc, &names[0]);
        assert_found_ends_the_run(nc, sink, &names[0]);
        assert_eq!(nc.stats().entries, names.len());
        assert!(nc.stripes.get().is_none());
    });
}

/// A predicted miss whose append-first path would have to allocate the
/// table's spares probes first instead: a name the NC holds is answered
/// as present, with no allocation tried, whatever memory is left. Runs of
/// eight inserts are made with memory, each followed by an intern of a
/// present name with every allocation of `raw` refused, often enough that
/// some find the spares short.
#[test]
fn a_predicted_hit_is_answered_when_memory_runs_out() {
    use crate::raw::refusals;
    on_a_fresh_thread(|nc, sink| {
        let runs = if cfg!(miri) { 20 } else { 10_000 };
        for run in 0..runs {
            for i in 0..miss_run::PREDICT_AFTER {
                let name = format!("name {run} {i}");
                intern_plain(nc, sink, &name).unwrap();
            }
            refusals::arm();
            let before = refusals::count();
            let answer = intern_plain(nc, sink, "name 0 0");
            let tried = refusals::count() - before;
            refusals::disarm();
            let id = crate::get_id(b"name 0 0");
            assert_eq!(answer, Ok((id, Registered::AlreadyPresent)), "{run}");
            assert_eq!(tried, 0, "{run}: a hit tried to allocate");
        }
    });
}

/// A thread's run of inserts into `nc`, then, while the guard that `hold`
/// returns is held, the same thread's plain intern of `name 0` (which the
/// run inserted): its answer, or `Err` if it did not come within a minute
/// (it waited for the lock held).
fn intern_while_held<G>(
    nc: &OptimisticShard,
    hold: impl FnOnce() -> G,
) -> Result<Interned, std::sync::mpsc::RecvTimeoutError> {
    let log = ConflictLog::try_new().unwrap();
    let sink = ConflictSink::new(&log, usize::MAX, 0);
    let (run, ran) = std::sync::mpsc::channel();
    let (held, holds) = std::sync::mpsc::channel();
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for i in 0..miss_run::PREDICT_AFTER {
                intern_plain(nc, sink, &format!("name {i}")).unwrap();
            }
            assert_eq!(miss_run::current(), miss_run::PREDICT_AFTER);
            run.send(()).unwrap();
            holds.recv().unwrap();
            answer.send(intern_plain(nc, sink, "name 0")).unwrap();
        });
        ran.recv().unwrap();
        let guard = hold();
        held.send(()).unwrap();
        let answer = answered.recv_timeout(std::time::Duration::from_secs(60));
        drop(guard);
        answer
    })
}

/// A miss predicted without a probe that finds the NC's lock held probes
/// lock-free before it would wait: a name the NC holds is answered without
/// the lock, and the NC does not move to stripes.
#[test]
fn a_predicted_miss_that_is_a_hit_never_waits_for_the_lock() {
    let nc = shard(usize::MAX, usize::MAX);
    let answer = intern_while_held(&nc, || nc.raw.write());
    let id = crate::get_id(b"name 0");
    assert_eq!(answer, Ok(Ok((id, Registered::AlreadyPresent))));
    assert!(nc.stripes.get().is_none());
}

/// A run of inserts predicts a miss in a moved NC too: the hit path
/// probes only the frozen shard (a name there is answered at once) and
/// leaves the stripe to the probe under its lock, which answers a name it
/// holds as present and ends the run.
#[test]
fn a_moved_ncs_run_predicts_a_miss_and_a_hit_ends_it() {
    on_a_fresh_thread(|nc, sink| {
        let frozen = "frozen";
        intern_plain(nc, sink, frozen).unwrap();
        nc.move_to_stripes(&nc.raw.write());
        let names: Vec<String> = (0..miss_run::PREDICT_AFTER)
            .map(|i| format!("name {i}"))
            .collect();
        let fill = |names: &[String]| {
            for name in names {
                let id = crate::get_id(name.as_bytes());
                let interned = intern_plain(nc, sink, name).unwrap();
                assert_eq!(interned, (id, Registered::Inserted));
            }
        };
        miss_run::end();
        fill(&names);
        assert_eq!(miss_run::current(), miss_run::PREDICT_AFTER);
        assert_predicted(nc, &names[0]);
        let frozen_id = crate::get_id(frozen.as_bytes());
        assert_eq!(nc.find_hit(frozen.as_bytes()), Ok(frozen_id));
        assert_eq!(miss_run::current(), 0);
        let more: Vec<String> = (0..miss_run::PREDICT_AFTER)
            .map(|i| format!("more {i}"))
            .collect();
        fill(&more);
        assert_eq!(miss_run::current(), miss_run::PREDICT_AFTER);
        assert_found_ends_the_run(nc, sink, &names[0]);
        nc.settle(sink);
        assert_eq!(nc.stats().entries, 1 + names.len() + more.len());
        assert_eq!(nc.raw.len(), 1);
    });
}

/// A miss predicted in a moved NC that finds its stripe's lock held
/// probes the stripe lock-free before it would wait: a name the stripe
/// holds is answered without the lock.
#[test]
fn a_predicted_miss_in_a_moved_nc_never_waits_for_a_stripe_lock() {
    let nc = shard(usize::MAX, usize::MAX);
    nc.move_to_stripes(&nc.raw.write());
    let stripes = nc.stripes.get().expect("moved");
    let answer = intern_while_held(&nc, || stripes.write(nc.raw.bytes_hash(b"name 0")));
    let id = crate::get_id(b"name 0");
    assert_eq!(answer, Ok(Ok((id, Registered::AlreadyPresent))));
}
