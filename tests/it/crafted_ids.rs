//! Caller-chosen ids cannot force long probe chains.
//!
//! The optimistic strategy once placed ids by an unseeded multiply, so ids
//! built from the multiplier's inverse all landed in one slot: 40,000 of them
//! took 2.3 s to register against 8 ms for sequential ids, and the time grew
//! with the square of the count. Every strategy now places ids by a hash
//! seeded per shard. This registers 100,000 such ids (about 10 minutes under
//! the old placement); a watchdog fails the test instead of letting it hang.

use std::sync::mpsc;
use std::time::Duration;

use interned_string_db::{Config, InternedStringDb, Registered, Strategy};

/// The inverse of `a` modulo 2^64 (Newton's iteration; `a` odd).
fn inverse(a: u64) -> u64 {
    let mut x = a; // correct to 3 bits
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

fn crafted_ids_register_in_linear_time<S: Strategy>() {
    // Copy-on-write copies the map on every insert, whatever the ids: it is
    // quadratic to fill by design, so it gets fewer.
    let n: u64 = if S::COPY_ON_WRITE { 3_000 } else { 100_000 };
    let inv = inverse(0x9E37_79B9_7F4A_7C15);
    assert_eq!(inv.wrapping_mul(0x9E37_79B9_7F4A_7C15), 1);
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(1));
        for k in 1..=n {
            // id * multiplier == k: every id had the same home slot.
            let id = k.wrapping_mul(inv);
            let name = format!("crafted-{k}");
            assert_eq!(
                db.register(0, id, name.as_bytes()),
                Ok(Registered::Inserted)
            );
        }
        for k in (1..=n).step_by(997) {
            let id = k.wrapping_mul(inv);
            assert_eq!(
                db.resolve(0, id).as_deref(),
                Some(format!("crafted-{k}").as_bytes())
            );
        }
        done.send(db.nc_len(0)).unwrap();
    });
    // A generous bound: the work takes well under a second in release and a
    // few seconds in debug builds; quadratic placement takes minutes.
    match finished.recv_timeout(Duration::from_secs(120)) {
        Ok(len) => assert_eq!(len as u64, n),
        Err(e) => panic!(
            "{}: {n} crafted ids did not register in 120 s ({e})",
            S::NAME
        ),
    }
}

for_each_strategy!(crafted_ids_register_in_linear_time);
