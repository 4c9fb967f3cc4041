//! Names from Python: `str` (its UTF-8 bytes) or `bytes`, borrowed, never
//! copied.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// How many names [`for_each_chunk`] borrows at a time: enough that
/// releasing the GIL costs nothing beside the hashing, few enough that the
/// borrowed slices stay in cache.
const CHUNK: usize = 4096;

/// The bytes a name stands for: a `str`'s UTF-8 encoding or a `bytes`'
/// contents, borrowed from the object.
///
/// # Errors
///
/// `TypeError` for anything else; `UnicodeEncodeError` (a `ValueError`) for
/// a `str` holding a lone surrogate, which has no UTF-8 encoding.
pub(crate) fn name_bytes<'a>(name: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(text) = name.cast::<PyString>() {
        return Ok(text.to_str()?.as_bytes());
    }
    if let Ok(bytes) = name.cast::<PyBytes>() {
        return Ok(bytes.as_bytes());
    }
    Err(PyTypeError::new_err(format!(
        "a name must be str or bytes, not {}",
        name.get_type().name()?
    )))
}

/// Room to reserve for the ids of `names`: its length where it has one,
/// but never more than a few chunks' worth up front, since `__len__` is
/// only what the object claims (the vector grows past it as names arrive).
pub(crate) fn capacity_hint(names: &Bound<'_, PyAny>) -> usize {
    names.len().unwrap_or(0).min(CHUNK * 256)
}

/// Calls `each` with the bytes of every name of the iterable `names`, a
/// chunk at a time, in order; stops at the first error.
pub(crate) fn for_each_chunk(
    names: &Bound<'_, PyAny>,
    mut each: impl FnMut(&[&[u8]]) -> PyResult<()>,
) -> PyResult<()> {
    let mut iter = names.try_iter()?;
    let mut objects = Vec::with_capacity(CHUNK);
    loop {
        objects.clear();
        for name in iter.by_ref().take(CHUNK) {
            objects.push(name?);
        }
        if objects.is_empty() {
            return Ok(());
        }
        let slices = objects
            .iter()
            .map(name_bytes)
            .collect::<PyResult<Vec<&[u8]>>>()?;
        each(&slices)?;
        if objects.len() < CHUNK {
            return Ok(());
        }
    }
}
