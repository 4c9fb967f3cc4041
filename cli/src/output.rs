//! Output files written whole or not at all.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::Failure;

/// Fails early, before any input is read, if `path` cannot be written: its
/// directory is missing, or something other than a regular file is there.
/// An output is only ever written by renaming a new file over `path`, so
/// anything else (a directory, a symbolic link even to a regular file, a
/// device such as `/dev/null` or `/dev/stdout`, a FIFO, a socket) is
/// refused, never replaced and never written through.
pub(crate) fn check_writable(path: &Path) -> Result<(), Failure> {
    let parent = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Failure::from((path, "the directory does not exist")));
    }
    replaceable(path)
}

/// Whether a new file may be renamed over `path`: it is absent or a regular
/// file (a symbolic link is not followed).
fn replaceable(path: &Path) -> Result<(), Failure> {
    let kind = match fs::symlink_metadata(path) {
        Ok(meta) => meta.file_type(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Failure::from((path, e))),
    };
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "is a directory"
    } else if kind.is_symlink() {
        "is a symbolic link: the output replaces only a regular file (give the path it points to)"
    } else {
        "is not a regular file (a device, FIFO or socket): the output replaces only a regular file"
    };
    Err(Failure::from((path, what)))
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
        // Again: something may have appeared there since the first check.
        replaceable(path)?;
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
