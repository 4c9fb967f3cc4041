//! Single-thread intern cost: hits and misses, for every strategy of ours and
//! every peer, on the same names in the same order. `get_id (floor)` is bare
//! `get_id`: the hit cost of the optimistic strategy is compared to it.
//!
//! Hits run on the synthetic vocabulary and, with `CORPUS=FILE[,FILE...]`
//! (one name per line; `perf/corpus.sh` makes some), on each real one:
//! `CORPUS=target/corpus/paths.txt cargo bench -p benches --bench intern`.
//! `optimistic-batch` is `intern_batch` fed 64 names at a time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use perf::subject::{Subject, Visitor};
use perf::subjects::SubjectName;
use perf::workload;

const OPS: usize = 10_000;

struct Hits<'c, 'g> {
    group: &'g mut criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>,
    names: &'g [String],
    sequence: &'g [u32],
    /// The subject being visited, for its name.
    subject: SubjectName,
}

impl Visitor for Hits<'_, '_> {
    fn visit<T: Subject>(&mut self, subject: &T) {
        for name in self.names {
            subject.intern(0, name); // warm: every access below is a hit
        }
        let (names, sequence) = (self.names, self.sequence);
        let batch: Vec<Vec<&str>> = sequence
            .chunks(64)
            .map(|c| c.iter().map(|&i| names[i as usize].as_str()).collect())
            .collect();
        let mut keys = [0u64; 64];
        self.group.bench_function(self.subject.name(), |b| {
            if subject.batched() {
                b.iter(|| {
                    for names in &batch {
                        let keys = &mut keys[..names.len()];
                        subject.intern_batch(0, black_box(names), keys);
                        black_box(keys);
                    }
                })
            } else {
                b.iter(|| {
                    for &i in sequence {
                        black_box(subject.intern(0, black_box(&names[i as usize])));
                    }
                })
            }
        });
    }
}

/// The vocabularies hits run on: synthetic, and the files in `CORPUS`.
fn vocabularies() -> Vec<workload::Vocabulary> {
    let mut all = vec![workload::Vocabulary::synthetic()];
    for path in std::env::var("CORPUS").unwrap_or_default().split(',') {
        if path.is_empty() {
            continue;
        }
        match workload::Vocabulary::from_file(std::path::Path::new(path), 1_000_000) {
            Ok(v) if !v.names.is_empty() => all.push(v),
            _ => eprintln!("intern bench: skipping corpus {path:?} (missing or empty)"),
        }
    }
    all
}

fn hits(c: &mut Criterion) {
    for vocabulary in vocabularies() {
        let names = &vocabulary.names;
        let sequence = workload::zipf_indices(names.len(), OPS, 1.0, 7);
        let mut group = c.benchmark_group(format!("intern/hit/{}", vocabulary.name));
        group.throughput(Throughput::Elements(OPS as u64));
        for &subject in SubjectName::all() {
            if !subject.skips_vocabulary(names.len()) {
                subject.visit(
                    256,
                    &mut Hits {
                        group: &mut group,
                        names,
                        sequence: &sequence,
                        subject,
                    },
                );
            }
        }
        group.finish();
    }
}

/// Misses: each iteration interns `OPS` names never seen before, into a
/// fresh subject (built outside the timed part).
fn misses(c: &mut Criterion) {
    let mut group = c.benchmark_group("intern/miss");
    group.throughput(Throughput::Elements(OPS as u64));
    for &subject in SubjectName::all() {
        if subject.skips_misses() {
            continue; // quadratic to fill (copy-on-write), or never empty (ustr)
        }
        group.bench_function(subject.name(), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for iter in 0..iters {
                    let fresh: Vec<String> = (0..OPS as u64)
                        .map(|i| workload::name(1000 + iter, i))
                        .collect();
                    struct Timed<'a>(&'a [String], Duration);
                    impl Visitor for Timed<'_> {
                        fn visit<T: Subject>(&mut self, subject: &T) {
                            let start = Instant::now();
                            for s in self.0 {
                                black_box(subject.intern(0, s));
                            }
                            self.1 = start.elapsed();
                        }
                    }
                    let mut timed = Timed(&fresh, Duration::ZERO);
                    // The last subject's frees, merged untimed (`perf::heap`).
                    perf::heap::settle();
                    subject.visit(256, &mut timed);
                    total += timed.1;
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = hits, misses
}
criterion_main!(benches);
