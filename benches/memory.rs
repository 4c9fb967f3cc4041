//! Memory per entry beyond the string bytes, for every strategy and the
//! peers that can be measured fresh, on synthetic and real vocabularies:
//! `cargo bench -p benches --bench memory [-- CORPUS_FILE...]`.
//!
//! A counting global allocator measures the live bytes a 256-NC db (or a
//! peer's table) holds after all names are interned on one NC, less the
//! bytes of the names themselves: everything else counts (indexes, headers,
//! alignment, slack, retired tables, the 256-NC fixed part, and our by-id
//! index, which the optimistic strategy builds lazily: it is settled before
//! the count). `ustr` is left
//! out: its cache is global and cannot be emptied between measurements.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicIsize, Ordering};

use perf::subject::{Subject, Visitor};
use perf::subjects::SubjectName;
use perf::workload;
use workload::Vocabulary;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to `System`, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Whether a subject is measured: every strategy and the peers that own
/// their tables (not the floor, which stores nothing, nor `ustr`, nor the
/// batch feeding of a strategy measured already).
fn measured(subject: SubjectName) -> bool {
    subject.stores() && subject != SubjectName::Batch
}

/// Builds a subject, interns `names` into NC 0, and reports the live bytes
/// it holds then, less the baseline taken before it was built.
struct Measure<'a> {
    names: &'a [String],
    bytes: isize,
}

impl Visitor for Measure<'_> {
    fn visit<T: Subject>(&mut self, subject: &T) {
        for name in self.names {
            subject.intern(0, name);
        }
        // Our by-id index, built lazily, counted once built.
        subject.settle();
        self.bytes = LIVE.load(Ordering::Relaxed);
    }
}

fn measure(subject: SubjectName, names: &[String]) -> f64 {
    let baseline = LIVE.load(Ordering::Relaxed);
    let mut m = Measure { names, bytes: 0 };
    // The subject is built inside `visit` (after the baseline) and dropped
    // after the visitor returns (after the reading).
    subject.visit(256, &mut m);
    let strings: usize = names.iter().map(String::len).sum();
    (m.bytes - baseline - strings as isize) as f64 / names.len() as f64
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut vocabularies = vec![
        Vocabulary {
            name: "synthetic".into(),
            names: std::sync::Arc::new(workload::vocabulary(1_000_000)),
        },
        Vocabulary::file_paths("usr-paths", Path::new("/usr"), 1_000_000),
    ];
    for path in &args {
        match Vocabulary::from_file(Path::new(path), 1_000_000) {
            Ok(v) => vocabularies.push(v),
            Err(e) => eprintln!("memory: skipping {path}: {e}"),
        }
    }
    // One column per (vocabulary, size), one row per subject: the names
    // stay whole however many subjects there are.
    let mut columns: Vec<(String, usize, f64, &[String])> = Vec::new();
    for v in &vocabularies {
        for n in [1_000, 10_000, 100_000, 1_000_000] {
            if v.names.len() >= n {
                let names = &v.names[..n];
                let mean = names.iter().map(String::len).sum::<usize>() as f64 / n as f64;
                columns.push((v.name.clone(), n, mean, names));
            }
        }
    }
    println!("bytes per entry beyond the string bytes (a 256-NC db, every name on NC 0)");
    let row = |label: &str, cells: Vec<String>| {
        println!(
            "{label:<24}{}",
            cells
                .iter()
                .map(|c| format!(" {c:>11}"))
                .collect::<String>()
        );
    };
    row("vocabulary", columns.iter().map(|c| c.0.clone()).collect());
    row("entries", columns.iter().map(|c| c.1.to_string()).collect());
    row(
        "mean bytes per name",
        columns.iter().map(|c| format!("{:.1}", c.2)).collect(),
    );
    for &s in SubjectName::all().iter().filter(|s| measured(**s)) {
        let cells = columns
            .iter()
            .map(|&(_, n, _, names)| {
                // Copy-on-write is quadratic to fill: small sizes only.
                if s.skips_vocabulary(n) {
                    "-".into()
                } else {
                    format!("{:.1}", measure(s, names))
                }
            })
            .collect();
        row(s.name(), cells);
    }
}
