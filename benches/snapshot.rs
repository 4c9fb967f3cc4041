//! Snapshot merge time for 10^4, 10^5 and 10^6 entries spread over 256 NCs,
//! idle and with 2 threads interning (hits) during the merge, beside the
//! floor of copying every entry once, in the same run; and a delta of 1,000
//! new names after the largest size; and snapshot files of 10^6 entries
//! (write, read, merge of two hosts' files).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use interned_string_db::{
    get_id, Config, Cursor, InternedStringDb, Snapshot, Strategy, StrategyVisitor,
};
use perf::workload;

const NCS: usize = 256;

fn filled<S: Strategy>(entries: usize) -> (InternedStringDb<S>, Vec<String>) {
    let db = InternedStringDb::with_config(Config::new().ncs(NCS));
    let names: Vec<String> = (0..entries as u64).map(|i| workload::name(7, i)).collect();
    for (i, name) in names.iter().enumerate() {
        db.intern(i % NCS, name).unwrap();
    }
    (db, names)
}

/// The floor a snapshot is measured against: every name copied once, into
/// one buffer (the least any copy costs), and into an allocation of its own
/// (what copying entries out one by one costs).
fn bench_copy_floor(c: &mut Criterion, sizes: &[usize]) {
    let mut group = c.benchmark_group("snapshot/copy floor");
    for &entries in sizes {
        let names: Vec<String> = (0..entries as u64).map(|i| workload::name(7, i)).collect();
        let total: usize = names.iter().map(String::len).sum();
        group.throughput(Throughput::Elements(entries as u64));
        group.bench_function(BenchmarkId::new("one buffer", entries), |b| {
            b.iter(|| {
                let mut buffer = Vec::with_capacity(total);
                for name in &names {
                    buffer.extend_from_slice(name.as_bytes());
                }
                black_box(buffer.len())
            })
        });
        group.bench_function(BenchmarkId::new("one allocation each", entries), |b| {
            b.iter(|| {
                let copies: Vec<Box<[u8]>> = names.iter().map(|n| n.as_bytes().into()).collect();
                black_box(copies.len())
            })
        });
    }
    group.finish();
}

fn bench_strategy<S: Strategy>(c: &mut Criterion, sizes: &[usize]) {
    let mut group = c.benchmark_group(format!("snapshot/{}", S::NAME));
    for &entries in sizes {
        let (db, names) = filled::<S>(entries);
        group.throughput(Throughput::Elements(entries as u64));
        group.bench_function(BenchmarkId::new("idle", entries), |b| {
            b.iter(|| black_box(db.snapshot().len()))
        });
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for t in 0..2 {
                let (db, names, stop) = (&db, &names, &stop);
                s.spawn(move || {
                    let mut i = t;
                    while !stop.load(Ordering::Relaxed) {
                        black_box(db.intern(i % NCS, &names[i % names.len()]).unwrap());
                        i += 2;
                    }
                });
            }
            group.bench_function(BenchmarkId::new("2 threads interning", entries), |b| {
                b.iter(|| black_box(db.snapshot().len()))
            });
            stop.store(true, Ordering::Relaxed);
        });
        if Some(&entries) == sizes.last() {
            bench_delta(&mut group, &db, entries);
        }
    }
    group.finish();
}

/// A delta of 1,000 names new since the cursor's last delta, after `entries`
/// delivered. The interning is not timed.
fn bench_delta<S: Strategy>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    db: &InternedStringDb<S>,
    entries: usize,
) {
    const NEW: u64 = 1_000;
    let mut cursor = Cursor::new();
    black_box(db.delta(&mut cursor));
    let mut next = 0u64;
    group.throughput(Throughput::Elements(NEW));
    group.bench_function(BenchmarkId::new("delta of 1000 new", entries), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                for _ in 0..NEW {
                    db.intern(next as usize % NCS, &workload::name(8, next))
                        .unwrap();
                    next += 1;
                }
                let start = Instant::now();
                let delta = db.delta(&mut cursor);
                timed += start.elapsed();
                assert_eq!(delta.len() as u64, NEW);
            }
            timed
        })
    });
}

/// Files of 10^6 entries: `write_to` into memory, `read_from` it, and
/// `merge` of two hosts' snapshots sharing half their names.
fn bench_files(c: &mut Criterion) {
    const ENTRIES: u64 = 1_000_000;
    let host = |first: u64| {
        let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(NCS));
        for i in first..first + ENTRIES {
            db.intern(i as usize % NCS, &workload::name(7, i)).unwrap();
        }
        db.snapshot()
    };
    let (a, b) = (host(0), host(ENTRIES / 2));
    let mut file = Vec::new();
    a.write_to(&mut file).unwrap();
    let mut group = c.benchmark_group("snapshot/files");
    group.throughput(Throughput::Elements(ENTRIES));
    group.bench_function(BenchmarkId::new("write_to", ENTRIES), |bench| {
        bench.iter(|| {
            let mut out = Vec::with_capacity(file.len());
            a.write_to(&mut out).unwrap();
            black_box(out.len())
        })
    });
    group.bench_function(BenchmarkId::new("read_from", ENTRIES), |bench| {
        bench.iter(|| black_box(Snapshot::read_from(&file[..]).unwrap().len()))
    });
    group.throughput(Throughput::Elements(2 * ENTRIES));
    group.bench_function(BenchmarkId::new("merge of two", ENTRIES), |bench| {
        bench.iter(|| black_box(Snapshot::merge([&a, &b]).len()))
    });
    // `get` of the ids of 2^16 names spread over the snapshot, in turn: their
    // searches read lines of 16 MB of ids and ends, past the L2.
    let ids: Vec<u64> = (0..1 << 16)
        .map(|i| get_id(workload::name(7, i * 7919 % ENTRIES).as_bytes()))
        .collect();
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("get", ENTRIES), |bench| {
        let mut at = 0;
        bench.iter(|| {
            at = (at + 1) % ids.len();
            black_box(a.get(ids[at]).map(<[u8]>::len))
        })
    });
    group.finish();
}

fn snapshot(c: &mut Criterion) {
    let all = [10_000, 100_000, 1_000_000];
    bench_copy_floor(c, &all);
    bench_files(c);
    struct EveryStrategy<'c> {
        c: &'c mut Criterion,
        all: &'c [usize],
    }
    impl StrategyVisitor for EveryStrategy<'_> {
        fn visit<S: Strategy>(&mut self) {
            // Copy-on-write is quadratic to fill: 10^6 entries would take
            // hours.
            let sizes = if perf::subjects::copies_on_write(S::NAME) {
                &self.all[..2]
            } else {
                self.all
            };
            bench_strategy::<S>(self.c, sizes);
        }
    }
    interned_string_db::for_each_strategy(&mut EveryStrategy { c, all: &all });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    targets = snapshot
}
criterion_main!(benches);
