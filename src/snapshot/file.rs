//! Snapshot files: the format of `docs/snapshot-format.md`, written whole or
//! not at all, read without trusting a byte of it.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::format::{
    self, Header, LoadError, LoadProblem, HEADER_LEN, MAGIC, VERSION_1, VERSION_2,
};
use super::Snapshot;
use crate::conflict::{Conflict, ConflictRef};

/// Items reserved up front, whatever the header claims: beyond it, vectors
/// grow only as data arrives (a file's length does not bound what it holds
/// in memory: a sparse file is any length with no bytes behind it).
const UP_FRONT: u64 = 1 << 12;
/// Bytes of strings read at a time, each read's room reserved fallibly.
const STRING_CHUNK: u64 = 1 << 16;

/// A writer that checksums what goes through it.
struct Checksummed<W> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Checksummed<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc.update(bytes);
        self.inner.write_all(bytes)
    }

    fn put_u64(&mut self, n: u64) -> io::Result<()> {
        self.put(&n.to_le_bytes())
    }

    /// Writes the checksum of everything since the last one.
    fn end_section(&mut self) -> io::Result<()> {
        let crc = core::mem::take(&mut self.crc).finalize();
        self.inner.write_all(&crc.to_le_bytes())
    }
}

/// A reader that counts and checksums what it reads, and names where it is.
struct Source<R> {
    inner: R,
    offset: u64,
    crc: crc32fast::Hasher,
}

impl<R: Read> Source<R> {
    fn error(&self, problem: LoadProblem) -> LoadError {
        LoadError::new(self.offset, problem)
    }

    fn take(&mut self, buf: &mut [u8], what: &'static str) -> Result<(), LoadError> {
        match self.inner.read_exact(buf) {
            Ok(()) => {
                self.crc.update(buf);
                self.offset += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(self.error(LoadProblem::Truncated(what)))
            }
            Err(e) => Err(self.error(LoadProblem::Io(e))),
        }
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, LoadError> {
        let mut b = [0; 8];
        self.take(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }

    /// `len` bytes appended to `out`, which grows only as they arrive, a
    /// chunk at a time, fallibly.
    fn bytes_into(
        &mut self,
        len: u64,
        out: &mut Vec<u8>,
        what: &'static str,
    ) -> Result<(), LoadError> {
        let mut left = len;
        while left > 0 {
            let chunk = left.min(STRING_CHUNK);
            // `chunk` fits in memory's address space: it is at most 64 KiB.
            grow(out, chunk as usize).map_err(|problem| self.error(problem))?;
            let start = out.len();
            // The room is reserved: reading to the chunk's end allocates
            // nothing more.
            let got = (&mut self.inner)
                .take(chunk)
                .read_to_end(out)
                .map_err(|e| self.error(LoadProblem::Io(e)))?;
            self.crc.update(&out[start..]);
            self.offset += got as u64;
            if (got as u64) < chunk {
                return Err(self.error(LoadProblem::Truncated(what)));
            }
            left -= chunk;
        }
        Ok(())
    }

    /// Reads the stored checksum and compares it with the bytes read since
    /// the last one.
    fn end_section(&mut self, section: &'static str) -> Result<(), LoadError> {
        let computed = core::mem::take(&mut self.crc).finalize();
        let at = self.offset;
        let mut b = [0; 4];
        self.take(&mut b, "a checksum")?;
        self.crc = crc32fast::Hasher::new();
        let stored = u32::from_le_bytes(b);
        if stored != computed {
            return Err(LoadError::new(
                at,
                LoadProblem::ChecksumMismatch {
                    section,
                    stored,
                    computed,
                },
            ));
        }
        Ok(())
    }
}

/// Capacity to reserve up front for `claimed` items: a little, whatever the
/// claim.
fn reserve_for(claimed: u64) -> usize {
    // At most `UP_FRONT`, which fits.
    claimed.min(UP_FRONT) as usize
}

/// Makes room in `items` for `more`, growing it (by doubling, as a push
/// would) fallibly: an allocation refused is `LoadProblem::OutOfMemory`.
fn grow<T>(items: &mut Vec<T>, more: usize) -> Result<(), LoadProblem> {
    if items.capacity() - items.len() >= more {
        return Ok(());
    }
    let wanted = more.max(items.len());
    items
        .try_reserve(wanted)
        .map_err(|_| LoadProblem::OutOfMemory {
            bytes: wanted.saturating_mul(core::mem::size_of::<T>()),
        })
}

/// Pushes `item` onto `items`, growing it fallibly.
pub(super) fn push<T>(items: &mut Vec<T>, item: T) -> Result<(), LoadProblem> {
    grow(items, 1)?;
    items.push(item);
    Ok(())
}

impl Snapshot {
    /// Writes the snapshot in the format of `docs/snapshot-format.md`, its
    /// version 2.
    ///
    /// # Errors
    ///
    /// Those of `out`.
    pub fn write_to(&self, out: impl Write) -> io::Result<()> {
        self.write_version(out, VERSION_2)
    }

    /// Writes the snapshot in the format's version 1 (records of id and
    /// length), which this crate no longer writes otherwise: for this
    /// workspace's tests and fuzz targets, which check that a version 1
    /// file read is exactly the encoding of what was read (a test hook:
    /// feature `test-util`).
    #[cfg(feature = "test-util")]
    #[doc(hidden)]
    pub fn write_v1_to(&self, out: impl Write) -> io::Result<()> {
        self.write_version(out, VERSION_1)
    }

    fn write_version(&self, out: impl Write, version: u32) -> io::Result<()> {
        let mut w = Checksummed {
            inner: out,
            crc: crc32fast::Hasher::new(),
        };
        w.put(&MAGIC)?;
        w.put(&version.to_le_bytes())?;
        w.put(&0u32.to_le_bytes())?; // flags
        w.put_u64(self.len() as u64)?;
        w.put_u64(self.bytes.len() as u64)?;
        w.put_u64(self.conflicts.len() as u64)?;
        w.put_u64(self.conflicts_dropped)?;
        w.put(&[0; 12])?; // reserved
        w.end_section()?;
        let mut start = 0;
        for (&id, &end) in self.ids.iter().zip(&self.ends) {
            w.put_u64(id)?;
            w.put_u64(if version == VERSION_1 {
                end - start
            } else {
                end
            } as u64)?;
            start = end;
        }
        w.put(&self.bytes)?;
        w.end_section()?;
        for c in &self.conflicts {
            w.put_u64(c.id)?;
            w.put_u64(c.kept.len() as u64)?;
            w.put_u64(c.rejected.len() as u64)?;
            w.put(&c.kept)?;
            w.put(&c.rejected)?;
        }
        w.end_section()?;
        w.inner.flush()
    }

    /// Writes the snapshot to `path` atomically: into a new temporary file
    /// in the same directory, synced, then renamed over `path` (and the
    /// directory synced). A crash leaves the old file or the new one under
    /// `path`, never a torn one; on an error the temporary file is removed.
    ///
    /// `path` must be absent or a regular file: anything else there (a
    /// symbolic link, even to a regular file; a device such as `/dev/null`;
    /// a FIFO; a socket; a directory) is refused, never replaced, and
    /// nothing is written. The check is made before the temporary file is
    /// created and again just before the rename.
    ///
    /// # Errors
    ///
    /// Creating, writing, syncing or renaming the file; `path` existing and
    /// not being a regular file ([`io::ErrorKind::InvalidInput`], or
    /// [`io::ErrorKind::IsADirectory`] for a directory).
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        replaceable(path)?;
        let temporary = temporary_path(path)?;
        let written = File::options()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|file| {
                let mut out = BufWriter::new(file);
                self.write_to(&mut out)?;
                let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
                file.sync_all()
            })
            .and_then(|()| replaceable(path))
            .and_then(|()| fs::rename(&temporary, path));
        if let Err(e) = written {
            let _ = fs::remove_file(&temporary);
            return Err(e);
        }
        // The rename is durable once the directory is synced. Not every
        // platform can open a directory to sync it; the file is whole either
        // way.
        if let Some(dir) = path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    /// Reads a snapshot written by [`write_to`](Self::write_to) or
    /// [`save`](Self::save). Nothing in the input can make this panic or
    /// abort: it allocates in proportion to the bytes that actually arrive,
    /// never to a count the input claims, and fallibly (memory running out
    /// is [`LoadProblem::OutOfMemory`]).
    ///
    /// # Errors
    ///
    /// A [`LoadError`] naming the problem and its byte offset: truncated,
    /// corrupt (a checksum), not a snapshot, another version, or contents that
    /// break the format's rules.
    pub fn read_from(input: impl Read) -> Result<Snapshot, LoadError> {
        read(input, None)
    }

    /// Reads the snapshot file at `path` (see [`read_from`](Self::read_from)).
    /// The header's counts are checked against the file's length first; even
    /// then nothing is reserved for what they claim (a sparse file is any
    /// length with nothing behind it): memory grows as the data arrives.
    ///
    /// # Errors
    ///
    /// As [`read_from`](Self::read_from), with the error naming `path`
    /// ([`LoadError::path`], and first in its `Display`); failing to open
    /// the file is an [`LoadProblem::Io`] at offset 0.
    pub fn load(path: impl AsRef<Path>) -> Result<Snapshot, LoadError> {
        let path = path.as_ref();
        let io_error = |e| LoadError::new(0, LoadProblem::Io(e));
        (|| {
            let file = File::open(path).map_err(io_error)?;
            let length = file.metadata().map_err(io_error)?.len();
            read(BufReader::with_capacity(1 << 16, file), Some(length))
        })()
        .map_err(|e| e.in_file(path))
    }
}

/// Whether a file may be renamed over `path`: it is absent or a regular
/// file (not followed if a symbolic link). Anything else is an error that
/// says what it is.
fn replaceable(path: &Path) -> io::Result<()> {
    let kind = match fs::symlink_metadata(path) {
        Ok(meta) => meta.file_type(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if kind.is_file() {
        return Ok(());
    }
    let (error, what) = if kind.is_dir() {
        (io::ErrorKind::IsADirectory, "a directory")
    } else if kind.is_symlink() {
        (io::ErrorKind::InvalidInput, "a symbolic link")
    } else {
        (
            io::ErrorKind::InvalidInput,
            "not a regular file (a device, FIFO or socket)",
        )
    };
    Err(io::Error::new(
        error,
        format!("is {what}: a snapshot replaces only a regular file, so it was not written"),
    ))
}

/// `dir/.name.tmp-<pid>-<n>`, beside `path`.
fn temporary_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let n = crate::sync::unique_generation();
    let mut temporary = std::ffi::OsString::from(".");
    temporary.push(name);
    temporary.push(format!(".tmp-{}-{n}", std::process::id()));
    Ok(path.with_file_name(temporary))
}

/// Reads a snapshot; `length`, when known, bounds what the header may claim.
fn read(input: impl Read, length: Option<u64>) -> Result<Snapshot, LoadError> {
    let mut src = Source {
        inner: input,
        offset: 0,
        crc: crc32fast::Hasher::new(),
    };
    let mut head = Vec::new();
    let read = src.bytes_into(HEADER_LEN, &mut head, "the header");
    let header = match Header::parse(&head) {
        Err(e) if matches!(e.problem(), LoadProblem::BadMagic) => return Err(e),
        // Read whole, or the reading's own error (`Truncated`, `Io`).
        parsed => read.and(parsed)?,
    };
    // The header's checksum is checked: the next section's starts here.
    src.crc = crc32fast::Hasher::new();
    if let Some(length) = length {
        header.check_fits(length)?;
    }
    let Header {
        entries,
        string_bytes,
        conflicts,
        conflicts_dropped,
        ..
    } = header;
    // Nothing is reserved for what the counts claim: a file passing the
    // check above may still be sparse.
    let mut snapshot = Snapshot {
        ids: Vec::with_capacity(reserve_for(entries)),
        ends: Vec::with_capacity(reserve_for(entries)),
        bytes: Vec::with_capacity(reserve_for(string_bytes)),
        conflicts: Vec::new(),
        conflicts_dropped,
    };
    let mut end = 0u64;
    for _ in 0..entries {
        let at = src.offset;
        let id = src.u64("the entry records")?;
        let field = src.u64("the entry records")?;
        if snapshot.ids.last().is_some_and(|&last| last >= id) {
            return Err(LoadError::new(at, LoadProblem::Unsorted(id)));
        }
        end = header
            .record_end(end, field)
            .ok_or(LoadError::new(at + 8, LoadProblem::LengthsDisagree))?;
        let oom = |problem| LoadError::new(at, problem);
        push(&mut snapshot.ids, id).map_err(oom)?;
        // `end <= string_bytes`, which must fit in memory to be read below.
        push(
            &mut snapshot.ends,
            usize::try_from(end).unwrap_or(usize::MAX),
        )
        .map_err(oom)?;
    }
    if end != string_bytes {
        return Err(src.error(LoadProblem::LengthsDisagree));
    }
    src.bytes_into(string_bytes, &mut snapshot.bytes, "the entry strings")?;
    src.end_section("entries")?;

    let mut list: Vec<Conflict> = Vec::with_capacity(reserve_for(conflicts));
    for _ in 0..conflicts {
        let at = src.offset;
        let id = src.u64("the conflict records")?;
        let kept_len = src.u64("the conflict records")?;
        let rejected_len = src.u64("the conflict records")?;
        let mut kept = Vec::new();
        src.bytes_into(kept_len, &mut kept, "a conflict's strings")?;
        let mut rejected = Vec::new();
        src.bytes_into(rejected_len, &mut rejected, "a conflict's strings")?;
        let conflict = Conflict {
            id,
            kept: kept.into(),
            rejected: rejected.into(),
        };
        fn view(c: &Conflict) -> ConflictRef<'_> {
            ConflictRef {
                id: c.id,
                kept: &c.kept,
                rejected: &c.rejected,
            }
        }
        if !format::conflict_follows(list.last().map(view), view(&conflict), snapshot.get(id)) {
            return Err(LoadError::new(at, LoadProblem::BadConflict(id)));
        }
        push(&mut list, conflict).map_err(|problem| LoadError::new(at, problem))?;
    }
    src.end_section("conflicts")?;
    snapshot.conflicts = list;

    let mut probe = [0; 1];
    match src.inner.read(&mut probe) {
        Ok(0) => Ok(snapshot),
        Ok(_) => Err(src.error(LoadProblem::TrailingBytes)),
        Err(e) => Err(src.error(LoadProblem::Io(e))),
    }
}
