//! `get_id`, `get_ids` and `get_ids_array`: the crate's ids of names.

use crate::arrow::native_bytes;
use crate::names::{capacity_hint, for_each_chunk, name_bytes};
use pyo3::prelude::*;

/// The id of `name` (a `str`, by its UTF-8 bytes, or `bytes`), bit for bit
/// the crate's `get_id`: `(SipHash-1-3(key 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1`.
#[pyfunction]
pub(crate) fn get_id(name: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(interned_string_db::get_id(name_bytes(name)?))
}

/// The ids of the names of the iterable `names`, in order: borrowed a
/// chunk at a time and hashed with the GIL released.
fn hash_all(py: Python<'_>, names: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let mut ids = Vec::with_capacity(capacity_hint(names));
    for_each_chunk(names, |chunk| {
        py.detach(|| ids.extend(chunk.iter().map(|name| interned_string_db::get_id(name))));
        Ok(())
    })?;
    Ok(ids)
}

/// The ids of the names of an iterable (each a `str` or `bytes`), in
/// order, as a list: one call, the names borrowed and hashed with the GIL
/// released.
#[pyfunction]
pub(crate) fn get_ids(py: Python<'_>, names: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    hash_all(py, names)
}

/// As `get_ids`, but the ids in an `array.array('Q')` (8 bytes an id, no
/// Python `int` each), which `numpy.frombuffer` reads without a copy.
#[pyfunction]
pub(crate) fn get_ids_array<'py>(
    py: Python<'py>,
    names: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let ids = hash_all(py, names)?;
    let bytes = native_bytes(py, &ids, u64::to_ne_bytes)?;
    py.import("array")?.getattr("array")?.call1(("Q", bytes))
}
