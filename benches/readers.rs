//! Read-only calls while another thread writes: `lookup` of present names,
//! `with_resolved` and `resolve` of present ids, beside an `intern` hit, on
//! one NC, each alone and with a second thread interning new names into the
//! same NC, for every strategy: `cargo bench -p benches --bench readers`
//! (`-- optimistic striped`: those strategies only).
//!
//! Each cell is the median of 5 runs of 2^20 calls (Zipf over 10^4
//! synthetic names interned before), in ns per call, the four calls' runs
//! interleaved. The loaded runs start
//! once the writer is inserting, and the writer stops with them. Then each
//! call is timed alone again, on the NC as the writer left it: what the
//! loaded cell costs beyond that is waiting for the writer, not the NC's
//! larger indexes. A copy-on-write strategy is measured alone only: a
//! writer copies its whole table on every insert.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use interned_string_db::{Config, InternedStringDb, Strategy, StrategyVisitor};
use perf::workload;

/// Calls per run.
const CALLS: usize = 1 << 20;
/// Runs per cell; the median is reported.
const RUNS: usize = 5;

#[derive(Clone, Copy)]
enum Call {
    Intern,
    Lookup,
    WithResolved,
    Resolve,
}

const CALLS_MEASURED: [Call; 4] = [
    Call::Intern,
    Call::Lookup,
    Call::WithResolved,
    Call::Resolve,
];

/// ns per call, in the order of [`CALLS_MEASURED`].
type Costs = [f64; 4];

/// Under a writer, then alone on what the writer left.
type Loaded = Option<(Costs, Costs)>;

/// ns per call of each call of [`CALLS_MEASURED`] over `sequence`, the
/// median of [`RUNS`] runs each, the calls interleaved run by run: under a
/// writer the NC grows while they are timed, and each call then meets it
/// at every size, where timing one call's runs before the next's met the
/// later calls with a larger NC.
fn time<S: Strategy>(
    db: &InternedStringDb<S>,
    names: &[String],
    ids: &[u64],
    sequence: &[u32],
) -> Costs {
    let mut runs = [[0.0; CALLS_MEASURED.len()]; RUNS];
    for run in &mut runs {
        for (cost, &call) in run.iter_mut().zip(&CALLS_MEASURED) {
            *cost = time_once(db, names, ids, sequence, call);
        }
    }
    core::array::from_fn(|k| {
        let mut cell = runs.map(|run| run[k]);
        cell.sort_by(f64::total_cmp);
        cell[RUNS / 2]
    })
}

/// ns per call of one run of `call` over `sequence`.
fn time_once<S: Strategy>(
    db: &InternedStringDb<S>,
    names: &[String],
    ids: &[u64],
    sequence: &[u32],
    call: Call,
) -> f64 {
    let start = Instant::now();
    let mut acc = 0u64;
    for &i in sequence {
        let i = i as usize;
        acc ^= match call {
            Call::Intern => db.intern(0, black_box(&names[i])).unwrap_or(0),
            Call::Lookup => db.lookup(0, black_box(&names[i])).unwrap_or(0),
            Call::WithResolved => db
                .with_resolved(0, black_box(ids[i]), |b| b.len() as u64)
                .unwrap_or(0),
            Call::Resolve => db
                .resolve(0, black_box(ids[i]))
                .map_or(0, |b| black_box(b).len() as u64),
        };
    }
    black_box(acc);
    start.elapsed().as_nanos() as f64 / sequence.len() as f64
}

/// Every call's cost alone, then under a writer, then alone on what the
/// writer left (none of the last two for a copy-on-write strategy).
fn measure<S: Strategy>() -> (Costs, Loaded) {
    let db = InternedStringDb::<S>::with_config(Config::default());
    let names = workload::vocabulary(10_000);
    let ids: Vec<u64> = names.iter().map(|n| db.intern(0, n).unwrap()).collect();
    let sequence = workload::zipf_indices(names.len(), CALLS, 1.0, 7);
    let alone = time(&db, &names, &ids, &sequence);
    if S::COPY_ON_WRITE {
        return (alone, None);
    }
    let stop = AtomicBool::new(false);
    let inserted = AtomicU64::new(0);
    let loaded = std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                // Stream 1: names the vocabulary (stream 0) does not have.
                let _ = db.intern(0, &workload::name(1, i));
                i += 1;
                inserted.store(i, Ordering::Relaxed);
            }
        });
        while inserted.load(Ordering::Relaxed) < 1_000 {
            std::hint::spin_loop();
        }
        let loaded = time(&db, &names, &ids, &sequence);
        stop.store(true, Ordering::Relaxed);
        loaded
    });
    let after = time(&db, &names, &ids, &sequence);
    (alone, Some((loaded, after)))
}

/// Every strategy's rows, from the crate's one list (those named in
/// `only`, if any).
#[derive(Default)]
struct MeasureAll {
    rows: Vec<(&'static str, (Costs, Loaded))>,
    only: Vec<String>,
}

impl StrategyVisitor for MeasureAll {
    fn visit<S: Strategy>(&mut self) {
        if self.only.is_empty() || self.only.iter().any(|name| name == S::NAME) {
            self.rows.push((S::NAME, measure::<S>()));
        }
    }
}

fn main() {
    // Strategies named after `--` (`cargo bench -p benches --bench readers
    // -- optimistic striped`); every one without. Flags are cargo's.
    let only = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut all = MeasureAll {
        only,
        ..MeasureAll::default()
    };
    interned_string_db::for_each_strategy(&mut all);
    let rows = all.rows;
    println!(
        "ns per call on NC 0: alone / with a second thread interning new names into NC 0 / \
         alone again after it (× the intern hit under load for lookup, × the call alone \
         for the resolves, before / after)"
    );
    println!(
        "{:<14} {:>16} {:>28} {:>28} {:>28}",
        "strategy", "intern hit", "lookup", "with_resolved", "resolve"
    );
    for (name, (alone, measured)) in rows {
        let cell = |k: usize| match measured {
            Some((l, a)) if k == 0 => format!("{:.0} / {:.0} / {:.0}", alone[k], l[k], a[k]),
            Some((l, a)) if k == 1 => format!(
                "{:.0} / {:.0} / {:.0} ({:.2}×)",
                alone[k],
                l[k],
                a[k],
                l[k] / l[0]
            ),
            Some((l, a)) => format!(
                "{:.0} / {:.0} / {:.0} ({:.2}× / {:.2}×)",
                alone[k],
                l[k],
                a[k],
                l[k] / alone[k],
                l[k] / a[k]
            ),
            None => format!("{:.0} / - / -", alone[k]),
        };
        println!(
            "{name:<14} {:>16} {:>28} {:>28} {:>28}",
            cell(0),
            cell(1),
            cell(2),
            cell(3)
        );
    }
}
