//! `contention`: the contention harness. Every strategy of ours and every
//! peer, at several thread counts, on hit-heavy and miss-heavy workloads, with
//! all threads on one NC or each on its own, each cell's subject made on a
//! settled heap (`perf::heap`). Prints a table and a few
//! closing lines, writes `target/perf-results/` (or `--out`; the committed
//! reference run is `perf/results/`): `contention.csv`, `summary.md`
//! and one chart per workload, vocabulary and placement. See
//! `docs/benchmarks.md`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use interned_string_db::{DefaultStrategy, Strategy};
use perf::cell::{self, Cell, Measurement, Placement};
use perf::plot::{self, RunInfo};
use perf::report;
use perf::subject::{Subject, Visitor};
use perf::subjects::SubjectName;
use perf::workload::{self, ThreadInput, Vocabulary, Workload};

/// The built-in vocabularies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BuiltIn {
    /// 10,000 trace-like names (in cache).
    Synthetic,
    /// The paths of the files under /usr (real names that do not fit in
    /// cache).
    UsrPaths,
}

/// Measures lock contention of interned-string-db's strategies and of peer
/// interners when many threads intern at once.
#[derive(Debug, Parser)]
#[command(name = "contention", version)]
struct Args {
    /// Subjects, comma-separated (default: all; --list prints them).
    #[arg(long, value_delimiter = ',')]
    subjects: Vec<SubjectName>,
    /// Thread counts, comma-separated. The default is the per-thread cost
    /// at 1 and 2 threads and the oversubscribed 256-thread run; the full
    /// matrix adds 16 and 64 (`--threads 1,2,16,64,256 --reps 5`).
    #[arg(long, value_delimiter = ',', default_value = "1,2,256")]
    threads: Vec<usize>,
    /// Workloads: hit-heavy (Zipf over each vocabulary's names, interned
    /// before the window), miss-heavy (every name new).
    #[arg(long, value_delimiter = ',', default_value = "hit-heavy,miss-heavy")]
    workloads: Vec<Workload>,
    /// Vocabularies for hit-heavy: `synthetic` (10,000 trace-like names, in
    /// cache), `usr-paths` (the paths of the files under /usr, real names
    /// that do not fit in cache). Real vocabularies run in same-nc only.
    #[arg(long, value_delimiter = ',', default_value = "synthetic,usr-paths")]
    vocabularies: Vec<BuiltIn>,
    /// More hit-heavy vocabularies: files of one name per line (see
    /// perf/corpus.sh), each named after its file.
    #[arg(long, value_delimiter = ',')]
    corpus: Vec<PathBuf>,
    /// At most this many names from each real vocabulary.
    #[arg(long, default_value_t = 1_000_000)]
    corpus_limit: usize,
    /// Placements: same-nc (every thread on NC 0), own-nc (thread i on NC
    /// i mod NCs). Peers have one table and run in same-nc only.
    #[arg(long, value_delimiter = ',', default_value = "same-nc,own-nc")]
    placements: Vec<Placement>,
    /// Seconds per run of a cell.
    #[arg(long, default_value_t = 0.25)]
    duration: f64,
    /// Runs per cell, subjects interleaved; the median run is reported.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// NCs in each of our dbs.
    #[arg(long, default_value_t = 256)]
    ncs: usize,
    /// New names per cell for miss-heavy, split over the threads: every
    /// subject inserts all of them, filling its table from empty, whatever
    /// `--duration` says (a fill cut short would compare subjects at
    /// different table sizes).
    #[arg(long, default_value_t = 1_000_000)]
    miss_budget: usize,
    /// Seed of every input.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Pin thread i to CPU i mod CPUs (core_affinity).
    #[arg(long)]
    pin: bool,
    /// Where the CSV, summary.md and the charts go: outside the committed
    /// files by default (the reference run committed in `perf/results/` is
    /// written there only when asked, `--out perf/results`).
    #[arg(long, default_value = "target/perf-results")]
    out: PathBuf,
    /// List the subjects and exit.
    #[arg(long)]
    list: bool,
    /// Print the plan (how many cells, and the seconds of timed runs they
    /// take; set-up and warming come on top) and exit without measuring.
    #[arg(long)]
    plan: bool,
    /// Redraw the charts of an earlier run from DIR/contention.csv into DIR,
    /// print its closing lines, and exit without measuring.
    #[arg(long, value_name = "DIR")]
    replot: Option<PathBuf>,
}

/// The closing lines: the standings and where the files are.
fn print_closing(points: &[plot::Point], written: &[PathBuf], dir: &Path) {
    println!();
    print!("{}", report::standings(points, DefaultStrategy::NAME));
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    println!(
        "Files in {}/: contention.csv (every column, one row per cell), summary.md (the tables, × the floor), and one chart per workload, vocabulary and placement: {}",
        dir.display(),
        names
            .iter()
            .filter(|n| n.ends_with(".svg"))
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// Builds each subject fresh, warms it, measures it.
struct Measure<'a> {
    inputs: &'a [ThreadInput],
    workload: Workload,
    placement: Placement,
    ncs: usize,
    duration: Duration,
    pin: bool,
    result: Option<Measurement>,
}

impl Visitor for Measure<'_> {
    fn visit<T: Subject>(&mut self, subject: &T) {
        if self.workload == Workload::HitHeavy {
            // Every name the threads will ask for, into every NC they use:
            // the window sees hits only.
            let used = match self.placement {
                Placement::SameNc => 1,
                Placement::OwnNc => self.inputs.len().min(self.ncs),
            };
            for nc in 0..used {
                for name in self.inputs[0].names.iter() {
                    subject.intern(nc, name);
                }
            }
        }
        self.result = Some(cell::run(
            subject,
            self.inputs,
            self.placement,
            self.ncs,
            self.duration,
            self.pin,
        ));
    }
}

fn main() {
    let args = Args::parse();
    if let Some(dir) = &args.replot {
        let csv = dir.join("contention.csv");
        let written = plot::read_csv(&csv)
            .and_then(|(points, info)| Ok((plot::draw_all(&points, &info, dir)?, points)));
        match written {
            Ok((written, points)) => print_closing(&points, &written, dir),
            Err(e) => {
                eprintln!("contention: redrawing from {}: {e}", csv.display());
                std::process::exit(1);
            }
        }
        return;
    }
    if args.list {
        for s in SubjectName::all() {
            println!("{s}");
        }
        return;
    }
    let subjects: Vec<SubjectName> = if args.subjects.is_empty() {
        SubjectName::all().to_vec()
    } else {
        args.subjects.clone()
    };
    let fail = |what: &str| -> ! {
        eprintln!("contention: {what}; see --help");
        std::process::exit(2)
    };
    let (workloads, placements) = (&args.workloads, &args.placements);
    if args.threads.contains(&0)
        || args.ncs == 0
        || args.reps == 0
        || !args.duration.is_finite()
        || args.duration <= 0.0
    {
        fail("threads, ncs, reps and duration must be positive");
    }

    let mut vocabularies: Vec<Vocabulary> = Vec::new();
    for v in &args.vocabularies {
        match v {
            BuiltIn::Synthetic => vocabularies.push(Vocabulary::synthetic()),
            BuiltIn::UsrPaths => {
                let found =
                    Vocabulary::file_paths("usr-paths", Path::new("/usr"), args.corpus_limit);
                if found.names.len() < 1000 {
                    eprintln!(
                        "contention: only {} files under /usr; skipping the usr-paths vocabulary",
                        found.names.len()
                    );
                } else {
                    vocabularies.push(found);
                }
            }
        }
    }
    for path in &args.corpus {
        match Vocabulary::from_file(path, args.corpus_limit) {
            Ok(v) if !v.names.is_empty() => vocabularies.push(v),
            Ok(_) => fail(&format!("{} holds no names", path.display())),
            Err(e) => fail(&format!("reading {}: {e}", path.display())),
        }
    }
    if vocabularies.is_empty() && workloads.contains(&Workload::HitHeavy) {
        fail("hit-heavy needs a vocabulary");
    }

    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let host = perf::host::Host::detect();
    let info = RunInfo {
        cpus,
        commit: perf::host::commit(),
        host: format!("{host}, {}", perf::host::utc_now()),
    };
    println!("host: {}", info.host);
    if host.is_busy() {
        eprintln!(
            "warning: the machine is busy (load {:.2} at the start): other work skews every figure",
            host.load
        );
    }
    println!(
        "interned-string-db contention harness: {cpus} CPUs, commit {}, threads {:?}, {} s per run, {} runs per cell (median reported){}",
        info.commit,
        args.threads,
        args.duration,
        args.reps,
        if args.pin { ", threads pinned" } else { "" }
    );
    for v in &vocabularies {
        println!(
            "vocabulary {}: {} names, {:.1} bytes each on average",
            v.name,
            v.names.len(),
            v.mean_len()
        );
    }
    if args.threads.iter().any(|&t| t > cpus) {
        println!(
            "note: with more threads than CPUs ({cpus}), the figures measure scheduling and lock-holder \
             preemption, not cache coherence; compare ratios within a run, never extrapolate."
        );
    }

    // The plan: every (workload, vocabulary, threads, placement, subject)
    // cell. Miss-heavy runs on synthetic names (the miss budget of them)
    // and on each real vocabulary (its names split over the threads, each
    // new, into an empty db); a real vocabulary runs in one placement
    // (warming it into 256 NCs would take gigabytes).
    let synthetic = Vocabulary::synthetic();
    let mut plan: Vec<(Workload, &Vocabulary)> = Vec::new();
    for &workload in workloads {
        match workload {
            Workload::HitHeavy => plan.extend(vocabularies.iter().map(|v| (workload, v))),
            Workload::MissHeavy => {
                plan.push((workload, &synthetic));
                plan.extend(
                    vocabularies
                        .iter()
                        .filter(|v| v.name != "synthetic")
                        .map(|v| (workload, v)),
                );
            }
        }
    }
    let mut cells: Vec<Cell> = Vec::new();
    for &(workload, vocabulary) in &plan {
        let real = !std::ptr::eq(vocabulary, &synthetic) && vocabulary.name != "synthetic";
        for &threads in &args.threads {
            for &placement in placements {
                for &subject in &subjects {
                    // Peers and the floor have one table: placement is moot.
                    if (!subject.every_placement() || real) && placement != placements[0] {
                        continue;
                    }
                    if subject.skips_misses() && workload == Workload::MissHeavy {
                        continue;
                    }
                    if workload == Workload::HitHeavy
                        && subject.skips_vocabulary(vocabulary.names.len())
                    {
                        continue;
                    }
                    cells.push(Cell {
                        subject,
                        threads,
                        workload,
                        vocabulary: vocabulary.name.clone(),
                        placement,
                        runs: Vec::new(),
                    });
                }
            }
        }
    }
    let timed = (cells.len() * args.reps) as f64 * args.duration;
    println!(
        "plan: {} cells × {} run{} × {} s = {timed:.0} s of timed runs (set-up, warming and miss-heavy fills past the window come on top)",
        cells.len(),
        args.reps,
        if args.reps == 1 { "" } else { "s" },
        args.duration
    );
    if args.plan {
        return;
    }
    let bar = ProgressBar::new((cells.len() * args.reps) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed}]")
            .expect("progress template"),
    );
    let duration = Duration::from_secs_f64(args.duration);
    // The cells sharing inputs, one (workload, vocabulary, threads), are
    // adjacent in the plan.
    for group in cells.chunk_by_mut(|a, b| {
        (a.workload, a.threads, &a.vocabulary) == (b.workload, b.threads, &b.vocabulary)
    }) {
        let (workload, threads) = (group[0].workload, group[0].threads);
        let ops = match workload {
            Workload::HitHeavy => 100_000,
            Workload::MissHeavy => (args.miss_budget / threads).max(cell::BATCH),
        };
        let vocabulary = plan
            .iter()
            .map(|&(_, v)| v)
            .find(|v| v.name == group[0].vocabulary)
            .expect("planned");
        let inputs = if workload == Workload::MissHeavy && vocabulary.name != "synthetic" {
            workload::split(vocabulary, threads)
        } else {
            workload::inputs(workload, vocabulary, threads, ops, args.seed)
        };
        // Interleave: run 1 of every cell, then run 2 of every cell, ...
        for _ in 0..args.reps {
            for c in group.iter_mut() {
                bar.set_message(format!(
                    "{} {} {}t {}",
                    c.workload_label(),
                    c.placement.label(),
                    c.threads,
                    c.subject
                ));
                let mut measure = Measure {
                    inputs: &inputs,
                    workload,
                    placement: c.placement,
                    ncs: args.ncs,
                    duration,
                    pin: args.pin,
                    result: None,
                };
                // The last subject's frees, merged untimed.
                perf::heap::settle();
                c.subject.visit(args.ncs, &mut measure);
                c.runs.push(measure.result.expect("measured"));
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();

    report::print_table(&cells);
    println!(
        "latency percentiles are per batch of {} operations (batch time / batch size)",
        cell::BATCH
    );
    match report::write_all(&cells, &args.out, &info) {
        Ok(written) => print_closing(&plot::points(&cells), &written, &args.out),
        Err(e) => {
            eprintln!("contention: writing results to {}: {e}", args.out.display());
            std::process::exit(1);
        }
    }
}
