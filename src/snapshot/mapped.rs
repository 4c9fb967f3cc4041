//! A snapshot file read in place: mapped into memory, its header checked on
//! open, every other byte checked where it is read, everything on demand
//! ([`MappedSnapshot::verify`]).

use std::fs::File;
use std::io;
use std::path::Path;

use super::file::push;
use super::format::{
    self, u64_at, Header, LoadError, LoadProblem, CHECKSUM_LEN, CONFLICT_RECORD, ENTRY_RECORD,
    HEADER_LEN, VERSION_1,
};
use super::search;
use crate::conflict::{Conflict, ConflictRef};
use crate::raw::mapping::MappedBytes;

/// A snapshot file (`docs/snapshot-format.md`, versions 1 and 2) read in
/// place, for a reader that needs a few names out of a large dictionary.
///
/// [`open`](Self::open) maps the file and checks its header, and that the
/// header's counts fit the file's length, and nothing else: for a version 2
/// file it takes time independent of the file's size. [`get`](Self::get)
/// finds an id by a search over the fixed-width entry records and reads its
/// record, the one before it and its string: nothing else of the file is
/// read (or, the file being mapped, brought into memory). A version 1 file
/// stores lengths, not ends: `open` reads its records and keeps their ends
/// (O(E) time, 8 bytes of heap an entry).
///
/// Every access checks what it reads: an end offset outside the strings, or
/// before the previous entry's, an id out of order where iteration meets
/// it, a conflict running past the file's end, are each a [`LoadError`], as
/// [`Snapshot::load`](crate::Snapshot::load) reports them. What an access
/// does not read it does not check: the checksums, and the order of ids a
/// search skips over, are checked by [`verify`](Self::verify), which checks
/// everything `load` checks. A file that `load` refuses is refused by
/// `open` or by `verify`; a verified file answers exactly as the
/// [`Snapshot`](crate::Snapshot) `load` returns.
///
/// Nothing in the file is trusted to size an allocation: the version 1
/// ends grow as records are read, fallibly ([`LoadProblem::OutOfMemory`]),
/// and conflicts are borrowed from the mapping, never copied.
///
/// # Safety
///
/// `open` is safe to call, but the mapping carries a contract that Rust
/// cannot check: **the file must not be truncated, or written in place,
/// while a `MappedSnapshot` of it exists.** A file truncated under the
/// mapping makes a read of a page past its new end raise `SIGBUS`, which
/// kills the process; bytes written in place change what the borrowed
/// slices hold. Every offset is read from the mapping once and checked
/// before it is used, so bytes that change cannot make this type read
/// outside the mapping, but they can change its answers. This crate's
/// writers never break the contract: [`Snapshot::save`](crate::Snapshot::save)
/// and `stringdb merge` write a new file and rename it over the old one,
/// which leaves the old file, and every mapping of it, intact. Replace
/// snapshot files the same way; do not map files that another program
/// appends to or truncates.
#[derive(Debug)]
pub struct MappedSnapshot {
    map: MappedBytes,
    header: Header,
    /// `E`, which fits: its records are in the mapping.
    entries: usize,
    /// Where the strings start, after the records.
    strings_at: usize,
    /// Where the conflicts section starts, after the entries' checksum.
    conflicts_at: usize,
    /// A version 1 file's entry ends, read on open; empty for version 2,
    /// whose records hold them.
    v1_ends: Vec<u64>,
}

/// One conflict of a [`MappedSnapshot`], borrowed from the mapping (a
/// [`Conflict`] without the copies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappedConflict<'a> {
    /// The contested id.
    pub id: u64,
    /// The bytes the id resolves to (in a delta, those an earlier delta
    /// delivered).
    pub kept: &'a [u8],
    /// Bytes refused under the same id.
    pub rejected: &'a [u8],
}

impl MappedConflict<'_> {
    /// An owned copy.
    pub fn to_conflict(self) -> Conflict {
        self.as_ref().to_conflict()
    }

    fn as_ref(&self) -> ConflictRef<'_> {
        ConflictRef {
            id: self.id,
            kept: self.kept,
            rejected: self.rejected,
        }
    }
}

impl MappedSnapshot {
    /// Maps the snapshot file at `path` and checks its header: the magic,
    /// the version, the header's checksum, the flags, and that the counts
    /// fit the file's length. A version 1 file's records are read too (see
    /// the type's documentation). See the type's `# Safety` for what the
    /// file must not undergo while mapped.
    ///
    /// # Errors
    ///
    /// A [`LoadError`], as [`Snapshot::load`](crate::Snapshot::load)
    /// reports it; failing to open or map the file, or `path` not being a
    /// regular file (a device, a FIFO, a directory: nothing is mapped), is
    /// a [`LoadProblem::Io`] at offset 0. The error names `path`
    /// ([`LoadError::path`]); those of later lookups do not.
    pub fn open(path: impl AsRef<Path>) -> Result<MappedSnapshot, LoadError> {
        let path = path.as_ref();
        Self::open_at(path).map_err(|e| e.in_file(path))
    }

    fn open_at(path: &Path) -> Result<MappedSnapshot, LoadError> {
        let io_error = |e| LoadError::new(0, LoadProblem::Io(e));
        let file = File::open(path).map_err(io_error)?;
        if !file.metadata().map_err(io_error)?.is_file() {
            return Err(io_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file: only a regular file is mapped",
            )));
        }
        let map = MappedBytes::map(&file).map_err(io_error)?;
        let bytes = map.bytes();
        let header = Header::parse(&bytes[..bytes.len().min(HEADER_LEN as usize)])?;
        header.check_fits(bytes.len() as u64)?;
        // The counts fit the mapping, so every offset below does too.
        let entries = header.entries as usize;
        let strings_at = HEADER_LEN as usize + entries * ENTRY_RECORD as usize;
        let conflicts_at = strings_at + header.string_bytes as usize + CHECKSUM_LEN as usize;
        let mut snapshot = MappedSnapshot {
            map,
            header,
            entries,
            strings_at,
            conflicts_at,
            v1_ends: Vec::new(),
        };
        if header.version == VERSION_1 {
            snapshot.read_v1_ends()?;
        }
        Ok(snapshot)
    }

    /// The format version of the file: 1 or 2.
    pub fn version(&self) -> u32 {
        self.header.version
    }

    /// The number of entries (distinct ids) the header claims, each of
    /// whose records is in the file.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether the file holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Conflicts counted but not stored (see
    /// [`Snapshot::conflicts_dropped`](crate::Snapshot::conflicts_dropped)).
    pub fn conflicts_dropped(&self) -> u64 {
        self.header.conflicts_dropped
    }

    /// The bytes of `id`, if the file holds it: a search over the records
    /// (interpolating, hashed ids being uniform, then bisecting), then the
    /// entry's record, the one before it, and its string.
    ///
    /// # Errors
    ///
    /// [`LoadProblem::LengthsDisagree`] at the record whose end offset is
    /// outside the strings or before the previous entry's. The search
    /// assumes the ids sorted, and does not check the order of those it
    /// skips: in a file that [`verify`](Self::verify) would refuse, an id
    /// may be missed.
    pub fn get(&self, id: u64) -> Result<Option<&[u8]>, LoadError> {
        match self.find(id) {
            Some(at) => self.entry(at).map(Some),
            None => Ok(None),
        }
    }

    /// The entries in increasing id order, each checked as it is read (an
    /// id not above the one before it is [`LoadProblem::Unsorted`]); the
    /// iteration ends after the first error.
    pub fn iter(&self) -> MappedIter<'_> {
        MappedIter {
            snapshot: self,
            at: 0,
            previous: None,
        }
    }

    /// The conflicts, borrowed from the mapping, each checked as it is read
    /// (bounds, order, and the kept bytes against the entry); the
    /// iteration ends after the first error. The section's checksum is
    /// [`verify`](Self::verify)'s.
    pub fn conflicts(&self) -> MappedConflicts<'_> {
        MappedConflicts {
            snapshot: self,
            at: self.conflicts_at,
            read: 0,
            previous: None,
        }
    }

    /// Checks everything [`Snapshot::load`](crate::Snapshot::load) checks
    /// that [`open`](Self::open) did not: every record, the entries'
    /// checksum, every conflict, the conflicts' checksum, and that nothing
    /// follows it. Reads the whole file.
    ///
    /// # Errors
    ///
    /// The first problem, at its offset, as `load` reports it.
    pub fn verify(&self) -> Result<(), LoadError> {
        let bytes = self.map.bytes();
        self.walk_records(|_| Ok(()))?;
        let strings_end = self.conflicts_at - CHECKSUM_LEN as usize;
        check_sum(bytes, HEADER_LEN as usize, strings_end, "entries")?;
        let mut conflicts = self.conflicts();
        for conflict in &mut conflicts {
            conflict?;
        }
        let end = conflicts.at;
        check_sum(bytes, self.conflicts_at, end, "conflicts")?;
        let end = end + CHECKSUM_LEN as usize;
        if end != bytes.len() {
            return Err(LoadError::new(end as u64, LoadProblem::TrailingBytes));
        }
        Ok(())
    }

    /// The id of the entry at `at`, below `entries`.
    fn id(&self, at: usize) -> u64 {
        u64_at(self.map.bytes(), self.record_at(at))
    }

    /// The offset of the record of the entry at `at`.
    fn record_at(&self, at: usize) -> usize {
        HEADER_LEN as usize + at * ENTRY_RECORD as usize
    }

    /// Where the entry at `at`, below `entries`, ends in the strings, as
    /// stored (unchecked).
    fn stored_end(&self, at: usize) -> u64 {
        match self.v1_ends.get(at) {
            Some(&end) => end,
            None => u64_at(self.map.bytes(), self.record_at(at) + 8),
        }
    }

    /// The string of the entry at `at`, below `entries`: between the
    /// previous entry's end and its own, which must be in order and within
    /// the strings.
    fn entry(&self, at: usize) -> Result<&[u8], LoadError> {
        let start = at
            .checked_sub(1)
            .map_or(0, |before| self.stored_end(before));
        let end = self.stored_end(at);
        if start > end || end > self.header.string_bytes {
            return Err(LoadError::new(
                self.record_at(at) as u64 + 8,
                LoadProblem::LengthsDisagree,
            ));
        }
        // Within the strings, which are within the mapping.
        let (start, end) = (
            self.strings_at + start as usize,
            self.strings_at + end as usize,
        );
        Ok(&self.map.bytes()[start..end])
    }

    /// The position of `id` among the entries, if a search finds it
    /// ([`search::find`]).
    fn find(&self, id: u64) -> Option<usize> {
        search::find(self.entries, id, |at| self.id(at))
    }

    /// Reads every record in order, checking the ids' order and the ends
    /// (as `load` does), and calls `each` with every entry's end.
    fn walk_records(
        &self,
        mut each: impl FnMut(u64) -> Result<(), LoadProblem>,
    ) -> Result<(), LoadError> {
        let bytes = self.map.bytes();
        let mut end = 0;
        for at in 0..self.entries {
            let record = self.record_at(at);
            let id = u64_at(bytes, record);
            if at > 0 && self.id(at - 1) >= id {
                return Err(LoadError::new(record as u64, LoadProblem::Unsorted(id)));
            }
            let field = u64_at(bytes, record + 8);
            end = self.header.record_end(end, field).ok_or(LoadError::new(
                record as u64 + 8,
                LoadProblem::LengthsDisagree,
            ))?;
            each(end).map_err(|problem| LoadError::new(record as u64, problem))?;
        }
        if end != self.header.string_bytes {
            return Err(LoadError::new(
                self.strings_at as u64,
                LoadProblem::LengthsDisagree,
            ));
        }
        Ok(())
    }

    /// Reads a version 1 file's records into `v1_ends`, which grows as they
    /// are read, fallibly.
    fn read_v1_ends(&mut self) -> Result<(), LoadError> {
        let mut ends = Vec::new();
        self.walk_records(|end| push(&mut ends, end))?;
        self.v1_ends = ends;
        Ok(())
    }
}

/// Compares the checksum stored at `end` with that of `bytes[start..end]`.
fn check_sum(
    bytes: &[u8],
    start: usize,
    end: usize,
    section: &'static str,
) -> Result<(), LoadError> {
    let Some(stored) = bytes.get(end..end + CHECKSUM_LEN as usize) else {
        return Err(LoadError::new(
            end as u64,
            LoadProblem::Truncated("a checksum"),
        ));
    };
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    let computed = crc32fast::hash(&bytes[start..end]);
    if stored != computed {
        return Err(LoadError::new(
            end as u64,
            LoadProblem::ChecksumMismatch {
                section,
                stored,
                computed,
            },
        ));
    }
    Ok(())
}

impl<'a> IntoIterator for &'a MappedSnapshot {
    type Item = Result<(u64, &'a [u8]), LoadError>;
    type IntoIter = MappedIter<'a>;

    fn into_iter(self) -> MappedIter<'a> {
        self.iter()
    }
}

/// The entries of a [`MappedSnapshot`] in increasing id order, each
/// checked as it is read.
#[derive(Debug, Clone)]
pub struct MappedIter<'a> {
    snapshot: &'a MappedSnapshot,
    at: usize,
    previous: Option<u64>,
}

impl<'a> Iterator for MappedIter<'a> {
    type Item = Result<(u64, &'a [u8]), LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let snapshot = self.snapshot;
        if self.at >= snapshot.entries {
            return None;
        }
        let at = self.at;
        let id = snapshot.id(at);
        let checked = if self.previous.is_some_and(|previous| previous >= id) {
            Err(LoadError::new(
                snapshot.record_at(at) as u64,
                LoadProblem::Unsorted(id),
            ))
        } else {
            snapshot.entry(at).map(|bytes| (id, bytes))
        };
        // After an error, nothing more.
        self.at = if checked.is_ok() { at + 1 } else { usize::MAX };
        self.previous = Some(id);
        Some(checked)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.snapshot.entries.saturating_sub(self.at)))
    }
}

/// The conflicts of a [`MappedSnapshot`], borrowed from the mapping, each
/// checked as it is read.
#[derive(Debug, Clone)]
pub struct MappedConflicts<'a> {
    snapshot: &'a MappedSnapshot,
    /// Where the next conflict's record starts.
    at: usize,
    /// Conflicts read.
    read: u64,
    previous: Option<MappedConflict<'a>>,
}

impl<'a> MappedConflicts<'a> {
    fn read_next(&mut self) -> Result<MappedConflict<'a>, LoadError> {
        let snapshot = self.snapshot;
        let bytes = snapshot.map.bytes();
        let record = self.at;
        let truncated = |what| LoadError::new(bytes.len() as u64, LoadProblem::Truncated(what));
        let strings = record + CONFLICT_RECORD as usize;
        if strings > bytes.len() {
            return Err(truncated("the conflict records"));
        }
        let id = u64_at(bytes, record);
        let kept_len = u64_at(bytes, record + 8);
        let rejected_len = u64_at(bytes, record + 16);
        let left = (bytes.len() - strings) as u64;
        if kept_len > left || rejected_len > left - kept_len {
            return Err(truncated("a conflict's strings"));
        }
        let rejected_at = strings + kept_len as usize;
        let end = rejected_at + rejected_len as usize;
        let conflict = MappedConflict {
            id,
            kept: &bytes[strings..rejected_at],
            rejected: &bytes[rejected_at..end],
        };
        let entry = snapshot.get(id)?;
        let previous = self.previous.as_ref().map(MappedConflict::as_ref);
        if !format::conflict_follows(previous, conflict.as_ref(), entry) {
            return Err(LoadError::new(record as u64, LoadProblem::BadConflict(id)));
        }
        self.at = end;
        self.previous = Some(conflict);
        Ok(conflict)
    }
}

impl<'a> Iterator for MappedConflicts<'a> {
    type Item = Result<MappedConflict<'a>, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.read >= self.snapshot.header.conflicts {
            return None;
        }
        let next = self.read_next();
        // After an error, nothing more.
        self.read = if next.is_ok() {
            self.read + 1
        } else {
            u64::MAX
        };
        Some(next)
    }
}
