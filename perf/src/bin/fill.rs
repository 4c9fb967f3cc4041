//! `fill`: the cost of an insert as a user meets it. Each subject is filled
//! from empty with every name of a vocabulary (no time window cuts a fill
//! short), at several sizes, by 1 or more threads into one NC; subjects are
//! interleaved within each repetition, each started from a settled heap
//! ([`perf::heap::settle`]), and the median is reported. Prints a
//! Markdown table of ns per insert (a thread's share of the fill's wall
//! time: wall × threads run / names), headed by the host (CPU, L2, L3), the
//! commit and the date. Peers that do not compute our 50-bit id are also
//! shown with the `get_id` floor of the same names added: the same work.
//! With the floor among the subjects, a second table gives each of ours
//! over the cheapest other subject doing the same work (the inserts
//! goal's measure), the median of each run's ratio. `--hits` times a
//! second pass over the names once filled instead (every intern a hit), in
//! the order interned or, with `--shuffled`, in a fixed random order.
//!
//! `cargo run --release -p perf --bin fill -- --sizes 10000,100000,1000000`

use std::hint::black_box;
use std::time::{Duration, Instant};

use clap::Parser;

use perf::host::{self, Host};
use perf::subject::{Subject, Visitor};
use perf::subjects::SubjectName;
use perf::workload::{self, SplitMix};

/// Fills subjects from empty and reports ns per insert.
#[derive(Debug, Parser)]
#[command(name = "fill")]
struct Args {
    /// Names per fill, comma-separated (each at least 1).
    #[arg(long, value_delimiter = ',', default_value = "10000,100000,1000000",
          value_parser = at_least_one())]
    sizes: Vec<usize>,
    /// Threads filling one NC (each a contiguous share of the names; fewer
    /// run where the names do not make that many shares).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = at_least_one())]
    threads: Vec<usize>,
    /// Repetitions, subjects interleaved; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = at_least_one())]
    reps: usize,
    /// Subjects (default: every one that can be filled from empty).
    #[arg(long, value_delimiter = ',')]
    subjects: Vec<SubjectName>,
    /// `random` (30 random hex bytes, the default), `synthetic` (trace-like
    /// names of 20 to 60 bytes), or a file of one name per line.
    #[arg(long, default_value = "random")]
    names: String,
    /// Also report the cost of the fill's last tenth (1 thread only).
    #[arg(long)]
    last_tenth: bool,
    /// Report, instead of the fill, a second pass over the same names once
    /// the subject is filled: every intern a hit, in the order interned.
    /// The pass reads copies of the names, made once (untimed) and laid out
    /// in the order it visits them, each thread its share.
    #[arg(long)]
    hits: bool,
    /// With `--hits`, visit the names in a fixed random order instead: a
    /// trace writer's hits come in the order of its events. The copies are
    /// laid out in that order, as in the default pass, so that only the
    /// order of the subjects' own lookups differs. With several threads, a
    /// thread's hits are then mostly of names that others inserted.
    #[arg(long, requires = "hits")]
    shuffled: bool,
}

/// Accepts a count of 1 or more.
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// `n` distinct names of the kind `kind` names.
fn names(kind: &str, n: usize) -> Vec<String> {
    match kind {
        "random" => {
            let mut rng = SplitMix(0x5EED);
            let mut seen = std::collections::HashSet::with_capacity(n);
            let mut out = Vec::with_capacity(n);
            while out.len() < n {
                let (a, b) = (rng.next_u64(), rng.next_u64());
                let s = format!("{a:016x}{:014x}", b >> 8);
                if seen.insert(s.clone()) {
                    out.push(s);
                }
            }
            out
        }
        "synthetic" => (0..n as u64).map(|i| workload::name(7, i)).collect(),
        path => {
            let v = workload::Vocabulary::from_file(std::path::Path::new(path), n)
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(
                v.names.len() >= n,
                "{path} has {} names, fewer than {n}",
                v.names.len()
            );
            v.names.to_vec()
        }
    }
}

/// The threads that fill `n` names when `threads` are asked for: one a
/// contiguous share of `ceil(n / threads)` names, so fewer where the
/// names make fewer shares (10^4 names at 256 threads make 250).
fn threads_run(n: usize, threads: usize) -> usize {
    n.div_ceil(n.div_ceil(threads))
}

/// The names a hit pass visits: copies of `names`, in their order or, if
/// `shuffled`, in a fixed random one (Fisher–Yates), each allocated in
/// turn so that both orders read the callers' names laid out alike.
fn hit_pass_names(names: &[String], shuffled: bool) -> Vec<String> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    if shuffled {
        let mut rng = SplitMix(0x5AFE_5EED);
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
    order.into_iter().map(|i| names[i].clone()).collect()
}

/// One fill: `threads` threads (fewer if the names make fewer shares),
/// each interning its contiguous share of `names` into NC 0 of a fresh
/// subject, then, for a hit pass, its share of `hit_pass`. Returns the
/// wall time of the timed pass (earliest start to latest end) and, at one
/// thread, the last tenth's time.
struct Fill<'a> {
    names: &'a [String],
    threads: usize,
    /// Time a second pass over these names (hits: the same names, in some
    /// order), each thread its share, instead of the fill.
    hit_pass: Option<&'a [String]>,
    wall: Duration,
    last_tenth: Duration,
}

impl Visitor for Fill<'_> {
    fn visit<T: Subject>(&mut self, subject: &T) {
        let share = self.names.len().div_ceil(self.threads);
        let hits = self.hit_pass.is_some();
        let timed_names = self.hit_pass.unwrap_or(self.names);
        assert_eq!(
            timed_names.len(),
            self.names.len(),
            "a hit pass of every name"
        );
        let tenth = self.names.len() - self.names.len() / 10;
        // One waiter a share.
        let gate = std::sync::Barrier::new(threads_run(self.names.len(), self.threads));
        let times: Vec<(Instant, Instant, Duration)> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .names
                .chunks(share)
                .zip(timed_names.chunks(share))
                .map(|(names, timed)| {
                    let gate = &gate;
                    scope.spawn(move || {
                        if hits {
                            for name in names {
                                black_box(subject.intern(0, name));
                            }
                        }
                        gate.wait();
                        let start = Instant::now();
                        let mut tenth_at = start;
                        for (i, name) in timed.iter().enumerate() {
                            if i == tenth {
                                tenth_at = Instant::now();
                            }
                            black_box(subject.intern(0, black_box(name)));
                        }
                        let end = Instant::now();
                        (start, end, end - tenth_at)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("filler"))
                .collect()
        });
        let start = times.iter().map(|t| t.0).min().expect("a thread");
        let end = times.iter().map(|t| t.1).max().expect("a thread");
        self.wall = end - start;
        self.last_tenth = times[0].2;
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Subject `who`'s time over that of the cheapest other subject doing the
/// same work, and which one that is: the cheapest by its median, then the
/// median of the two subjects' ratio in each run (subjects interleaved, so
/// a slow spell of the host moves a run's numerator and denominator
/// together; each run's own cheapest would pick whichever peer was luckiest
/// in it, and bias the ratio up). `walls[subject][run]` in ns an insert; a
/// peer that does not compute our id is charged the `get_id` floor of the
/// same run (`floor`, an index into `walls`). `None` without another
/// subject to compare with.
fn over_cheapest(
    walls: &[Vec<f64>],
    subjects: &[SubjectName],
    floor: usize,
    who: usize,
) -> Option<(f64, SubjectName)> {
    let cost = |j: usize| -> Vec<f64> {
        let extra = |run: usize| {
            if subjects[j].computes_id() {
                0.0
            } else {
                walls[floor][run]
            }
        };
        (0..walls[j].len())
            .map(|run| walls[j][run] + extra(run))
            .collect()
    };
    // Each candidate's costs and their median, computed once.
    let (_, cheapest, costs) = (0..subjects.len())
        .filter(|&j| j != who && j != floor)
        .map(|j| {
            let costs = cost(j);
            (median(costs.clone()), j, costs)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let ratios: Vec<f64> = walls[who]
        .iter()
        .zip(costs)
        .map(|(ours, theirs)| ours / theirs)
        .collect();
    (!ratios.is_empty()).then(|| (median(ratios), subjects[cheapest]))
}

fn main() {
    let args = Args::parse();
    let host = Host::detect();
    let subjects: Vec<SubjectName> = if args.subjects.is_empty() {
        SubjectName::all()
            .iter()
            .copied()
            .filter(|s| !s.skips_misses() && *s != SubjectName::Batch)
            .collect()
    } else {
        args.subjects.clone()
    };
    println!(
        "Host: {host}. Commit {}, {}.",
        host::commit(),
        host::utc_now()
    );
    if host.is_busy() {
        println!(
            "Warning: the machine was busy at the start (load {:.2}).",
            host.load
        );
    }
    println!(
        "Names: {}. ns per {} (wall × threads run / names), median of {} runs, subjects interleaved; `+id` adds the get_id floor of the same names to a peer that does not compute our id.",
        args.names,
        match (args.hits, args.shuffled) {
            (true, true) => "hit, once filled, the names in a random order",
            (true, false) => "hit, once filled, the names in the order interned",
            (false, _) => "insert, filled from empty",
        },
        args.reps
    );
    for &threads in &args.threads {
        println!("\n{threads} thread(s) into one NC\n");
        let mut header = String::from("| subject |");
        let mut rule = String::from("|---|");
        for &n in &args.sizes {
            header += &format!(" {n} |");
            rule += "---:|";
            if args.last_tenth && threads == 1 {
                header += &format!(" {n} last tenth |");
                rule += "---:|";
            }
        }
        println!("{header}\n{rule}");
        let mut rows: Vec<(SubjectName, Vec<String>)> =
            subjects.iter().map(|&s| (s, Vec::new())).collect();
        // Ours over the cheapest other subject doing the same work (the
        // goal's measure), with the floor among the subjects.
        let floor_at = subjects.iter().position(|&s| s == SubjectName::Floor);
        let mut ratio_rows: Vec<(SubjectName, Vec<String>)> = subjects
            .iter()
            .filter(|s| s.is_ours() && floor_at.is_some())
            .map(|&s| (s, Vec::new()))
            .collect();
        for &n in &args.sizes {
            let names = names(&args.names, n);
            let hit_pass = args.hits.then(|| hit_pass_names(&names, args.shuffled));
            let mut walls = vec![Vec::new(); subjects.len()];
            let mut tenths = vec![Vec::new(); subjects.len()];
            for _ in 0..args.reps {
                for (i, &subject) in subjects.iter().enumerate() {
                    let mut fill = Fill {
                        names: &names,
                        threads,
                        hit_pass: hit_pass.as_deref(),
                        wall: Duration::ZERO,
                        last_tenth: Duration::ZERO,
                    };
                    // The last subject's frees, merged untimed.
                    perf::heap::settle();
                    subject.visit(256, &mut fill);
                    walls[i].push(
                        fill.wall.as_nanos() as f64 * threads_run(n, threads) as f64 / n as f64,
                    );
                    tenths[i].push(fill.last_tenth.as_nanos() as f64 / (n / 10).max(1) as f64);
                }
            }
            let floor = floor_at.map(|i| median(walls[i].clone()));
            if let Some(floor_at) = floor_at {
                for (subject, row) in &mut ratio_rows {
                    let who = subjects.iter().position(|s| s == subject).expect("listed");
                    let cell = over_cheapest(&walls, &subjects, floor_at, who).map_or_else(
                        || "–".to_owned(),
                        |(ratio, cheapest)| {
                            let id = if cheapest.computes_id() { "" } else { " +id" };
                            format!("{ratio:.2}× ({}{id})", cheapest.name())
                        },
                    );
                    row.push(cell);
                }
            }
            for (i, (subject, row)) in rows.iter_mut().enumerate() {
                let ns = median(walls[i].clone());
                let mut cell = format!("{ns:.0}");
                if let (false, Some(floor)) = (subject.computes_id(), floor) {
                    cell += &format!(" ({:.0} +id)", ns + floor);
                }
                row.push(cell);
                if args.last_tenth && threads == 1 {
                    row.push(format!("{:.0}", median(tenths[i].clone())));
                }
            }
        }
        for (subject, row) in rows {
            println!("| {} | {} |", subject.name(), row.join(" | "));
        }
        if !ratio_rows.is_empty() && subjects.len() > 2 {
            println!(
                "\n× the cheapest other subject doing the same work (the cheapest by its median; a peer without our id with the floor added), the median of each run's ratio to it\n"
            );
            let sizes: Vec<String> = args.sizes.iter().map(|n| n.to_string()).collect();
            println!("| subject | {} |", sizes.join(" | "));
            println!("|---|{}", "---:|".repeat(sizes.len()));
            for (subject, row) in ratio_rows {
                println!("| {} | {} |", subject.name(), row.join(" | "));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_is_to_the_cheapest_by_median_with_the_floor_added_to_peers_without_our_id() {
        let subjects = [
            SubjectName::Floor,
            SubjectName::from_name("optimistic").expect("a subject"),
            SubjectName::Internity,
            SubjectName::from_name("DashMap<id>").expect("a subject"),
        ];
        // `internity` + the floor: 110, 160, 120 (median 120); `DashMap`
        // 200, 150, 190 (median 190), though the cheaper in run 1.
        let walls = vec![
            vec![10.0, 60.0, 20.0],
            vec![220.0, 240.0, 300.0],
            vec![100.0, 100.0, 100.0],
            vec![200.0, 150.0, 190.0],
        ];
        let (ratio, cheapest) = over_cheapest(&walls, &subjects, 0, 1).expect("peers");
        assert_eq!(cheapest, SubjectName::Internity);
        // Ratios 2.0, 1.5 and 2.5 to it: the median 2.0.
        assert!((ratio - 2.0).abs() < 1e-9, "{ratio}");
        // A peer that computes our id is charged nothing more.
        let (ratio, cheapest) = over_cheapest(&walls, &subjects, 0, 2).expect("peers");
        assert_eq!(cheapest, subjects[3]);
        assert!((ratio - 100.0 / 190.0).abs() < 1e-9, "{ratio}");
        // Alone with the floor: nothing to compare with.
        assert_eq!(over_cheapest(&walls[..2], &subjects[..2], 0, 1), None);
    }

    #[test]
    fn the_hit_pass_visits_every_name_once_in_order_or_in_a_fixed_other_one() {
        let names = names("synthetic", 1000);
        assert_eq!(hit_pass_names(&names, false), names);
        let order = hit_pass_names(&names, true);
        assert_ne!(order, names);
        assert_eq!(order, hit_pass_names(&names, true));
        let (mut sorted, mut expected) = (order.clone(), names.clone());
        sorted.sort();
        expected.sort();
        assert_eq!(sorted, expected);
    }

    #[test]
    fn counts_below_one_are_refused() {
        for args in [
            ["fill", "--threads", "0"],
            ["fill", "--sizes", "0"],
            ["fill", "--reps", "0"],
        ] {
            assert!(Args::try_parse_from(args).is_err(), "{args:?}");
        }
        assert!(Args::try_parse_from(["fill", "--sizes", "1,2", "--threads", "3"]).is_ok());
    }

    #[test]
    fn more_threads_than_shares_run_one_a_share() {
        // 10 names in shares of ceil(10 / 8) = 2 make 5: a gate of 8
        // waiters would hang.
        assert_eq!(threads_run(10, 8), 5);
        assert_eq!(threads_run(10_000, 256), 250);
        assert_eq!(threads_run(1_000_000, 256), 256);
        let names = names("synthetic", 10);
        for hits in [false, true] {
            let copies = hits.then(|| hit_pass_names(&names, false));
            let mut fill = Fill {
                names: &names,
                threads: 8,
                hit_pass: copies.as_deref(),
                wall: Duration::ZERO,
                last_tenth: Duration::ZERO,
            };
            SubjectName::Floor.visit(1, &mut fill);
            assert!(fill.wall > Duration::ZERO);
        }
    }
}
