//! Output files written whole or not at all.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::Failure;

/// Fails early, before any input is read, if `path` cannot be written: its
/// directory is missing, or it is a directory.
pub(crate) fn check_writable(path: &Path) -> Result<(), Failure> {
    let parent = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Failure::from((path, "the directory does not exist")));
    }
    if path.is_dir() {
        return Err(Failure::from((path, "is a directory")));
    }
    Ok(())
}

/// Writes `path` through `write` into a temporary file beside it, synced and
/// renamed over `path` only once `write` succeeded: on any failure nothing is
/// left under `path` (an old file there is kept) and the temporary file is
/// removed.
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    check_writable(path)?;
    let temporary = temporary_beside(path);
    let result = (|| {
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .map_err(|e| Failure::from((path, e)))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        out.flush().map_err(|e| Failure::from((path, e)))?;
        let file = out
            .into_inner()
            .map_err(|e| Failure::from((path, e.into_error())))?;
        file.sync_all().map_err(|e| Failure::from((path, e)))?;
        fs::rename(&temporary, path).map_err(|e| Failure::from((path, e)))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

fn temporary_beside(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".tmp-{}", std::process::id()));
    path.with_file_name(name)
}
