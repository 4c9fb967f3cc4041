//! `merge`: snapshot files merged into one, as `stringdb merge` does.

use std::path::PathBuf;

use interned_string_db::Snapshot;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{io_error, load_error};

/// A conflict as Python sees it: `(id, kept, rejected)`, the names as
/// `bytes`.
pub(crate) type ConflictTuple = (u64, Vec<u8>, Vec<u8>);

/// Loads the snapshot files `paths`, merges them by union (each id once;
/// two names under one id are a conflict, the first file's kept) and writes
/// the result to `out` atomically (a temporary file renamed over it; `out`
/// must be absent or a regular file). Returns the merged snapshot's
/// conflicts as `(id, kept, rejected)` tuples, those the inputs already
/// held included: what `stringdb merge` reports. The GIL is released
/// throughout.
#[pyfunction]
pub(crate) fn merge(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    out: PathBuf,
) -> PyResult<Vec<ConflictTuple>> {
    if paths.is_empty() {
        return Err(PyValueError::new_err("merge needs at least one input file"));
    }
    py.detach(|| {
        let mut snapshots = Vec::with_capacity(paths.len());
        for path in &paths {
            snapshots.push(Snapshot::load(path).map_err(|e| load_error(path, &e))?);
        }
        let merged = Snapshot::merge(&snapshots);
        merged.save(&out).map_err(|e| io_error(&out, &e))?;
        Ok(conflict_tuples(&merged))
    })
}

/// The conflicts of `snapshot` as tuples.
pub(crate) fn conflict_tuples(snapshot: &Snapshot) -> Vec<ConflictTuple> {
    snapshot
        .conflicts()
        .iter()
        .map(|c| (c.id, c.kept.to_vec(), c.rejected.to_vec()))
        .collect()
}
