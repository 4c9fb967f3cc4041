//! The table, the CSV and the SVG plots.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use crate::cell::{Cell, Measurement, Placement};
use crate::subjects::SubjectName;
use crate::workload::Workload;

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
];

fn fields(c: &Cell, m: &Measurement, cpus: usize) -> Vec<String> {
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
        cpus.to_string(),
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
/// run) and the plots.
pub fn write_all(cells: &[Cell], dir: &Path, cpus: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut csv = COLUMNS.join(",") + "\n";
    for c in cells {
        let row = fields(c, c.median(), cpus);
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
    std::fs::write(dir.join("contention.csv"), csv)?;
    std::fs::write(dir.join("summary.md"), summary_markdown(cells))?;
    let plot = |file: &str, title: &str, y: &str, value: fn(&Measurement) -> f64| {
        plot_vs_threads(cells, &dir.join(file), title, y, value)
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    plot(
        "throughput.svg",
        "hit-heavy, all threads on one NC: throughput",
        "aggregate Mops/s",
        Measurement::mops,
    )?;
    plot(
        "p999.svg",
        "hit-heavy, all threads on one NC: p99.9 latency",
        "p99.9 ns/op (per batch)",
        |m| m.latency.value_at_quantile(0.999) as f64,
    )
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
            "\n**{workload}, {}** (ns per operation per thread; × the floor in the same run)\n",
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

/// Distinct colours, one per subject in report order (plotters' palettes put
/// two yellows side by side).
const PALETTE: [RGBColor; 16] = [
    RGBColor(228, 26, 28),
    RGBColor(77, 175, 74),
    RGBColor(255, 127, 0),
    RGBColor(55, 126, 184),
    RGBColor(152, 78, 163),
    RGBColor(166, 86, 40),
    RGBColor(247, 129, 191),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(31, 119, 180),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

/// One line per subject over thread counts, hit-heavy same-NC cells (the
/// reference's worst case); log-scale axes.
fn plot_vs_threads(
    cells: &[Cell],
    path: &Path,
    title: &str,
    y_desc: &str,
    value: fn(&Measurement) -> f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let chosen: Vec<&Cell> = cells
        .iter()
        .filter(|c| {
            c.workload == Workload::HitHeavy
                && c.vocabulary == "synthetic"
                && c.placement == Placement::SameNc
        })
        .collect();
    let mut subjects: Vec<SubjectName> = Vec::new();
    for c in &chosen {
        if !subjects.contains(&c.subject) {
            subjects.push(c.subject);
        }
    }
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    if chosen.is_empty() {
        root.present()?;
        return Ok(());
    }
    let mut thread_counts: Vec<f64> = chosen.iter().map(|c| c.threads as f64).collect();
    thread_counts.sort_by(f64::total_cmp);
    thread_counts.dedup();
    let (x_min, x_max) = (thread_counts[0], thread_counts[thread_counts.len() - 1]);
    let ys = chosen.iter().map(|c| value(c.median()).max(1e-3));
    let (y_min, y_max) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (x_min * 0.9..x_max * 1.1)
                .log_scale()
                .with_key_points(thread_counts),
            // Headroom above the data for the legend.
            (y_min * 0.8..y_max * 5.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    for (i, &subject) in subjects.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()].to_rgba();
        let points: Vec<(f64, f64)> = chosen
            .iter()
            .filter(|c| c.subject == subject)
            .map(|c| (c.threads as f64, value(c.median()).max(1e-3)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(subject.name())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}
