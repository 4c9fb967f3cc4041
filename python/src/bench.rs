//! The Rust side of `python/bench.py`'s comparisons, timed in this same
//! binary: not part of the API (underscored, absent from the stubs).

use std::path::PathBuf;
use std::time::Instant;

use interned_string_db::Snapshot;
use pyo3::prelude::*;

use crate::errors::load_error;
use crate::names::for_each_chunk;

/// Seconds that `get_id` over the names (copied into Rust first) takes in
/// a Rust loop.
#[pyfunction]
pub(crate) fn _rust_get_ids_seconds(names: &Bound<'_, PyAny>) -> PyResult<f64> {
    let mut owned: Vec<Vec<u8>> = Vec::new();
    for_each_chunk(names, |chunk| {
        owned.extend(chunk.iter().map(|name| name.to_vec()));
        Ok(())
    })?;
    let start = Instant::now();
    let mut ids = Vec::with_capacity(owned.len());
    ids.extend(owned.iter().map(|name| interned_string_db::get_id(name)));
    let seconds = start.elapsed().as_secs_f64();
    std::hint::black_box(ids);
    Ok(seconds)
}

/// Seconds that `Snapshot::load` of the file at `path` takes.
#[pyfunction]
pub(crate) fn _rust_load_seconds(path: PathBuf) -> PyResult<f64> {
    let start = Instant::now();
    let snapshot = Snapshot::load(&path).map_err(|e| load_error(&path, &e))?;
    let seconds = start.elapsed().as_secs_f64();
    std::hint::black_box(snapshot);
    Ok(seconds)
}
