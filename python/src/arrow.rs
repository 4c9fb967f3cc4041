//! `Dictionary.to_arrow`: the entries as a `pyarrow.Table`, its buffers
//! built in Rust with the GIL released and handed to
//! `pyarrow.Array.from_buffers` (one copy, into `bytes`; no Python object
//! per entry).

use interned_string_db::LoadError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::dictionary::Dictionary;
use crate::errors::{load_error, utf8_name};

/// The most string bytes one Arrow `string` array holds (its offsets are
/// 32-bit): past it the `name` column takes another chunk.
const CHUNK_BYTES: usize = i32::MAX as usize;

/// One chunk of the `name` column: Arrow's offsets (`len + 1` of them) and
/// the UTF-8 bytes.
struct NameChunk {
    offsets: Vec<i32>,
    data: Vec<u8>,
}

/// The columns' buffers.
struct Columns {
    ids: Vec<u64>,
    names: Vec<NameChunk>,
}

/// Why building the columns stopped.
enum Stop {
    Load(LoadError),
    /// The name of this id is not UTF-8.
    NotUtf8(u64),
    /// The name of this id is longer than an Arrow string holds.
    TooLong(u64),
}

fn columns(dictionary: &Dictionary, lossy: bool) -> Result<Columns, Stop> {
    let mut ids = Vec::with_capacity(dictionary.snapshot.len());
    let mut names: Vec<NameChunk> = Vec::new();
    for entry in &dictionary.snapshot {
        let (id, bytes) = entry.map_err(Stop::Load)?;
        let replaced;
        let name: &[u8] = match core::str::from_utf8(bytes) {
            Ok(_) => bytes,
            Err(_) if lossy => {
                replaced = String::from_utf8_lossy(bytes);
                replaced.as_bytes()
            }
            Err(_) => return Err(Stop::NotUtf8(id)),
        };
        if name.len() > CHUNK_BYTES {
            return Err(Stop::TooLong(id));
        }
        if names
            .last()
            .is_none_or(|chunk| chunk.data.len() + name.len() > CHUNK_BYTES)
        {
            names.push(NameChunk {
                offsets: vec![0],
                data: Vec::new(),
            });
        }
        if let Some(chunk) = names.last_mut() {
            chunk.data.extend_from_slice(name);
            // At most CHUNK_BYTES, which is i32::MAX.
            chunk.offsets.push(chunk.data.len() as i32);
        }
        ids.push(id);
    }
    Ok(Columns { ids, names })
}

/// The bytes of `values` in native byte order, as Arrow (and Python's
/// `array`) lays them out.
pub(crate) fn native_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_bytes: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |out| {
        for (slot, &value) in out.chunks_exact_mut(N).zip(values) {
            slot.copy_from_slice(&to_bytes(value));
        }
        Ok(())
    })
}

pub(crate) fn table<'py>(
    py: Python<'py>,
    dictionary: &Dictionary,
    lossy: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let pa = py.import("pyarrow")?;
    let columns = match py.detach(|| columns(dictionary, lossy)) {
        Ok(columns) => columns,
        Err(Stop::Load(e)) => return Err(load_error(&dictionary.path, &e)),
        Err(Stop::NotUtf8(id)) => {
            let bytes = dictionary
                .snapshot
                .get(id)
                .map_err(|e| load_error(&dictionary.path, &e))?
                .unwrap_or_default();
            return Err(utf8_name(py, id, bytes).err().unwrap_or_else(|| {
                PyValueError::new_err(format!("the name of id {id} is not UTF-8"))
            }));
        }
        Err(Stop::TooLong(id)) => {
            return Err(PyValueError::new_err(format!(
                "the name of id {id} is longer than an Arrow string holds (2 GiB)"
            )))
        }
    };
    let from_buffers = pa.getattr("Array")?.getattr("from_buffers")?;
    let none = py.None().into_bound(py);
    let ids = native_bytes(py, &columns.ids, u64::to_ne_bytes)?;
    let ids = from_buffers.call1((
        pa.call_method0("uint64")?,
        columns.ids.len(),
        PyList::new(py, [none.clone(), pa.call_method1("py_buffer", (ids,))?])?,
    ))?;
    let string = pa.call_method0("string")?;
    let names = PyList::empty(py);
    for chunk in &columns.names {
        let offsets = native_bytes(py, &chunk.offsets, i32::to_ne_bytes)?;
        let data = PyBytes::new(py, &chunk.data);
        names.append(from_buffers.call1((
            &string,
            chunk.offsets.len() - 1,
            PyList::new(
                py,
                [
                    none.clone(),
                    pa.call_method1("py_buffer", (offsets,))?,
                    pa.call_method1("py_buffer", (data,))?,
                ],
            )?,
        ))?)?;
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("type", &string)?;
    let names = pa.call_method("chunked_array", (names,), Some(&kwargs))?;
    let field = pa.getattr("field")?;
    let not_null = PyDict::new(py);
    not_null.set_item("nullable", false)?;
    let schema = pa.call_method1(
        "schema",
        (PyList::new(
            py,
            [
                field.call(("id", pa.call_method0("uint64")?), Some(&not_null))?,
                field.call(("name", &string), Some(&not_null))?,
            ],
        )?,),
    )?;
    let table_kwargs = PyDict::new(py);
    table_kwargs.set_item("schema", schema)?;
    pa.getattr("Table")?.call_method(
        "from_arrays",
        (PyList::new(py, [ids, names])?,),
        Some(&table_kwargs),
    )
}
