//! Worker threads, one per NC, each pinned to a CPU, interning their own
//! names through an `NcHandle`; then one snapshot of everything.
//!
//! `cargo run --release --example pinned_threads [THREADS]`

use interned_string_db::{get_id, InternedStringDb};

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .map(|t| t.parse().expect("THREADS must be a number"))
        .unwrap_or(4);
    let db = InternedStringDb::new(); // 256 NCs, the default strategy
    std::thread::scope(|scope| {
        for t in 0..threads {
            let db = &db;
            scope.spawn(move || {
                // Thread t gets NC t % 256 and a CPU of its own where it can.
                let handle = db.pin_current_thread(t);
                for layer in 0..100 {
                    let name = format!("model_{t}/layer_{layer}/forward");
                    let id = handle.intern(&name).expect("intern");
                    assert_eq!(id, get_id(name.as_bytes())); // the id is the hash
                }
                println!(
                    "thread {t}: NC {}, CPU {}",
                    handle.nc(),
                    handle
                        .cpu()
                        .map_or_else(|| "unpinned".to_string(), |c| c.to_string())
                );
            });
        }
    });
    let snapshot = db.snapshot();
    assert_eq!(snapshot.len(), threads * 100);
    println!(
        "{} names from {threads} threads in one snapshot",
        snapshot.len()
    );
}
