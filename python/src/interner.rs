//! `Interner` and `Cursor`: an interner for emitters written in Python.

use std::path::PathBuf;

use interned_string_db::{BatchError, Config, InternedStringDb, Snapshot};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{batch_error, interner_error, io_error, nc_index};
use crate::files::{conflict_tuples, ConflictTuple};
use crate::names::{capacity_hint, for_each_chunk, name_bytes};

/// A concurrent string interner (the crate's `InternedStringDb`, default
/// strategy): one shard per NeuronCore, ids that are the names' hashes
/// (`get_id`), snapshots, deltas and snapshot files.
#[pyclass(frozen, module = "interned_string_db")]
pub(crate) struct Interner {
    db: InternedStringDb,
}

/// Where a series of `Interner.delta` calls stands: each delta holds only
/// the entries no earlier delta of the cursor delivered.
#[pyclass(module = "interned_string_db")]
pub(crate) struct Cursor {
    cursor: interned_string_db::Cursor,
}

#[pymethods]
impl Cursor {
    /// A cursor that has delivered nothing.
    #[new]
    fn new() -> Cursor {
        Cursor {
            cursor: interned_string_db::Cursor::new(),
        }
    }

    /// How many entries the cursor's deltas have delivered.
    #[getter]
    fn delivered(&self) -> usize {
        self.cursor.delivered()
    }

    fn __repr__(&self) -> String {
        format!("Cursor(delivered={})", self.cursor.delivered())
    }
}

/// `snapshot` as a `dict` from id to name: `str` where the name is UTF-8,
/// else `bytes`.
fn entries_dict<'py>(py: Python<'py>, snapshot: &Snapshot) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (id, bytes) in snapshot {
        match core::str::from_utf8(bytes) {
            Ok(name) => dict.set_item(id, name)?,
            Err(_) => dict.set_item(id, bytes)?,
        }
    }
    Ok(dict)
}

#[pymethods]
impl Interner {
    /// An interner with `ncs` NeuronCore shards. `byte_cap` bounds each
    /// shard's string bytes, `initial_capacity` presizes each shard's
    /// tables (entries), `conflict_budget` bounds each shard's stored
    /// conflicts (bytes). Raises `ValueError` for zero NCs or a
    /// configuration the machine cannot hold.
    #[new]
    #[pyo3(signature = (ncs = 256, *, byte_cap = None, initial_capacity = None, conflict_budget = None))]
    fn new(
        ncs: usize,
        byte_cap: Option<usize>,
        initial_capacity: Option<usize>,
        conflict_budget: Option<usize>,
    ) -> PyResult<Interner> {
        let mut config = Config::new().ncs(ncs).byte_cap(byte_cap);
        if let Some(entries) = initial_capacity {
            config = config.initial_capacity(entries);
        }
        if let Some(bytes) = conflict_budget {
            config = config.conflict_budget(bytes);
        }
        let db = InternedStringDb::try_with_config(config).map_err(|e| interner_error(&e))?;
        Ok(Interner { db })
    }

    /// The number of NC shards.
    #[getter]
    fn ncs(&self) -> usize {
        self.db.ncs()
    }

    /// Interns `name` (`str`, by its UTF-8 bytes, or `bytes`) in NC `nc`
    /// and returns its id (`get_id(name)`). Raises `ValueError` for an
    /// empty name, an NC out of range or closed, or a full shard.
    fn intern(&self, nc: i64, name: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.db
            .intern_bytes(nc_index(nc)?, name_bytes(name)?)
            .map_err(|e| interner_error(&e))
    }

    /// Interns the names of an iterable in NC `nc` and returns their ids,
    /// in order; the GIL is released while interning. A refused name raises
    /// `ValueError` naming its position; the names before it are interned.
    fn intern_batch(
        &self,
        py: Python<'_>,
        nc: i64,
        names: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<u64>> {
        let nc = nc_index(nc)?;
        let mut ids = Vec::with_capacity(capacity_hint(names));
        for_each_chunk(names, |chunk| {
            let done = ids.len();
            ids.resize(done + chunk.len(), 0);
            py.detach(|| self.db.intern_batch(nc, chunk, &mut ids[done..]))
                .map_err(|e| match e {
                    // The position in the whole batch, not in the chunk.
                    BatchError::At { index, error } => batch_error(&BatchError::At {
                        index: done + index,
                        error,
                    }),
                    other => batch_error(&other),
                })
        })?;
        Ok(ids)
    }

    /// The number of entries across the NC shards (an id interned in two
    /// NCs counts twice).
    fn __len__(&self) -> usize {
        self.db.total_entries()
    }

    /// Every open NC's entries, merged: a `dict` from id to name (`str`
    /// where the name is UTF-8, else `bytes`).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let snapshot = py.detach(|| self.db.snapshot());
        entries_dict(py, &snapshot)
    }

    /// The entries no earlier delta of `cursor` delivered, as `snapshot()`
    /// gives them; advances the cursor.
    fn delta<'py>(
        &self,
        py: Python<'py>,
        mut cursor: PyRefMut<'_, Cursor>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let cursor = &mut cursor.cursor;
        let delta = py.detach(|| self.db.delta(cursor));
        entries_dict(py, &delta)
    }

    /// The conflicts recorded so far as `(id, kept, rejected)` tuples.
    fn conflicts(&self) -> Vec<ConflictTuple> {
        self.db
            .conflicts()
            .into_iter()
            .map(|c| (c.id, c.kept.into_vec(), c.rejected.into_vec()))
            .collect()
    }

    /// Writes a snapshot of every open NC to the snapshot file `path`
    /// atomically (`path` must be absent or a regular file; `OSError`
    /// otherwise); `Dictionary.open(path)` reads it. Returns the snapshot's
    /// conflicts as `(id, kept, rejected)` tuples.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<Vec<ConflictTuple>> {
        py.detach(|| {
            let snapshot = self.db.snapshot();
            snapshot.save(&path).map_err(|e| io_error(&path, &e))?;
            Ok(conflict_tuples(&snapshot))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Interner(ncs={}) ({} entries)",
            self.db.ncs(),
            self.db.total_entries()
        )
    }
}
