//! A file mapped into memory read-only (`memmap2`): the one `unsafe` call
//! the mapped snapshot reader (`src/snapshot/mapped.rs`) needs, and none of
//! its logic.

use std::fs::File;
use std::io;

/// A file's bytes, mapped read-only; none for an empty file (there is
/// nothing to map).
#[derive(Debug)]
pub(crate) struct MappedBytes(Option<memmap2::Mmap>);

impl MappedBytes {
    /// Maps the whole of `file`, read-only.
    ///
    /// The caller states the contract of the mapping to its own callers:
    /// the file must not be truncated, or written in place, while it is
    /// mapped (see `MappedSnapshot`'s `# Safety`).
    pub(crate) fn map(file: &File) -> io::Result<MappedBytes> {
        if file.metadata()?.len() == 0 {
            return Ok(MappedBytes(None));
        }
        // SAFETY: `Mmap::map` is unsafe because the file's bytes may change
        // under the returned slice, or the file shrink (then a read of a
        // page past its new end raises SIGBUS), if this or another process
        // writes or truncates the file while it is mapped. This crate never
        // does: its writers write a new file and rename it over the old one
        // (`Snapshot::save`), which leaves a mapped file's pages as they
        // are. Other processes are the contract `MappedSnapshot` documents.
        // The mapping is read-only and private to this value, which unmaps
        // it on drop, after every borrow of `bytes` has ended.
        let map = unsafe { memmap2::Mmap::map(file) }?;
        Ok(MappedBytes(Some(map)))
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }
}
