//! The charts: for each (workload, vocabulary, placement), every subject's
//! cost per operation per thread as a multiple of the `get_id` floor
//! measured at the same thread count, one panel per thread count (small
//! multiples), one row per subject. Our strategies are filled blue dots,
//! the peers hollow orange ones; the subjects are named on the rows, so no
//! legend covers the data.
//!
//! The charts are drawn from [`Point`]s: a run's cells, or the CSV an
//! earlier run wrote ([`read_csv`]), so that a committed run can be redrawn
//! without measuring again (`--replot`).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::cell::Cell;
use crate::subjects::SubjectName;

/// The floor's name in reports.
const FLOOR: &str = "get_id (floor)";

/// One cell's median, as the charts and the closing summary need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The workload and, for hit-heavy, the vocabulary: `hit-heavy/usr-paths`.
    pub workload: String,
    /// `same-nc` or `own-nc`.
    pub placement: String,
    /// Threads interning at once.
    pub threads: usize,
    /// The subject's name in reports.
    pub subject: String,
    /// Mean over threads of thread time / thread operations, in ns.
    pub ns_per_op_per_thread: f64,
}

/// What a chart's title says about the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// CPUs the run saw.
    pub cpus: usize,
    /// `git rev-parse --short HEAD` when the run started, or `unknown`.
    pub commit: String,
    /// The host (CPU model, L2, L3, load at the start) and the date, as
    /// [`crate::host::Host`] names it; empty for a CSV written before the
    /// column existed.
    pub host: String,
}

/// The medians of `cells`.
pub fn points(cells: &[Cell]) -> Vec<Point> {
    cells
        .iter()
        .map(|c| Point {
            workload: c.workload_label(),
            placement: c.placement.label().into(),
            threads: c.threads,
            subject: c.subject.name().into(),
            ns_per_op_per_thread: c.median().ns_per_op_per_thread,
        })
        .collect()
}

/// The floor's cost for `workload` at `threads` threads (it runs in the
/// first placement only: it has no NC).
pub fn floor_ns(points: &[Point], workload: &str, threads: usize) -> Option<f64> {
    points
        .iter()
        .find(|p| p.subject == FLOOR && p.workload == workload && p.threads == threads)
        .map(|p| p.ns_per_op_per_thread)
}

/// The (workload, placement) pairs of `points`, in the order first met.
pub fn groups(points: &[Point]) -> Vec<(String, String)> {
    let mut groups: Vec<(String, String)> = Vec::new();
    for p in points {
        let key = (p.workload.clone(), p.placement.clone());
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    groups
}

/// The file a (workload, placement) chart is written to:
/// `cost-hit-heavy-synthetic-same-nc.svg`.
pub fn file_name(workload: &str, placement: &str) -> String {
    let words: String = format!("cost-{workload}-{placement}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{words}.svg")
}

/// Reads the points and the run's description back from a `contention.csv`
/// a run wrote (a CSV from before the `commit` column says `unknown`).
pub fn read_csv(path: &Path) -> std::io::Result<(Vec<Point>, RunInfo)> {
    let text = std::fs::read_to_string(path)?;
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let mut lines = text.lines();
    let header = split_csv_line(lines.next().ok_or_else(|| bad("empty CSV".into()))?);
    let column = |name: &str| header.iter().position(|h| h == name);
    let need = |name: &str| column(name).ok_or_else(|| bad(format!("no {name} column")));
    let (workload, placement, threads, subject, ns, cpus) = (
        need("workload")?,
        need("placement")?,
        need("threads")?,
        need("subject")?,
        need("ns_per_op_per_thread")?,
        need("cpus")?,
    );
    let commit = column("commit");
    let mut points = Vec::new();
    let mut info = RunInfo {
        cpus: 0,
        commit: "unknown".into(),
        host: String::new(),
    };
    let host = column("host");
    for (n, line) in lines.enumerate().filter(|(_, l)| !l.is_empty()) {
        let fields = split_csv_line(line);
        let field = |i: usize| {
            fields
                .get(i)
                .map(String::as_str)
                .ok_or_else(|| bad(format!("line {}: too few fields", n + 2)))
        };
        let number = |i: usize| -> std::io::Result<f64> {
            field(i)?
                .parse()
                .map_err(|_| bad(format!("line {}: not a number", n + 2)))
        };
        points.push(Point {
            workload: field(workload)?.into(),
            placement: field(placement)?.into(),
            threads: number(threads)? as usize,
            subject: field(subject)?.into(),
            ns_per_op_per_thread: number(ns)?,
        });
        info.cpus = number(cpus)? as usize;
        if let Some(i) = commit {
            info.commit = field(i)?.into();
        }
        if let Some(i) = host {
            info.host = field(i)?.into();
        }
    }
    Ok((points, info))
}

/// One CSV line's fields, as `report` writes them (a field holding a comma
/// is quoted).
fn split_csv_line(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// Draws one chart per (workload, placement) of `points` into `dir`;
/// returns the files written.
pub fn draw_all(points: &[Point], info: &RunInfo, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (workload, placement) in groups(points) {
        let path = dir.join(file_name(&workload, &placement));
        draw(points, &workload, &placement, info, &path)
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// Panels per row of the grid.
const PANELS_PER_ROW: usize = 4;
/// Pixels: the subject-name column, one panel, one subject row.
const LABEL_W: u32 = 190;
const PANEL_W: u32 = 250;
const ROW_H: u32 = 24;
const HEADER_H: u32 = 96;
/// Above and below a panel's rows: its caption, its axis.
const PANEL_TOP: u32 = 30;
const PANEL_BOTTOM: u32 = 34;
/// Wide enough for the title and the subtitle.
const MIN_WIDTH: u32 = 960;

const OURS: RGBColor = RGBColor(31, 100, 180);
const OURS_TEXT: RGBColor = RGBColor(8, 69, 148);
const PEER: RGBColor = RGBColor(230, 85, 13);
const PEER_TEXT: RGBColor = RGBColor(150, 50, 5);
const FLOOR_COLOR: RGBColor = RGBColor(110, 110, 110);
const STRIPE: RGBColor = RGBColor(243, 243, 243);
const GRID: RGBColor = RGBColor(215, 215, 215);

/// How a subject is drawn.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Floor,
    Ours { default: bool },
    Peer,
}

impl Kind {
    fn of(subject: &str) -> Kind {
        match SubjectName::from_name(subject) {
            Some(SubjectName::Floor) => Kind::Floor,
            Some(s) if s.is_ours() => Kind::Ours {
                default: s.is_default(),
            },
            _ if subject == FLOOR => Kind::Floor,
            _ => Kind::Peer,
        }
    }

    fn text_color(self) -> RGBColor {
        match self {
            Kind::Floor => FLOOR_COLOR,
            Kind::Ours { .. } => OURS_TEXT,
            Kind::Peer => PEER_TEXT,
        }
    }
}

fn describe_workload(workload: &str) -> String {
    match workload.split_once('/') {
        Some(("miss-heavy", vocabulary)) => {
            format!("miss-heavy (every name new), {vocabulary} vocabulary")
        }
        Some((kind, vocabulary)) => format!("{kind}, {vocabulary} vocabulary"),
        None if workload == "miss-heavy" => "miss-heavy (every name new), synthetic names".into(),
        None => workload.into(),
    }
}

fn describe_placement(placement: &str) -> &str {
    match placement {
        "same-nc" => "every thread on NC 0",
        "own-nc" => "thread i on NC i",
        other => other,
    }
}

/// A multiple of the floor, to three figures: `1.55×`, `13.7×`, `226×`.
pub fn times(x: f64) -> String {
    if x < 10.0 {
        format!("{x:.2}×")
    } else if x < 100.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.0}×")
    }
}

/// At most this many labels on a panel's axis.
const MAX_KEYS: usize = 5;

/// The axis labels between `lo` and `hi`: 1, 2, 5 per decade where they
/// fit, else 1, 3, else the powers of ten, else every other (third, ...)
/// power of ten from 1×.
fn key_points(lo: f64, hi: f64) -> Vec<f64> {
    let within = |mantissas: &[f64], step: usize| {
        let mut keys = Vec::new();
        for exponent in (-3..9).filter(|e: &i32| e.rem_euclid(step as i32) == 0) {
            for m in mantissas {
                // Divided, not multiplied by 0.1: 0.3, not 0.30000000000000004.
                let k = if exponent < 0 {
                    m / 10f64.powi(-exponent)
                } else {
                    m * 10f64.powi(exponent)
                };
                if (lo..=hi).contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys
    };
    for mantissas in [&[1.0, 2.0, 5.0][..], &[1.0, 3.0]] {
        let keys = within(mantissas, 1);
        if keys.len() <= MAX_KEYS {
            return keys;
        }
    }
    (1..)
        .map(|step| within(&[1.0], step))
        .find(|keys| keys.len() <= MAX_KEYS)
        .expect("a step of 12 decades leaves one key")
}

fn axis_label(x: f64) -> String {
    let digits = format!("{x:.3}");
    format!("{}×", digits.trim_end_matches('0').trim_end_matches('.'))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A panel's log axis for dots from `min` to `max` (both around 1): room
/// beside the outermost dots for their labels, which sit away from 1×.
fn x_range(min: f64, max: f64) -> (f64, f64) {
    const LABEL: f64 = 48.0; // pixels
    const PAD: f64 = 10.0;
    let plot_w = f64::from(PANEL_W - 16);
    let (a, b) = (min.min(1.0).log10(), max.max(1.0).log10());
    let left = if min < 1.0 { LABEL } else { PAD };
    let right = if max > 1.0 { LABEL } else { PAD };
    // The span the data take, in decades: a panel of equal dots still
    // shows some axis.
    let data = (b - a).max(0.3);
    let span = data * plot_w / (plot_w - left - right);
    let lo = a - span * left / plot_w;
    (10f64.powf(lo), 10f64.powf(lo + span))
}

fn draw(
    points: &[Point],
    workload: &str,
    placement: &str,
    info: &RunInfo,
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let group: Vec<&Point> = points
        .iter()
        .filter(|p| p.workload == workload && p.placement == placement)
        .collect();
    let mut subjects: Vec<&str> = Vec::new();
    let mut threads: Vec<usize> = Vec::new();
    for p in &group {
        if !subjects.contains(&p.subject.as_str()) {
            subjects.push(&p.subject);
        }
        if !threads.contains(&p.threads) {
            threads.push(p.threads);
        }
    }
    threads.sort_unstable();
    let columns = threads.len().clamp(1, PANELS_PER_ROW);
    let grid_rows = threads.len().div_ceil(PANELS_PER_ROW).max(1);
    let panel_h = PANEL_TOP + ROW_H * subjects.len() as u32 + PANEL_BOTTOM;
    let width = (LABEL_W + PANEL_W * columns as u32 + 20).max(MIN_WIDTH);
    let height = HEADER_H + panel_h * grid_rows as u32 + 10;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let peers = subjects.iter().any(|&s| Kind::of(s) == Kind::Peer);
    header(&root, workload, placement, info, peers)?;
    for (i, &t) in threads.iter().enumerate() {
        let (row, column) = (i / PANELS_PER_ROW, i % PANELS_PER_ROW);
        let y0 = HEADER_H + panel_h * row as u32;
        let x0 = LABEL_W + PANEL_W * column as u32;
        let area = root.clone().shrink((x0, y0), (PANEL_W, panel_h));
        let ratios: Vec<Option<f64>> = subjects
            .iter()
            .map(|&s| {
                let floor = floor_ns(points, workload, t)?;
                let p = group.iter().find(|p| p.subject == s && p.threads == t)?;
                Some(p.ns_per_op_per_thread / floor)
            })
            .collect();
        let caption = {
            let plural = if t == 1 { "" } else { "s" };
            let over = if t > info.cpus && info.cpus > 0 {
                format!(" (> {} CPUs)", info.cpus)
            } else {
                String::new()
            };
            match floor_ns(points, workload, t) {
                Some(f) => format!("{t} thread{plural}{over} · floor {f:.0} ns"),
                None => format!("{t} thread{plural}{over} · no floor"),
            }
        };
        let first_in_row = column == 0;
        panel(&root, &area, &caption, &subjects, &ratios, first_in_row)?;
    }
    root.present()?;
    Ok(())
}

/// The title, the subtitle and the key, above the panels.
fn header(
    root: &Area<'_>,
    workload: &str,
    placement: &str,
    info: &RunInfo,
    peers: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let title = format!(
        "{}, {} · {} CPUs · commit {}",
        describe_workload(workload),
        describe_placement(placement),
        info.cpus,
        info.commit
    );
    root.draw_text(
        &info.host,
        &("sans-serif", 13).into_font().color(&BLACK),
        (16, 58),
    )?;
    let bold = ("sans-serif", 19).into_font().style(FontStyle::Bold);
    root.draw_text(&title, &bold.color(&BLACK), (16, 10))?;
    let subtitle = "ns per operation per thread (the cell's wall time × threads / operations: throughput, inverted) as a multiple of the get_id floor at the same thread count (lower is better; each panel has its own scale)";
    let small = ("sans-serif", 14).into_font();
    root.draw_text(subtitle, &small.color(&BLACK), (16, 38))?;
    // The key.
    let y = 72;
    root.draw(&Circle::new((22, y), 5, OURS.filled()))?;
    root.draw_text(
        "interned-string-db (ours)",
        &small
            .color(&OURS_TEXT)
            .pos(Pos::new(HPos::Left, VPos::Center)),
        (32, y),
    )?;
    let mut x = 232;
    if peers {
        root.draw(&Circle::new((x, y), 5, PEER.stroke_width(2)))?;
        root.draw_text(
            "peers",
            &small
                .color(&PEER_TEXT)
                .pos(Pos::new(HPos::Left, VPos::Center)),
            (x + 10, y),
        )?;
        x += 80;
    }
    root.draw(&Circle::new((x, y), 5, FLOOR_COLOR.filled()))?;
    root.draw_text(
        "get_id alone, storing nothing = 1× (vertical line)",
        &small
            .color(&FLOOR_COLOR)
            .pos(Pos::new(HPos::Left, VPos::Center)),
        (x + 10, y),
    )?;
    Ok(())
}

/// One thread count: a row per subject, a dot at its × floor, on a log axis.
fn panel(
    root: &Area<'_>,
    area: &Area<'_>,
    caption: &str,
    subjects: &[&str],
    ratios: &[Option<f64>],
    names: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let present = ratios.iter().flatten().copied();
    let (min, max) = present.fold((1.0f64, 1.0f64), |(a, b), r| (a.min(r), b.max(r)));
    let (lo, hi) = x_range(min, max);
    let rows = subjects.len();
    let y_of = |i: usize| (rows - 1 - i) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 14))
        .margin_left(6)
        .margin_right(10)
        .x_label_area_size(PANEL_BOTTOM - 6)
        .y_label_area_size(0)
        .build_cartesian_2d(
            (lo..hi).log_scale().with_key_points(key_points(lo, hi)),
            -0.5..(rows as f64 - 0.5),
        )?;
    chart.draw_series(
        (0..rows)
            .filter(|i| i % 2 == 0)
            .map(|i| Rectangle::new([(lo, y_of(i) - 0.5), (hi, y_of(i) + 0.5)], STRIPE.filled())),
    )?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(FLOOR_COLOR)
        .x_label_formatter(&|x| axis_label(*x))
        .x_label_style(("sans-serif", 12))
        .draw()?;
    chart.draw_series(LineSeries::new(
        [(1.0, -0.5), (1.0, rows as f64 - 0.5)],
        FLOOR_COLOR.stroke_width(1),
    ))?;
    let label_style = |kind: Kind| {
        ("sans-serif", 12)
            .into_font()
            .color(&kind.text_color())
            .pos(Pos::new(HPos::Left, VPos::Center))
    };
    for (i, (&subject, ratio)) in subjects.iter().zip(ratios).enumerate() {
        let kind = Kind::of(subject);
        let y = y_of(i);
        let Some(r) = *ratio else {
            chart.draw_series(std::iter::once(
                EmptyElement::at((1.0, y)) + Text::new("not run", (6, 0), label_style(Kind::Floor)),
            ))?;
            continue;
        };
        let color = match kind {
            Kind::Floor => FLOOR_COLOR,
            Kind::Ours { .. } => OURS,
            Kind::Peer => PEER,
        };
        if kind != Kind::Floor {
            chart.draw_series(LineSeries::new(
                [(1.0, y), (r, y)],
                color.mix(0.45).stroke_width(2),
            ))?;
        }
        let marker = match kind {
            Kind::Floor => Circle::new((r, y), 4, FLOOR_COLOR.filled()),
            Kind::Ours { default: true } => Circle::new((r, y), 6, OURS.filled()),
            Kind::Ours { default: false } => Circle::new((r, y), 5, OURS.filled()),
            Kind::Peer => Circle::new((r, y), 5, PEER.stroke_width(2)),
        };
        chart.draw_series(std::iter::once(marker))?;
        if kind != Kind::Floor {
            // Beside the dot, away from the 1× line.
            let (offset, side) = if r < 1.0 {
                (-9, HPos::Right)
            } else {
                (9, HPos::Left)
            };
            let style = label_style(kind).pos(Pos::new(side, VPos::Center));
            chart.draw_series(std::iter::once(
                EmptyElement::at((r, y)) + Text::new(times(r), (offset, 0), style),
            ))?;
        }
        if names {
            let (_, py) = chart.backend_coord(&(lo, y));
            let mut font = ("sans-serif", 13).into_font();
            if matches!(kind, Kind::Ours { default: true }) {
                font = font.style(FontStyle::Bold);
            }
            root.draw_text(
                subject,
                &font
                    .color(&kind.text_color())
                    .pos(Pos::new(HPos::Right, VPos::Center)),
                (LABEL_W as i32 - 4, py),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_say_workload_vocabulary_and_placement() {
        assert_eq!(
            file_name("hit-heavy/usr-paths", "same-nc"),
            "cost-hit-heavy-usr-paths-same-nc.svg"
        );
        assert_eq!(
            file_name("hit-heavy/my corpus.v2", "own-nc"),
            "cost-hit-heavy-my-corpus-v2-own-nc.svg"
        );
    }

    #[test]
    fn csv_lines_split_on_unquoted_commas() {
        assert_eq!(split_csv_line("a,\"b,c\",d"), ["a", "b,c", "d"]);
        assert_eq!(split_csv_line(""), [""]);
    }

    #[test]
    fn key_points_stay_in_range_and_few() {
        for (lo, hi) in [(0.5, 3.0), (0.6, 300.0), (0.67, 300_000.0), (0.5, 1e8)] {
            let keys = key_points(lo, hi);
            assert!(!keys.is_empty() && keys.len() <= MAX_KEYS, "{keys:?}");
            assert!(keys.contains(&1.0), "{keys:?}");
            assert!(keys.iter().all(|k| (lo..=hi).contains(k)));
        }
    }

    #[test]
    fn a_written_csv_reads_back() {
        let dir = std::env::temp_dir().join(format!("perf-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("contention.csv");
        std::fs::write(
            &path,
            "workload,placement,threads,subject,ns_per_op_per_thread,cpus,commit\n\
             hit-heavy/synthetic,same-nc,1,get_id (floor),50.0,2,abc1234\n\
             hit-heavy/synthetic,same-nc,1,optimistic,75.5,2,abc1234\n",
        )
        .unwrap();
        let (points, info) = read_csv(&path).unwrap();
        assert_eq!(
            info,
            RunInfo {
                cpus: 2,
                commit: "abc1234".into(),
                host: String::new(),
            },
            "a CSV from before the host column reads"
        );
        assert_eq!(points.len(), 2);
        assert_eq!(floor_ns(&points, "hit-heavy/synthetic", 1), Some(50.0));
        assert_eq!(points[1].ns_per_op_per_thread, 75.5);
        let written = draw_all(&points, &info, &dir).unwrap();
        assert_eq!(written, [dir.join("cost-hit-heavy-synthetic-same-nc.svg")]);
        assert!(std::fs::read_to_string(&written[0])
            .unwrap()
            .contains("optimistic"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn axis_labels_are_short() {
        let labels: Vec<String> = key_points(0.12, 4.0).into_iter().map(axis_label).collect();
        assert_eq!(labels, ["0.2×", "0.5×", "1×", "2×"]);
        assert_eq!(axis_label(0.3), "0.3×");
        assert_eq!(axis_label(10_000.0), "10000×");
    }

    #[test]
    fn the_axis_holds_every_dot_and_1x() {
        for (min, max) in [(1.0, 1.0), (0.2, 1.0), (1.0, 226.0), (0.5, 20_000.0)] {
            let (lo, hi) = x_range(min, max);
            assert!(
                lo < min.min(1.0) && hi > max.max(1.0),
                "{min} {max}: {lo} {hi}"
            );
        }
    }
}
