//! T threads interning at once (1, 2, 4, 8), hit-heavy and miss-heavy, all
//! on one NC and each on its own, for every strategy and peer. Each worker
//! times its own window after a start gate; the measured time is the earliest
//! start to the latest end (`docs/benchmarks.md`, Method). The
//! contention harness (`cargo run --release -p perf`) covers more thread
//! counts and reports latency and contention counters.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use perf::subject::{Subject, Visitor};
use perf::subjects::SubjectName;
use perf::workload;
use workload::Workload;

/// Operations per thread per criterion iteration.
const OPS: usize = 1_000;
const THREADS: &[usize] = &[1, 2, 4, 8];

/// Runs `threads` threads for `iters` iterations of `OPS` interns each and
/// returns the window.
struct Timed<'a> {
    workload: Workload,
    threads: usize,
    own_nc: bool,
    iters: u64,
    vocabulary: &'a [String],
    elapsed: Duration,
}

impl Visitor for Timed<'_> {
    fn visit<T: Subject>(&mut self, subject: &T) {
        let per_thread = self.iters as usize * OPS;
        let inputs: Vec<Vec<String>> = (0..self.threads)
            .map(|t| match self.workload {
                Workload::HitHeavy => {
                    let seq = workload::zipf_indices(
                        self.vocabulary.len(),
                        per_thread.min(1 << 16),
                        1.0,
                        t as u64,
                    );
                    seq.iter()
                        .map(|&i| self.vocabulary[i as usize].clone())
                        .collect()
                }
                Workload::MissHeavy => (0..per_thread as u64)
                    .map(|i| workload::name(1 + t as u64 + (self.iters << 8), i))
                    .collect(),
            })
            .collect();
        let nc_of = |t: usize| if self.own_nc { t } else { 0 };
        if self.workload == Workload::HitHeavy {
            for t in 0..self.threads {
                for name in self.vocabulary {
                    subject.intern(nc_of(t), name);
                }
            }
        }
        let (ready, go) = (AtomicUsize::new(0), AtomicBool::new(false));
        let windows: Vec<(Instant, Instant)> = std::thread::scope(|s| {
            let handles: Vec<_> = inputs
                .iter()
                .enumerate()
                .map(|(t, names)| {
                    let (ready, go) = (&ready, &go);
                    s.spawn(move || {
                        ready.fetch_add(1, Ordering::Release);
                        while !go.load(Ordering::Acquire) {
                            std::thread::yield_now();
                        }
                        let start = Instant::now();
                        for name in names.iter().cycle().take(per_thread) {
                            black_box(subject.intern(nc_of(t), name));
                        }
                        (start, Instant::now())
                    })
                })
                .collect();
            while ready.load(Ordering::Acquire) < self.threads {
                std::thread::yield_now();
            }
            go.store(true, Ordering::Release);
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let start = windows.iter().map(|w| w.0).min().unwrap();
        let end = windows.iter().map(|w| w.1).max().unwrap();
        self.elapsed = end - start;
    }
}

fn contention(c: &mut Criterion) {
    let vocabulary = workload::vocabulary(workload::VOCABULARY);
    for workload in [Workload::HitHeavy, Workload::MissHeavy] {
        for own_nc in [false, true] {
            let placement = if own_nc { "own-nc" } else { "same-nc" };
            let mut group =
                c.benchmark_group(format!("contention/{}/{placement}", workload.label()));
            for &threads in THREADS {
                group.throughput(Throughput::Elements((threads * OPS) as u64));
                for &subject in SubjectName::all() {
                    if (own_nc && !subject.every_placement())
                        || (workload == Workload::MissHeavy && subject.skips_misses())
                    {
                        continue;
                    }
                    group.bench_function(BenchmarkId::new(subject.name(), threads), |b| {
                        b.iter_custom(|iters| {
                            let mut timed = Timed {
                                workload,
                                threads,
                                own_nc,
                                iters,
                                vocabulary: &vocabulary,
                                elapsed: Duration::ZERO,
                            };
                            // The last subject's frees, merged untimed (`perf::heap`).
                            perf::heap::settle();
                            subject.visit(256, &mut timed);
                            timed.elapsed
                        })
                    });
                }
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300));
    targets = contention
}
criterion_main!(benches);
