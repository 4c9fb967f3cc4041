//! A snapshot holds every intern that returned before it, including one
//! that returned through a hit on an entry another thread was still
//! inserting. Every strategy.
//!
//! One thread inserts names in order into NC 0 and announces each index
//! just before its intern; a second thread interns the announced name (a
//! hit whenever the first thread's entry is already findable) and then
//! takes a delta, which walks the NC as a snapshot does. The id its intern
//! returned must be in what the deltas have delivered so far. The optimistic
//! shard once made an entry findable by hits before it published the entry
//! to walks, with a bucket split in between: that window lost entries in
//! under a second.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use interned_string_db::{Config, Cursor, InternedStringDb, Strategy};

/// Names inserted per round: enough for hundreds of bucket splits and
/// slab and directory growths.
const NAMES: usize = 3_000;

/// Rounds, each on a fresh db: the window is a few hundred nanoseconds
/// wide, and a round meets it a few times at most. A debug build, whose
/// interns are slower, runs 3, to stay within a minute.
const ROUNDS: usize = if cfg!(debug_assertions) { 3 } else { 10 };

fn hit_on_an_entry_being_inserted_is_in_the_next_snapshot<S: Strategy>() {
    for round in 0..ROUNDS {
        one_round::<S>(round);
    }
}

fn one_round<S: Strategy>(round: usize) {
    let db = InternedStringDb::<S>::with_config(Config::new().ncs(1));
    let names: Vec<String> = (0..NAMES).map(|i| crate::common::name(0, i)).collect();
    // The index the inserter is about to intern, plus one (0: none yet).
    let announced = AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for (i, name) in names.iter().enumerate() {
                announced.store(i + 1, Ordering::Release);
                db.intern(0, name).unwrap();
            }
        });
        let mut cursor = Cursor::new();
        let mut delivered = HashSet::new();
        let mut checked = 0;
        let mut last = 0;
        while last < NAMES {
            let now = announced.load(Ordering::Acquire);
            if now == last {
                std::hint::spin_loop();
                continue;
            }
            last = now;
            // Arrive at varied points of the inserter's intern, so that
            // some hits land between its steps.
            for _ in 0..(now % 32) * 16 {
                std::hint::spin_loop();
            }
            let name = &names[now - 1];
            let id = db.intern(0, name).unwrap();
            let delta = db.delta(&mut cursor);
            delivered.extend(delta.iter().map(|(id, _)| id));
            checked += 1;
            assert!(
                delivered.contains(&id),
                "{} round {round}: the intern of name {} ({name:?}, id {id}) on NC 0 returned \
                 before delta {checked}, which did not deliver it ({} delivered so far)",
                S::NAME,
                now - 1,
                delivered.len()
            );
        }
        // The full snapshot agrees with what the deltas delivered.
        let snapshot = db.snapshot();
        assert_eq!(snapshot.len(), NAMES);
        assert_eq!(delivered.len(), NAMES);
    });
}

for_each_strategy! {
    hit_on_an_entry_being_inserted_is_in_the_next_snapshot,
}
