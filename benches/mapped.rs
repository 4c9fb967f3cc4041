//! The mapped snapshot reader (`MappedSnapshot`) on files of 10^4, 10^6 and
//! 10^7 entries: `open` of the smallest and the largest (and the resident
//! memory each open adds, printed), `get` of random ids on a warm mapping,
//! and iterating a mapped 10^6 file against `Snapshot::load` and iterating.
//! It reads files, so it takes no strategy list: the files are written by
//! the default db, once, under the target directory (the 10^7 file is
//! about 0.5 GB, kept for the next run).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use interned_string_db::{get_id, Config, InternedStringDb, MappedSnapshot, Snapshot};
use perf::workload;

const NCS: usize = 16;

/// The name of entry `index`.
fn name(index: u64) -> String {
    workload::name(11, index)
}

/// A snapshot file of `entries` names under the target directory, written
/// unless a file of that many entries is there already.
fn file_of(entries: u64) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mapped-{entries}.isdb"));
    if let Ok(mapped) = MappedSnapshot::open(&path) {
        if mapped.len() as u64 == entries && mapped.version() == 2 {
            return path;
        }
    }
    let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(NCS));
    for i in 0..entries {
        db.intern(i as usize % NCS, &name(i)).unwrap();
    }
    db.snapshot().save(&path).unwrap();
    path
}

/// This process's resident memory, in bytes (`/proc/self/statm`; 0 where
/// there is none).
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// `count` ids of entries of a file of `entries`, spread at random.
fn some_ids(entries: u64, count: u64) -> Vec<u64> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            get_id(name(state % entries).as_bytes())
        })
        .collect()
}

fn bench_open_and_get(c: &mut Criterion) {
    for entries in [10_000u64, 10_000_000] {
        let path = file_of(entries);
        let before = resident();
        let mapped = MappedSnapshot::open(&path).unwrap();
        let after = resident();
        println!(
            "mapped/open {entries}: file {} bytes, resident memory {} KiB more after open",
            std::fs::metadata(&path).unwrap().len(),
            after.saturating_sub(before) / 1024
        );
        let mut group = c.benchmark_group("mapped");
        group.bench_function(BenchmarkId::new("open", entries), |b| {
            b.iter(|| black_box(MappedSnapshot::open(&path).unwrap().len()))
        });
        let ids = some_ids(entries, 1 << 16);
        // Warm: every page the lookups touch is in memory.
        for &id in &ids {
            assert!(mapped.get(id).unwrap().is_some());
        }
        let mut at = 0;
        group.bench_function(BenchmarkId::new("get (warm)", entries), |b| {
            b.iter(|| {
                at = (at + 1) % ids.len();
                black_box(mapped.get(ids[at]).unwrap().map(<[u8]>::len))
            })
        });
        group.finish();
    }
}

fn bench_iterate(c: &mut Criterion) {
    const ENTRIES: u64 = 1_000_000;
    let path = file_of(ENTRIES);
    let mut group = c.benchmark_group("mapped/iterate");
    group.throughput(Throughput::Elements(ENTRIES));
    group.bench_function(BenchmarkId::new("open and iterate", ENTRIES), |b| {
        b.iter(|| {
            let mapped = MappedSnapshot::open(&path).unwrap();
            let bytes: usize = mapped.iter().map(|e| e.unwrap().1.len()).sum();
            black_box(bytes)
        })
    });
    group.bench_function(BenchmarkId::new("load and iterate", ENTRIES), |b| {
        b.iter(|| {
            let snapshot = Snapshot::load(&path).unwrap();
            let bytes: usize = snapshot.iter().map(|(_, name)| name.len()).sum();
            black_box(bytes)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    targets = bench_open_and_get, bench_iterate
}
criterion_main!(benches);
