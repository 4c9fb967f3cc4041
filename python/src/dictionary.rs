//! `Dictionary`: a snapshot file read in place.

use std::path::PathBuf;

use interned_string_db::MappedSnapshot;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyTuple};

use crate::errors::{load_error, utf8_name};
use crate::files::ConflictTuple;

/// A snapshot file (`docs/snapshot-format.md`) mapped into memory and read
/// in place: `open` checks its header, each lookup reads only its record
/// and name, `verify()` checks the rest.
///
/// Names are `str`; a name that is not UTF-8 (one interned as `bytes`)
/// raises `UnicodeDecodeError` from `d[id]`, `get`, `items` and `to_arrow`
/// (unless `lossy=True`), and `get_bytes(id)` returns it as `bytes`.
///
/// The file must not be truncated or written in place while open (replace
/// it by renaming a new file over it, as `save` and `merge` do).
#[pyclass(frozen, module = "interned_string_db")]
pub(crate) struct Dictionary {
    pub(crate) snapshot: MappedSnapshot,
    pub(crate) path: PathBuf,
}

/// An id argument: `None` for an `int` that no id can equal (negative, or
/// past 64 bits); anything but an `int` is a `TypeError`.
fn id_arg(id: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    match id.extract::<u64>() {
        Ok(id) => Ok(Some(id)),
        Err(_) if id.is_instance_of::<PyInt>() => Ok(None),
        Err(error) => Err(error),
    }
}

/// The name `bytes` of `id` as Python gets it: `bytes` if `as_bytes`, else
/// `str` (`UnicodeDecodeError` if it is not UTF-8).
fn name_object<'py>(
    py: Python<'py>,
    id: u64,
    bytes: &[u8],
    as_bytes: bool,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(if as_bytes {
        bytes.into_pyobject(py)?.into_any()
    } else {
        utf8_name(py, id, bytes)?.into_pyobject(py)?.into_any()
    })
}

impl Dictionary {
    /// The name of `id` as [`name_object`] gives it, if the file holds it.
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        as_bytes: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match (id_arg(id)?, self.bytes_of(id)?) {
            (Some(id), Some(bytes)) => name_object(py, id, bytes, as_bytes).map(Some),
            _ => Ok(None),
        }
    }

    /// The bytes of `id`, if the file holds it.
    fn bytes_of(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<&[u8]>> {
        let Some(id) = id_arg(id)? else {
            return Ok(None);
        };
        self.snapshot
            .get(id)
            .map_err(|e| load_error(&self.path, &e))
    }

    /// Calls `each` with every entry in id order; a record found bad is
    /// a `ValueError`.
    pub(crate) fn for_each(
        &self,
        mut each: impl FnMut(u64, &[u8]) -> PyResult<()>,
    ) -> PyResult<()> {
        for entry in &self.snapshot {
            let (id, bytes) = entry.map_err(|e| load_error(&self.path, &e))?;
            each(id, bytes)?;
        }
        Ok(())
    }
}

#[pymethods]
impl Dictionary {
    /// Maps the snapshot file at `path` and checks its header.
    ///
    /// Raises `OSError` (its subclass: `FileNotFoundError`, ...) when the
    /// file cannot be opened or is not a regular file, `ValueError` when it
    /// is not a valid snapshot file (the message names the offset).
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Dictionary> {
        let snapshot = py
            .detach(|| MappedSnapshot::open(&path))
            .map_err(|e| load_error(&path, &e))?;
        Ok(Dictionary { snapshot, path })
    }

    /// The path the dictionary was opened from.
    #[getter]
    fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The file's format version (1 or 2).
    #[getter]
    fn version(&self) -> u32 {
        self.snapshot.version()
    }

    /// Conflicts the file counts but does not store.
    #[getter]
    fn conflicts_dropped(&self) -> u64 {
        self.snapshot.conflicts_dropped()
    }

    fn __len__(&self) -> usize {
        self.snapshot.len()
    }

    fn __contains__(&self, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.bytes_of(id)?.is_some())
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.lookup(py, id, false)?
            .ok_or_else(|| PyKeyError::new_err(id.clone().unbind()))
    }

    /// The name of `id` as `str`, or `default` if the file does not hold it.
    #[pyo3(signature = (id, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.lookup(py, id, false)?.or(default))
    }

    /// The name of `id` as `bytes` (any name, UTF-8 or not), or `default`
    /// if the file does not hold it.
    #[pyo3(signature = (id, default = None))]
    fn get_bytes<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.lookup(py, id, true)?.or(default))
    }

    /// The ids, in increasing order, as a list.
    fn ids(&self) -> PyResult<Vec<u64>> {
        let mut ids = Vec::with_capacity(self.snapshot.len());
        self.for_each(|id, _| {
            ids.push(id);
            Ok(())
        })?;
        Ok(ids)
    }

    /// The `(id, name)` pairs in id order, as a list; `as_bytes=True` gives
    /// the names as `bytes` (any name), else as `str`.
    #[pyo3(signature = (*, as_bytes = false))]
    fn items<'py>(&self, py: Python<'py>, as_bytes: bool) -> PyResult<Bound<'py, PyList>> {
        let items = PyList::empty(py);
        self.for_each(|id, bytes| {
            let name = name_object(py, id, bytes, as_bytes)?;
            items.append(PyTuple::new(py, [id.into_pyobject(py)?.into_any(), name])?)
        })?;
        Ok(items)
    }

    /// An iterator over the ids in increasing order (they are read into a
    /// list first: 8 bytes and a Python `int` each).
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ids = PyList::new(py, self.ids()?)?;
        ids.try_iter().map(Bound::into_any)
    }

    /// The stored conflicts as `(id, kept, rejected)` tuples (`bytes`).
    fn conflicts(&self) -> PyResult<Vec<ConflictTuple>> {
        self.snapshot
            .conflicts()
            .map(|c| {
                c.map(|c| (c.id, c.kept.to_vec(), c.rejected.to_vec()))
                    .map_err(|e| load_error(&self.path, &e))
            })
            .collect()
    }

    /// Checks the whole file, as loading it would (every record, the
    /// checksums, the conflicts); raises `ValueError` naming the first
    /// problem and its offset. The GIL is released meanwhile.
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.snapshot.verify())
            .map_err(|e| load_error(&self.path, &e))
    }

    /// A `pyarrow.Table` of the entries in id order: `id: uint64`,
    /// `name: string`, neither nullable. A name that is not UTF-8 raises
    /// `UnicodeDecodeError`, unless `lossy=True`, which replaces its
    /// invalid bytes with U+FFFD (as `stringdb export --lossy`). Imports
    /// pyarrow (an optional dependency) when called.
    #[pyo3(signature = (*, lossy = false))]
    fn to_arrow<'py>(&self, py: Python<'py>, lossy: bool) -> PyResult<Bound<'py, PyAny>> {
        crate::arrow::table(py, self, lossy)
    }

    fn __repr__(&self) -> String {
        format!(
            "Dictionary.open({:?}) ({} entries)",
            self.path.display().to_string(),
            self.snapshot.len()
        )
    }
}
