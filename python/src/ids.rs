//! `get_id` and `get_ids`: the crate's ids of names.

use pyo3::prelude::*;

use crate::names::{for_each_chunk, name_bytes};

/// The id of `name` (a `str`, by its UTF-8 bytes, or `bytes`), bit for bit
/// the crate's `get_id`: `(SipHash-1-3(key 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1`.
#[pyfunction]
pub(crate) fn get_id(name: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(interned_string_db::get_id(name_bytes(name)?))
}

/// The ids of the names of an iterable (each a `str` or `bytes`), in
/// order, as a list: one call, the names borrowed and hashed with the GIL
/// released.
#[pyfunction]
pub(crate) fn get_ids(py: Python<'_>, names: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let mut ids = Vec::with_capacity(names.len().unwrap_or(0));
    for_each_chunk(names, |chunk| {
        py.detach(|| ids.extend(chunk.iter().map(|name| interned_string_db::get_id(name))));
        Ok(())
    })?;
    Ok(ids)
}
