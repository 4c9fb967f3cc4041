//! The rules of `docs/snapshot-format.md` that every reader checks the
//! same way: the header, an entry record's end offset, a conflict's place.
//! The stream reader (`file.rs`) and the mapped reader (`mapped.rs`) both
//! call these, so they accept and refuse the same files.

use super::file::{LoadError, LoadProblem};
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
