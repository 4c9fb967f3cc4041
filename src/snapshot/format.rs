//! The rules of `docs/snapshot-format.md` that every reader checks the
//! same way: the header, an entry record's end offset, a conflict's place.
//! The stream reader (`file.rs`) and the mapped reader (`mapped.rs`) both
//! call these, so they accept and refuse the same files, and report what
//! breaks a rule as a [`LoadError`]: the problem ([`LoadProblem`]), where
//! it was found and in which file.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::conflict::ConflictRef;

/// The file's first 8 bytes.
pub(super) const MAGIC: [u8; 8] = *b"ISDBSNAP";
/// Version 1: entry records of id and string length.
pub(super) const VERSION_1: u32 = 1;
/// Version 2 (what this crate writes): entry records of id and end offset,
/// so that a reader finds a string from its record and the one before it.
pub(super) const VERSION_2: u32 = 2;
/// Bytes before the first section: magic, version, flags, four counts,
/// reserved zeros, and the header's checksum.
pub(super) const HEADER_LEN: u64 = 64;
/// An entry record: id, and length (version 1) or end offset (version 2).
pub(super) const ENTRY_RECORD: u64 = 16;
/// A conflict record before its two strings: id and two lengths.
pub(super) const CONFLICT_RECORD: u64 = 24;
/// A section's checksum.
pub(super) const CHECKSUM_LEN: u64 = 4;

/// What a file's header says, once checked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub(super) version: u32,
    pub(super) entries: u64,
    pub(super) string_bytes: u64,
    pub(super) conflicts: u64,
    pub(super) conflicts_dropped: u64,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// The little-endian `u64` at `at` in `bytes`, which must hold it.
pub(super) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

impl Header {
    /// Checks the header in `bytes`, a file's first bytes (all of it if
    /// shorter than a header), in the order of the format's rules: the
    /// magic (a short file that does not start like a snapshot is not one,
    /// rather than a truncated one), the length, the version, the
    /// checksum, then the flags and reserved bytes.
    pub(super) fn parse(bytes: &[u8]) -> Result<Header, LoadError> {
        let error = LoadError::new;
        let magic = &bytes[..bytes.len().min(MAGIC.len())];
        if !MAGIC.starts_with(magic) {
            return Err(error(0, LoadProblem::BadMagic));
        }
        let Some(bytes) = bytes.get(..HEADER_LEN as usize) else {
            return Err(error(
                bytes.len() as u64,
                LoadProblem::Truncated("the header"),
            ));
        };
        let version = u32_at(bytes, 8);
        if version != VERSION_1 && version != VERSION_2 {
            return Err(error(8, LoadProblem::UnsupportedVersion(version)));
        }
        let stored = u32_at(bytes, 60);
        let computed = crc32fast::hash(&bytes[..60]);
        if stored != computed {
            return Err(error(
                60,
                LoadProblem::ChecksumMismatch {
                    section: "header",
                    stored,
                    computed,
                },
            ));
        }
        if u32_at(bytes, 12) != 0 {
            return Err(error(12, LoadProblem::UnknownFlags));
        }
        if bytes[48..60] != [0; 12] {
            return Err(error(48, LoadProblem::UnknownFlags));
        }
        Ok(Header {
            version,
            entries: u64_at(bytes, 16),
            string_bytes: u64_at(bytes, 24),
            conflicts: u64_at(bytes, 32),
            conflicts_dropped: u64_at(bytes, 40),
        })
    }

    /// Checks that the counts fit a file of `length` bytes: the header, the
    /// records, the strings, the conflicts' records and the two sections'
    /// checksums (`CountsExceedFile`, offset 16).
    pub(super) fn check_fits(&self, length: u64) -> Result<(), LoadError> {
        let needed = [
            self.entries.checked_mul(ENTRY_RECORD),
            Some(self.string_bytes),
            self.conflicts.checked_mul(CONFLICT_RECORD),
            Some(HEADER_LEN + 2 * CHECKSUM_LEN),
        ]
        .into_iter()
        .try_fold(0u64, |sum, part| sum.checked_add(part?))
        .unwrap_or(u64::MAX);
        if needed > length {
            return Err(LoadError::new(
                16,
                LoadProblem::CountsExceedFile { needed, length },
            ));
        }
        Ok(())
    }

    /// The end offset, in the strings, of the entry whose record's second
    /// field is `field`, following an entry that ends at `previous`: in
    /// version 1 the field is a length, in version 2 the end itself. `None`
    /// if the entry would end before `previous` or past the header's string
    /// bytes (`LengthsDisagree`).
    pub(super) fn record_end(&self, previous: u64, field: u64) -> Option<u64> {
        let end = if self.version == VERSION_1 {
            previous.checked_add(field)?
        } else {
            field
        };
        (previous <= end && end <= self.string_bytes).then_some(end)
    }
}

/// Whether `conflict` may follow `previous` in a file whose entry for its
/// id is `entry`: conflicts strictly increase by (id, kept, rejected), kept
/// differs from rejected, and kept is the entry's string when the file
/// holds the id.
pub(super) fn conflict_follows(
    previous: Option<ConflictRef<'_>>,
    conflict: ConflictRef<'_>,
    entry: Option<&[u8]>,
) -> bool {
    previous.is_none_or(|p| {
        (p.id, p.kept, p.rejected) < (conflict.id, conflict.kept, conflict.rejected)
    }) && entry.is_none_or(|entry| entry == conflict.kept)
        && conflict.kept != conflict.rejected
}

/// Why a snapshot file could not be read: the problem, the byte offset
/// where it was found and, when it was read from a path
/// ([`Snapshot::load`](crate::Snapshot::load)), the path, which its `Display` names first:
/// `deltas/flush_2.isdb: at byte 16: the header's counts need ...`.
#[derive(Debug)]
pub struct LoadError {
    path: Option<PathBuf>,
    offset: u64,
    problem: LoadProblem,
}

/// What is wrong with a snapshot file.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadProblem {
    /// Reading failed (or the file could not be opened: offset 0).
    Io(io::Error),
    /// The file ends inside the named part.
    Truncated(&'static str),
    /// The first 8 bytes are not `ISDBSNAP`: not a snapshot file.
    BadMagic,
    /// A format version this crate does not read.
    UnsupportedVersion(u32),
    /// Flags or reserved bytes this version does not define are set.
    UnknownFlags,
    /// The named section's checksum does not match its bytes.
    ChecksumMismatch {
        /// `header`, `entries` or `conflicts`.
        section: &'static str,
        /// The checksum stored in the file.
        stored: u32,
        /// The checksum of the bytes read.
        computed: u32,
    },
    /// The header's counts need more bytes than the file has.
    CountsExceedFile {
        /// Bytes the counts imply, at least.
        needed: u64,
        /// The file's length.
        length: u64,
    },
    /// The entries' lengths do not add up to the header's string bytes.
    LengthsDisagree,
    /// An id not greater than the one before it: entries must be sorted by
    /// id, each once.
    Unsorted(u64),
    /// A conflict out of order, repeated, rejecting its own kept bytes, or
    /// whose kept bytes are not the entry's.
    BadConflict(u64),
    /// Bytes after the last section.
    TrailingBytes,
    /// Memory for what the file holds could not be allocated: it was read
    /// as far as the offset, with memory growing as the data arrived.
    OutOfMemory {
        /// The bytes asked for, beyond those already held, that could not
        /// be allocated.
        bytes: usize,
    },
}

impl LoadError {
    /// `problem`, found at `offset`.
    pub(super) fn new(offset: u64, problem: LoadProblem) -> LoadError {
        LoadError {
            path: None,
            offset,
            problem,
        }
    }

    /// The same error, met reading the file at `path`.
    pub(super) fn in_file(self, path: &Path) -> LoadError {
        LoadError {
            path: Some(path.to_owned()),
            ..self
        }
    }

    /// The file the snapshot was read from: `Some` from [`Snapshot::load`](crate::Snapshot::load)
    /// and [`MappedSnapshot::open`](super::MappedSnapshot::open), `None` from
    /// [`Snapshot::read_from`](crate::Snapshot::read_from) (a stream has no path) and from a mapped
    /// snapshot's lookups (its caller holds the path it opened).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The byte offset at which the problem was found.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The problem.
    pub fn problem(&self) -> &LoadProblem {
        &self.problem
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        write!(f, "at byte {}: ", self.offset)?;
        match &self.problem {
            LoadProblem::Io(e) => write!(f, "{e}"),
            LoadProblem::Truncated(what) => write!(f, "the file ends inside {what}"),
            LoadProblem::BadMagic => write!(f, "not a snapshot file (bad magic)"),
            LoadProblem::UnsupportedVersion(v) => {
                write!(
                    f,
                    "format version {v} is not supported (this reads {VERSION_1} and {VERSION_2})"
                )
            }
            LoadProblem::UnknownFlags => write!(f, "flags or reserved bytes are set"),
            LoadProblem::ChecksumMismatch {
                section,
                stored,
                computed,
            } => write!(
                f,
                "the {section} section is corrupt (checksum {stored:#010x} stored, {computed:#010x} computed)"
            ),
            LoadProblem::CountsExceedFile { needed, length } => write!(
                f,
                "the header's counts need at least {needed} bytes, but the file has {length}"
            ),
            LoadProblem::LengthsDisagree => write!(
                f,
                "the entries' lengths do not add up to the header's string bytes"
            ),
            LoadProblem::Unsorted(id) => write!(f, "entry id {id} is out of order or repeated"),
            LoadProblem::BadConflict(id) => write!(
                f,
                "conflict on id {id} is out of order, repeated, or disagrees with its entry"
            ),
            LoadProblem::TrailingBytes => write!(f, "bytes follow the last section"),
            LoadProblem::OutOfMemory { bytes } => write!(
                f,
                "out of memory: {bytes} bytes more for what the file holds could not be allocated"
            ),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.problem {
            LoadProblem::Io(e) => Some(e),
            _ => None,
        }
    }
}
