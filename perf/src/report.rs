//! The table, the CSV, `summary.md`, the charts (`crate::plot`) and the
//! closing lines a newcomer reads.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cell::{Cell, Measurement, Placement};
use crate::plot::{self, Point, RunInfo};
use crate::subjects::SubjectName;

const COLUMNS: &[&str] = &[
    "workload",
    "placement",
    "threads",
    "subject",
    "mops",
    "ns_per_op_per_thread",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "max_ns",
    "failed_try_locks",
    "lock_wait_ms",
    "cas_retries",
    "voluntary_csw",
    "involuntary_csw",
    "ops",
    "runs",
    "cpus",
    "commit",
    "host",
];

fn fields(c: &Cell, m: &Measurement, info: &RunInfo) -> Vec<String> {
    vec![
        c.workload_label(),
        c.placement.label().into(),
        c.threads.to_string(),
        c.subject.to_string(),
        format!("{:.3}", m.mops()),
        format!("{:.1}", m.ns_per_op_per_thread),
        m.latency.value_at_quantile(0.5).to_string(),
        m.latency.value_at_quantile(0.99).to_string(),
        m.latency.value_at_quantile(0.999).to_string(),
        m.latency.max().to_string(),
        m.contention.failed_try_locks.to_string(),
        format!("{:.3}", m.contention.lock_wait_ns as f64 / 1e6),
        m.contention.cas_retries.to_string(),
        m.switches.voluntary.to_string(),
        m.switches.involuntary.to_string(),
        m.ops.to_string(),
        c.runs.len().to_string(),
        info.cpus.to_string(),
        info.commit.clone(),
        info.host.clone(),
    ]
}

/// The cells of each (workload, placement), in the order first met.
fn groups(cells: &[Cell]) -> Vec<((String, Placement), Vec<&Cell>)> {
    let mut groups: Vec<((String, Placement), Vec<&Cell>)> = Vec::new();
    for c in cells {
        let key = (c.workload_label(), c.placement);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    groups
}

/// Prints one table per (workload, placement).
pub fn print_table(cells: &[Cell]) {
    let mut out = String::new();
    for ((workload, placement), group) in groups(cells) {
        let _ = writeln!(
            out,
            "\n{workload} / {}{}",
            placement.label(),
            if placement == Placement::SameNc {
                " (peers: one table)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "{:>7}  {:<22} {:>9} {:>10} {:>8} {:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9}",
            "threads",
            "subject",
            "Mops/s",
            "ns/op/thr",
            "p50 ns",
            "p99 ns",
            "p99.9 ns",
            "try-fails",
            "wait ms",
            "cas-retry",
            "vcsw",
            "ivcsw"
        );
        for c in group {
            let m = c.median();
            let _ = writeln!(
                out,
                "{:>7}  {:<22} {:>9.2} {:>10.1} {:>8} {:>8} {:>9} {:>10} {:>10.1} {:>10} {:>9} {:>9}",
                c.threads,
                c.subject,
                m.mops(),
                m.ns_per_op_per_thread,
                m.latency.value_at_quantile(0.5),
                m.latency.value_at_quantile(0.99),
                m.latency.value_at_quantile(0.999),
                m.contention.failed_try_locks,
                m.contention.lock_wait_ns as f64 / 1e6,
                m.contention.cas_retries,
                m.switches.voluntary,
                m.switches.involuntary,
            );
        }
    }
    print!("{out}");
}

/// Writes `contention.csv` (header row first, one row per cell, the median
/// run), `summary.md` and the charts; returns the files written.
pub fn write_all(cells: &[Cell], dir: &Path, info: &RunInfo) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut csv = COLUMNS.join(",") + "\n";
    for c in cells {
        let row = fields(c, c.median(), info);
        csv += &row
            .iter()
            .map(|f| {
                if f.contains(',') {
                    format!("\"{f}\"")
                } else {
                    f.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        csv.push('\n');
    }
    let mut written = vec![dir.join("contention.csv"), dir.join("summary.md")];
    std::fs::write(&written[0], csv)?;
    let summary =
        format!("Run: commit {}; {}.\n\n", info.commit, info.host) + &summary_markdown(cells);
    std::fs::write(&written[1], summary)?;
    written.extend(plot::draw_all(&plot::points(cells), info, dir)?);
    Ok(written)
}

/// `summary.md`: for each (workload, placement), ns per operation per thread
/// with the ratio to the `get_id` floor measured in the same run, then the
/// contention counters of every multi-threaded cell: the tables
/// `docs/benchmarks.md` quotes.
fn summary_markdown(cells: &[Cell]) -> String {
    let mut out = String::new();
    for ((workload, placement), group) in groups(cells) {
        let mut threads: Vec<usize> = group.iter().map(|c| c.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        let mut subjects: Vec<SubjectName> = Vec::new();
        for c in &group {
            if !subjects.contains(&c.subject) {
                subjects.push(c.subject);
            }
        }
        let find = |subject: SubjectName, t: usize| {
            group
                .iter()
                .find(|c| c.subject == subject && c.threads == t)
                .map(|c| c.median())
        };
        let _ = writeln!(
            out,
            "\n**{workload}, {}** (ns per operation per thread: the cell's wall time × threads / operations, its throughput inverted; × the floor in the same run)\n",
            placement.label()
        );
        let _ = write!(out, "| subject |");
        for t in &threads {
            let _ = write!(out, " {t} thr |");
        }
        let _ = write!(out, "\n|---|");
        for _ in &threads {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for &subject in &subjects {
            let _ = write!(out, "| {subject} |");
            for &t in &threads {
                // The floor runs in the first placement only: it has no NC.
                let floor = cells
                    .iter()
                    .find(|c| {
                        c.subject == SubjectName::Floor
                            && c.threads == t
                            && c.workload_label() == workload
                    })
                    .map(|c| c.median().ns_per_op_per_thread);
                let _ = match (find(subject, t), floor) {
                    (Some(m), Some(floor)) => write!(
                        out,
                        " {:.0} ({:.2}×) |",
                        m.ns_per_op_per_thread,
                        m.ns_per_op_per_thread / floor
                    ),
                    (Some(m), None) => write!(out, " {:.0} |", m.ns_per_op_per_thread),
                    (None, _) => write!(out, " - |"),
                };
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "\n| subject, threads | failed try-locks | lock wait ms | CAS retries | vcsw | ivcsw |\n|---|---:|---:|---:|---:|---:|"
        );
        for &subject in &subjects {
            for &t in threads.iter().filter(|&&t| t > 1) {
                if let Some(m) = find(subject, t) {
                    let _ = writeln!(
                        out,
                        "| {subject}, {t} | {} | {:.1} | {} | {} | {} |",
                        m.contention.failed_try_locks,
                        m.contention.lock_wait_ns as f64 / 1e6,
                        m.contention.cas_retries,
                        m.switches.voluntary,
                        m.switches.involuntary
                    );
                }
            }
        }
    }
    out
}

/// `1st`, `2nd`, `3rd`, `4th`, ..., `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The closing lines: for each workload and vocabulary (every thread on
/// NC 0, where every subject runs) and thread count, the fastest subject
/// and where the default strategy (`default`) stands, × the floor and its
/// rank among the subjects (the floor is not one).
pub fn standings(points: &[Point], default: &str) -> String {
    let mut out = String::from(
        "In short (every thread on NC 0; cost per operation per thread, the cell's wall time × threads / operations (its throughput, inverted), as × the get_id floor at the same thread count, and in ns; lower is better):\n",
    );
    let mut workloads: Vec<&str> = Vec::new();
    for p in points
        .iter()
        .filter(|p| p.placement == Placement::SameNc.label())
    {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    for workload in workloads {
        let mut threads: Vec<usize> = points
            .iter()
            .filter(|p| p.workload == workload)
            .map(|p| p.threads)
            .collect();
        threads.sort_unstable();
        threads.dedup();
        for t in threads {
            let Some(floor) = plot::floor_ns(points, workload, t) else {
                continue;
            };
            let mut ranked: Vec<(&str, f64)> = points
                .iter()
                .filter(|p| {
                    p.workload == workload
                        && p.threads == t
                        && p.placement == Placement::SameNc.label()
                        && p.subject != SubjectName::Floor.name()
                })
                .map(|p| (p.subject.as_str(), p.ns_per_op_per_thread))
                .collect();
            ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
            let Some(&(fastest, best)) = ranked.first() else {
                continue;
            };
            // `1.55× (80 ns)`
            let cost = |ns: f64| format!("{} ({ns:.0} ns)", plot::times(ns / floor));
            let cell = format!("{workload}, {t} thread{}:", if t == 1 { "" } else { "s" });
            let _ = write!(out, "  {cell:<34} fastest {fastest} {}", cost(best));
            match ranked.iter().position(|&(s, _)| s == default) {
                Some(0) => {
                    let _ = match ranked.get(1) {
                        Some(&(next, ns)) => write!(out, ", then {next} {}", cost(ns)),
                        None => Ok(()),
                    };
                }
                Some(rank) => {
                    let _ = write!(
                        out,
                        "; {default} {}, {} of {}",
                        cost(ranked[rank].1),
                        ordinal(rank + 1),
                        ranked.len()
                    );
                }
                None => {
                    let _ = write!(out, "; {default} not run");
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(workload: &str, threads: usize, subject: &str, ns: f64) -> Point {
        Point {
            workload: workload.into(),
            placement: "same-nc".into(),
            threads,
            subject: subject.into(),
            ns_per_op_per_thread: ns,
        }
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22].map(ordinal).into();
        assert_eq!(
            got,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"]
        );
    }

    #[test]
    fn standings_name_the_fastest_and_rank_the_default() {
        let points = [
            point("hit-heavy/synthetic", 1, "get_id (floor)", 50.0),
            point("hit-heavy/synthetic", 1, "optimistic", 100.0),
            point("hit-heavy/synthetic", 1, "ustr", 75.0),
            point("hit-heavy/synthetic", 1, "rwlock", 150.0),
            point("miss-heavy", 2, "get_id (floor)", 10.0),
            point("miss-heavy", 2, "optimistic", 20.0),
            point("miss-heavy", 2, "rwlock", 40.0),
        ];
        let text = standings(&points, "optimistic");
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("hit-heavy/synthetic, 1 thread:"));
        assert!(
            lines[0].contains("fastest ustr 1.50× (75 ns); optimistic 2.00× (100 ns), 2nd of 3")
        );
        assert!(lines[1].contains("miss-heavy, 2 threads:"));
        assert!(lines[1].contains("fastest optimistic 2.00× (20 ns), then rwlock 4.00× (40 ns)"));
    }
}
