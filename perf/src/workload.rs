//! Deterministic inputs, shared by the contention harness and the criterion
//! benches (the `benches/` crate, through this library), so that every
//! strategy and peer sees the same names in the same order.
//!
//! Two kinds of vocabulary: the synthetic one (10,000 trace-like names, which
//! fits in cache and flatters every design), and real ones: a file of one
//! name per line (`perf/corpus.sh` builds symbol names and file paths from
//! the machine's installed software), or the paths of the files under `/usr`,
//! walked at run time so that the default run needs no set-up.

use std::path::Path;
use std::sync::Arc;

/// SplitMix64: small, fast, and the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next pseudo-random word.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const SUFFIXES: &[&str] = &[
    "",
    "/grad",
    "/weight",
    "/attention/q_proj",
    "/mlp/down_proj/weight_scale",
];

/// The `index`-th name of stream `stream`: a realistic trace name of 20 to
/// 60 bytes (`model_3/layer_41/tensor_1207/grad`), distinct for every
/// (stream, index).
pub fn name(stream: u64, index: u64) -> String {
    let mut rng = SplitMix(stream.wrapping_mul(0x1000_0000_01B3) ^ index);
    let suffix = SUFFIXES[(rng.next_u64() % SUFFIXES.len() as u64) as usize];
    format!(
        "model_{}/layer_{}/tensor_{stream}_{index}{suffix}",
        rng.next_u64() % 10,
        rng.next_u64() % 100
    )
}

/// `n` distinct names (stream 0).
pub fn vocabulary(n: usize) -> Vec<String> {
    (0..n as u64).map(|i| name(0, i)).collect()
}

/// `len` indices into a vocabulary of `n` names, Zipf-distributed with
/// exponent `s` (rank 0 most frequent), from `seed`.
pub fn zipf_indices(n: usize, len: usize, s: f64, seed: u64) -> Vec<u32> {
    let mut cdf = Vec::with_capacity(n);
    let mut total = 0.0;
    for rank in 1..=n {
        total += 1.0 / (rank as f64).powf(s);
        cdf.push(total);
    }
    let mut rng = SplitMix(seed);
    (0..len)
        .map(|_| {
            let u = rng.next_f64() * total;
            cdf.partition_point(|&c| c < u).min(n - 1) as u32
        })
        .collect()
}

/// A named list of distinct names that hit-heavy workloads draw from.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Its name in reports.
    pub name: String,
    /// The names, distinct.
    pub names: Arc<Vec<String>>,
}

impl Vocabulary {
    /// The synthetic vocabulary: [`VOCABULARY`] trace-like names.
    pub fn synthetic() -> Vocabulary {
        Vocabulary {
            name: "synthetic".into(),
            names: Arc::new(vocabulary(VOCABULARY)),
        }
    }

    /// The distinct non-empty lines of `path`, at most `limit`, in file
    /// order; named after the file's stem.
    pub fn from_file(path: &Path, limit: usize) -> std::io::Result<Vocabulary> {
        let text = std::fs::read_to_string(path)?;
        let name = path
            .file_stem()
            .map_or_else(|| "corpus".into(), |s| s.to_string_lossy().into_owned());
        Ok(Self::from_lines(
            name,
            text.lines().map(str::to_owned),
            limit,
        ))
    }

    /// The paths of the regular files under `root` (sorted, at most
    /// `limit`): real names, from whatever software the machine has.
    pub fn file_paths(name: &str, root: &Path, limit: usize) -> Vocabulary {
        let mut paths = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    stack.push(entry.path());
                } else if kind.is_file() {
                    paths.push(entry.path().to_string_lossy().into_owned());
                }
            }
        }
        paths.sort_unstable();
        Self::from_lines(name.into(), paths.into_iter(), limit)
    }

    fn from_lines(name: String, lines: impl Iterator<Item = String>, limit: usize) -> Vocabulary {
        let mut seen = std::collections::HashSet::new();
        let names: Vec<String> = lines
            .filter(|l| !l.is_empty() && seen.insert(l.clone()))
            .take(limit)
            .collect();
        Vocabulary {
            name,
            names: Arc::new(names),
        }
    }

    /// Mean bytes per name.
    pub fn mean_len(&self) -> f64 {
        let total: usize = self.names.iter().map(String::len).sum();
        total as f64 / self.names.len().max(1) as f64
    }
}

/// A thread's access sequence for a workload: indices into `names`.
/// Hit-heavy: Zipf over the shared vocabulary (interned beforehand, so
/// ~100% hits). Miss-heavy: names private to the thread, each new the first
/// time it is seen.
#[derive(Debug, Clone)]
pub struct ThreadInput {
    /// The names this thread interns (shared by the threads of a hit-heavy
    /// cell: a real vocabulary is megabytes).
    pub names: Arc<Vec<String>>,
    /// The order it interns them in.
    pub sequence: Vec<u32>,
    /// Whether the sequence may be run again until time is up (hits can
    /// repeat; a repeated miss would be a hit).
    pub repeat: bool,
}

/// The workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Workload {
    /// Zipf over a vocabulary interned before the window: hits.
    HitHeavy,
    /// Every name new: misses (inserts).
    MissHeavy,
}

impl Workload {
    /// Its name in reports.
    pub fn label(self) -> &'static str {
        match self {
            Workload::HitHeavy => "hit-heavy",
            Workload::MissHeavy => "miss-heavy",
        }
    }
}

/// The vocabulary size of the hit-heavy workload.
pub const VOCABULARY: usize = 10_000;

/// Inputs for `threads` threads, `ops` operations each (for hit-heavy, the
/// length of a sequence over `vocabulary` that repeats; for miss-heavy, the
/// budget of new names).
pub fn inputs(
    workload: Workload,
    vocabulary: &Vocabulary,
    threads: usize,
    ops: usize,
    seed: u64,
) -> Vec<ThreadInput> {
    match workload {
        Workload::HitHeavy => {
            let n = vocabulary.names.len();
            (0..threads)
                .map(|t| ThreadInput {
                    names: Arc::clone(&vocabulary.names),
                    sequence: zipf_indices(n, ops, 1.0, seed ^ t as u64),
                    repeat: true,
                })
                .collect()
        }
        Workload::MissHeavy => (0..threads)
            .map(|t| ThreadInput {
                names: Arc::new(
                    (0..ops as u64)
                        .map(|i| name(seed.wrapping_add(1 + t as u64), i))
                        .collect(),
                ),
                sequence: (0..ops as u32).collect(),
                repeat: false,
            })
            .collect(),
    }
}

/// Miss-heavy inputs from a real vocabulary: its names dealt out to
/// `threads` threads (thread `t` takes every `threads`-th from `t`), each
/// interned once, so that every call is a miss into an empty db.
pub fn split(vocabulary: &Vocabulary, threads: usize) -> Vec<ThreadInput> {
    (0..threads)
        .map(|t| {
            let names: Vec<String> = vocabulary
                .names
                .iter()
                .skip(t)
                .step_by(threads)
                .cloned()
                .collect();
            ThreadInput {
                sequence: (0..names.len() as u32).collect(),
                names: Arc::new(names),
                repeat: false,
            }
        })
        .collect()
}
