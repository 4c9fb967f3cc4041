//! `get_id`, `get_ids` and `get_ids_array`: the crate's ids of names.

use crate::arrow::native_bytes;
use crate::names::{capacity_hint, for_each_chunk, name_bytes};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice, PyTuple};

/// The id of `name` (a `str`, by its UTF-8 bytes, or `bytes`), bit for bit
/// the crate's `get_id`: `(SipHash-1-3(key 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1`.
#[pyfunction]
pub(crate) fn get_id(name: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(interned_string_db::get_id(name_bytes(name)?))
}

/// Calls `each` with the ids of the names of the iterable `names`, in
/// order, a chunk at a time: the names borrowed and hashed with the GIL
/// released, into one buffer reused for every chunk.
fn hash_chunks(
    py: Python<'_>,
    names: &Bound<'_, PyAny>,
    mut each: impl FnMut(&[u64]) -> PyResult<()>,
) -> PyResult<()> {
    let mut ids = Vec::new();
    for_each_chunk(names, |chunk| {
        ids.clear();
        py.detach(|| ids.extend(chunk.iter().map(|name| interned_string_db::get_id(name))));
        each(&ids)
    })
}

/// The ids of the names of an iterable (each a `str` or `bytes`), in
/// order, as a list: one call, the names borrowed and hashed with the GIL
/// released.
#[pyfunction]
pub(crate) fn get_ids(py: Python<'_>, names: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let mut all = Vec::with_capacity(capacity_hint(names));
    hash_chunks(py, names, |ids| {
        all.extend_from_slice(ids);
        Ok(())
    })?;
    Ok(all)
}

/// As `get_ids`, but the ids in an `array.array('Q')` (8 bytes an id, no
/// Python `int` each), which `numpy.frombuffer` reads without a copy.
///
/// The array is made at the length `names` reports (its exact length for a
/// `list` or a `tuple`, at most [`capacity_hint`] for anything else, which
/// may claim what it likes), and each chunk's ids are copied into place as
/// they are hashed: the ids are held once, in the array, which is never
/// grown by copying. Ids past that length are appended; a shorter iterable
/// leaves the array cut to what it yielded.
#[pyfunction]
pub(crate) fn get_ids_array<'py>(
    py: Python<'py>,
    names: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let made = if names.is_exact_instance_of::<PyList>() || names.is_exact_instance_of::<PyTuple>()
    {
        names.len()?
    } else {
        capacity_hint(names)
    };
    let array = py
        .import("array")?
        .getattr("array")?
        .call1(("Q", [0u64]))?
        .mul(made)?;
    let bytes_view = py
        .import("builtins")?
        .getattr("memoryview")?
        .call1((&array,))?
        .call_method1("cast", ("B",))?;
    let mut filled = 0;
    hash_chunks(py, names, |ids| {
        let (into_place, appended) = ids.split_at(ids.len().min(made - filled));
        if !into_place.is_empty() {
            let end = filled + into_place.len();
            let place = PySlice::new(py, byte_offset(filled)?, byte_offset(end)?, 1);
            bytes_view.set_item(place, native_bytes(py, into_place, u64::to_ne_bytes)?)?;
            filled = end;
        }
        if !appended.is_empty() {
            // The view pins the array's size: released, the array may grow.
            bytes_view.call_method0("release")?;
            let bytes = native_bytes(py, appended, u64::to_ne_bytes)?;
            array.call_method1("frombytes", (bytes,))?;
        }
        Ok(())
    })?;
    bytes_view.call_method0("release")?;
    if filled < made {
        array.del_item(PySlice::new(py, as_index(filled)?, as_index(made)?, 1))?;
    }
    Ok(array)
}

/// `ids` ids' offset in bytes, as a Python index.
fn byte_offset(ids: usize) -> PyResult<isize> {
    as_index(ids.saturating_mul(8))
}

/// `n` as a Python index (`Py_ssize_t`), or `OverflowError`.
fn as_index(n: usize) -> PyResult<isize> {
    isize::try_from(n).map_err(|_| pyo3::exceptions::PyOverflowError::new_err("too many ids"))
}
