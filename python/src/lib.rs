//! Python bindings of `interned-string-db` (the `interned_string_db`
//! module, built by maturin from `python/pyproject.toml`), one module a
//! part of the API:
//!
//! * `ids`: `get_id`, `get_ids` and `get_ids_array`, the crate's ids bit
//!   for bit, one name or many (the GIL released while hashing), the names
//!   borrowed by `names`;
//! * `dictionary`: `Dictionary`, a snapshot file read in place
//!   (`MappedSnapshot`), and `arrow`, its `to_arrow`;
//! * `files`: `merge`, snapshot files merged into one as `stringdb merge`
//!   does;
//! * `interner`: `Interner` and `Cursor`, for emitters written in Python;
//! * `errors`: every error of the crate as a Python exception with its
//!   reason (nothing here panics on bad input);
//! * `bench`: the Rust side of `python/bench.py`'s comparisons.
//!
//! `python/README.md` is the user's guide, `python/interned_string_db.pyi`
//! the typed API; the crate is tested through pytest (`python/tests/`).

use pyo3::prelude::*;

mod arrow;
mod bench;
mod dictionary;
mod errors;
mod files;
mod ids;
mod interner;
mod names;

/// Deterministic 50-bit string ids (`get_id`, `get_ids`), snapshot files
/// read in place (`Dictionary`), merged (`merge`) and written by an
/// `Interner`: interned-string-db from Python.
#[pymodule]
#[pyo3(name = "interned_string_db")]
fn python_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ids::get_id, m)?)?;
    m.add_function(wrap_pyfunction!(ids::get_ids, m)?)?;
    m.add_function(wrap_pyfunction!(ids::get_ids_array, m)?)?;
    m.add_function(wrap_pyfunction!(files::merge, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_rust_get_ids_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_rust_load_seconds, m)?)?;
    m.add_class::<dictionary::Dictionary>()?;
    m.add_class::<interner::Interner>()?;
    m.add_class::<interner::Cursor>()?;
    m.add("INVALID_ID", interned_string_db::INVALID_ID)?;
    m.add("MAX_ID", interned_string_db::MAX_ID)?;
    Ok(())
}
