//! One measurement: T threads interning one workload into one subject.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use interned_string_db::contention::{self, Contention};

use crate::rusage::Switches;
use crate::subject::Subject;
use crate::subjects::SubjectName;
use crate::workload::{ThreadInput, Workload};

/// Operations timed together: an `Instant::now()` per operation would cost
/// as much as the operation, so latency is recorded per batch, as batch
/// time / batch size.
pub const BATCH: usize = 64;

/// Where the threads intern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Placement {
    /// Every thread on NC 0: the reference's worst case.
    SameNc,
    /// Thread i on NC i mod the number of NCs.
    OwnNc,
}

impl Placement {
    /// Its name in reports.
    pub fn label(self) -> &'static str {
        match self {
            Placement::SameNc => "same-nc",
            Placement::OwnNc => "own-nc",
        }
    }

    fn nc(self, thread: usize, ncs: usize) -> usize {
        match self {
            Placement::SameNc => 0,
            Placement::OwnNc => thread % ncs,
        }
    }
}

/// What one run of a cell measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Operations done by all threads.
    pub ops: u64,
    /// From the earliest thread's start to the latest thread's end.
    pub window: Duration,
    /// The window × threads / operations, in ns: a thread's share of the
    /// cell's wall time per operation, the throughput's inverse (so that a
    /// ranking by it is a ranking by throughput). Until 2026-12-04 it was
    /// the mean over threads of each thread's own time over its
    /// operations, which at 256 threads on 2 CPUs counted time descheduled
    /// and could rank cells against the throughput beside it.
    pub ns_per_op_per_thread: f64,
    /// Per-op latency (batch time / batch size), in ns, merged over threads.
    pub latency: Histogram<u64>,
    /// Lock contention summed over threads (our locks and the instrumented
    /// peers'; zero for peers whose locks are internal).
    pub contention: Contention,
    /// Context switches summed over threads.
    pub switches: Switches,
}

impl Measurement {
    /// Aggregate throughput.
    pub fn mops(&self) -> f64 {
        self.ops as f64 / self.window.as_secs_f64() / 1e6
    }
}

struct ThreadResult {
    start: Instant,
    end: Instant,
    ops: u64,
    latency: Histogram<u64>,
    contention: Contention,
    switches: Switches,
}

/// Runs `inputs.len()` threads against `subject` for `duration`, or, for an
/// input that is not repeated (miss-heavy: every name new), until every
/// thread has interned all of it, however long that takes. Each thread
/// times its own window after the start gate; the window is the earliest
/// start to the latest end. The coordinator takes no time (it would be woken
/// late when threads outnumber CPUs); it opens the gate, and raises a stop
/// flag after `duration` so that a thread first scheduled late does not
/// stretch the cell.
///
/// The gate is a counter and a flag, not `std::sync::Barrier`: a barrier is a
/// mutex and a condvar, and with 256 threads on 2 CPUs its wake-up becomes a
/// lock convoy (released threads run hot loops and preempt each mutex holder
/// in turn), which takes seconds to release them all.
pub fn run<T: Subject>(
    subject: &T,
    inputs: &[ThreadInput],
    placement: Placement,
    ncs: usize,
    duration: Duration,
    pin: bool,
) -> Measurement {
    let threads = inputs.len();
    let ready = AtomicUsize::new(0);
    let go = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let cores = if pin {
        core_affinity::get_core_ids()
    } else {
        None
    };
    let results: Vec<ThreadResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .enumerate()
            .map(|(t, input)| {
                let (ready, go, stop, cores) = (&ready, &go, &stop, cores.as_deref());
                std::thread::Builder::new()
                    .stack_size(256 << 10)
                    .spawn_scoped(scope, move || {
                        if let Some(cores) = cores.filter(|c| !c.is_empty()) {
                            core_affinity::set_for_current(cores[t % cores.len()]);
                        }
                        let nc = placement.nc(t, ncs);
                        let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                            .expect("histogram");
                        contention::reset();
                        let switches = Switches::now();
                        ready.fetch_add(1, Ordering::Release);
                        while !go.load(Ordering::Acquire) {
                            std::thread::yield_now();
                        }
                        let start = Instant::now();
                        let mut ops = 0u64;
                        let passes = if input.repeat { usize::MAX } else { 1 };
                        let batches = std::iter::repeat_n(&input.sequence, passes)
                            .flat_map(|sequence| sequence.chunks(BATCH));
                        let batched = subject.batched();
                        let mut names: Vec<&str> = Vec::with_capacity(BATCH);
                        let mut keys = [0u64; BATCH];
                        for batch in batches {
                            let t0 = Instant::now();
                            if batched {
                                names.clear();
                                names.extend(
                                    batch.iter().map(|&i| input.names[i as usize].as_str()),
                                );
                                let keys = &mut keys[..batch.len()];
                                subject.intern_batch(nc, black_box(&names), keys);
                                black_box(keys);
                            } else {
                                for &i in batch {
                                    black_box(
                                        subject.intern(nc, black_box(&input.names[i as usize])),
                                    );
                                }
                            }
                            let t1 = Instant::now();
                            ops += batch.len() as u64;
                            let per_op = (t1 - t0).as_nanos() as u64 / batch.len() as u64;
                            latency.saturating_record(per_op.max(1));
                            // Read-mostly: written once, after the window. A
                            // sequence that is not repeated (misses: every
                            // name new) is inserted whole, whatever the
                            // window: a fill cut short would compare subjects
                            // at different table sizes.
                            if input.repeat && stop.load(Ordering::Relaxed) {
                                break;
                            }
                        }
                        let end = Instant::now();
                        ThreadResult {
                            start,
                            end,
                            ops,
                            latency,
                            contention: contention::current(),
                            switches: Switches::now().since(switches),
                        }
                    })
                    .expect("spawning a worker thread")
            })
            .collect();
        while ready.load(Ordering::Acquire) < threads {
            std::thread::sleep(Duration::from_micros(200));
        }
        go.store(true, Ordering::Release);
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().expect("worker panicked"))
            .collect()
    });

    let start = results.iter().map(|r| r.start).min().expect("threads");
    let end = results.iter().map(|r| r.end).max().expect("threads");
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("histogram");
    let mut total = Measurement {
        ops: 0,
        window: end - start,
        ns_per_op_per_thread: 0.0,
        latency: Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram"),
        contention: Contention::default(),
        switches: Switches::default(),
    };
    for r in &results {
        total.ops += r.ops;
        latency.add(&r.latency).expect("same histogram bounds");
        total.contention += r.contention;
        total.switches.voluntary += r.switches.voluntary;
        total.switches.involuntary += r.switches.involuntary;
    }
    total.latency = latency;
    total.ns_per_op_per_thread =
        total.window.as_nanos() as f64 * threads as f64 / total.ops.max(1) as f64;
    total
}

/// One cell: a (subject, threads, workload, vocabulary, placement) and its
/// runs.
#[derive(Debug)]
pub struct Cell {
    /// What is measured.
    pub subject: SubjectName,
    /// Threads interning at once.
    pub threads: usize,
    /// Hits or misses.
    pub workload: Workload,
    /// The vocabulary's name (for miss-heavy, `synthetic`: names made up
    /// for the cell; otherwise the vocabulary's names, each new).
    pub vocabulary: String,
    /// Which NCs the threads intern into.
    pub placement: Placement,
    /// One measurement per repetition.
    pub runs: Vec<Measurement>,
}

impl Cell {
    /// The workload and, for hit-heavy or a real vocabulary's misses, the
    /// vocabulary: `hit-heavy/usr-paths`, `miss-heavy/usr-paths`;
    /// `miss-heavy` alone is synthetic names.
    pub fn workload_label(&self) -> String {
        match self.workload {
            Workload::MissHeavy if self.vocabulary == "synthetic" => self.workload.label().into(),
            _ => format!("{}/{}", self.workload.label(), self.vocabulary),
        }
    }

    /// The median run by throughput.
    pub fn median(&self) -> &Measurement {
        let mut order: Vec<&Measurement> = self.runs.iter().collect();
        order.sort_by(|a, b| a.mops().total_cmp(&b.mops()));
        order[order.len() / 2]
    }
}
