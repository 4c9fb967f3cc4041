//! The measurement library behind the contention harness (`src/main.rs`)
//! and the criterion benches (`benches/` at the repository root): the
//! subjects (our strategies and the peers, behind one trait), the workloads
//! and vocabularies, one cell's timed run, and the reports.

pub mod cell;
pub mod heap;
pub mod host;
pub mod peers;
pub mod plot;
pub mod report;
pub mod rusage;
pub mod subject;
pub mod subjects;
pub mod workload;
