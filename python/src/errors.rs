//! The crate's errors as Python exceptions, each with its reason: a
//! snapshot file's problem with its path and offset, the interner's
//! refusals, the operating system's errors with their `OSError` subclass.

use std::ffi::CString;
use std::io;
use std::path::Path;

use interned_string_db::{BatchError, Error, LoadError, LoadProblem};
use pyo3::exceptions::{PyMemoryError, PyUnicodeDecodeError, PyValueError};
use pyo3::prelude::*;

/// An I/O error on `path`: the `OSError` subclass of its kind
/// (`FileNotFoundError`, `IsADirectoryError`, ...), the path in its message.
pub(crate) fn io_error(path: &Path, error: &io::Error) -> PyErr {
    PyErr::from(io::Error::new(
        error.kind(),
        format!("{}: {error}", path.display()),
    ))
}

/// A snapshot file that could not be read: `OSError` (of its kind) when
/// opening or reading failed, `MemoryError` when its contents did not fit,
/// `ValueError` for a file that is not a valid snapshot; the message names
/// the path and the byte offset.
pub(crate) fn load_error(path: &Path, error: &LoadError) -> PyErr {
    match error.problem() {
        LoadProblem::Io(e) => io_error(path, e),
        LoadProblem::OutOfMemory { .. } => {
            PyMemoryError::new_err(format!("{}: {error}", path.display()))
        }
        _ => PyValueError::new_err(format!("{}: {error}", path.display())),
    }
}

/// A refusal of the interner: `MemoryError` when memory ran out, else
/// `ValueError` (an empty name, an NC out of range or closed, a byte cap or
/// slab limit reached, a configuration that cannot be built).
pub(crate) fn interner_error(error: &Error) -> PyErr {
    match error {
        Error::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// A batch that stopped: the refusal's exception, its message saying which
/// name failed and that the names before it are interned.
pub(crate) fn batch_error(error: &BatchError) -> PyErr {
    match error {
        BatchError::At {
            error: Error::OutOfMemory { .. },
            ..
        } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// An NC index from Python: a negative one is a `ValueError`, as one past
/// the db's NCs is.
pub(crate) fn nc_index(nc: i64) -> PyResult<usize> {
    usize::try_from(nc).map_err(|_| PyValueError::new_err(format!("NC {nc} is negative")))
}

/// `bytes`, the name of `id`, as a `str`; a name that is not UTF-8 is a
/// `UnicodeDecodeError` (a `ValueError`) that names the id and the way to
/// read its bytes.
pub(crate) fn utf8_name<'a>(py: Python<'_>, id: u64, bytes: &'a [u8]) -> PyResult<&'a str> {
    core::str::from_utf8(bytes).map_err(|e| {
        let start = e.valid_up_to();
        let end = e.error_len().map_or(bytes.len(), |len| start + len);
        let reason = CString::new(format!(
            "the name of id {id} is not UTF-8; get_bytes({id}) returns its bytes"
        ))
        .unwrap_or_default();
        match PyUnicodeDecodeError::new(py, c"utf-8", bytes, start..end, &reason) {
            Ok(error) => PyErr::from_value(error.into_any()),
            Err(error) => error,
        }
    })
}
