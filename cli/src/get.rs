//! `stringdb get`: names of ids, read from a snapshot file in place.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use interned_string_db::MappedSnapshot;

use crate::{finish_io, format_u64, Failure};

/// Prints `<id><TAB><name>` for each of `ids`, in order, from the file at
/// `input`, mapped: only its header and what each lookup reads are read.
/// Every id is looked up before anything is printed: a bad file or an
/// absent id is a failure with no output.
pub(crate) fn get(input: &Path, ids: &[u64]) -> Result<(), Failure> {
    let failure = |e| Failure::from((input, e));
    // An error from `open` names its file; a lookup's does not.
    let snapshot = MappedSnapshot::open(input).map_err(|e| Failure(e.to_string()))?;
    let mut names = Vec::with_capacity(ids.len());
    for &id in ids {
        match snapshot.get(id).map_err(failure)? {
            Some(name) => names.push((id, name)),
            None => {
                return Err(Failure(format!(
                    "{}: id {id} is not in the file",
                    input.display()
                )))
            }
        }
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let mut digits = [0u8; 20];
    finish_io((|| {
        for (id, name) in names {
            out.write_all(format_u64(id, &mut digits))?;
            out.write_all(b"\t")?;
            out.write_all(name)?;
            out.write_all(b"\n")?;
        }
        out.flush()
    })())
}
