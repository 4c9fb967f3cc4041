//! Forging snapshot files: shared by the library's file tests (through
//! `tests/it/common`) and the CLI's (`cli/tests/cli.rs`, by path).

/// The 64-byte header of a version 1 snapshot file
/// (`docs/snapshot-format.md`) claiming `counts` (entries, string bytes,
/// conflicts, conflicts dropped), its checksum included: for tests that
/// forge files.
pub(crate) fn file_header(counts: [u64; 4]) -> Vec<u8> {
    file_header_of_version(1, counts)
}

/// [`file_header`] of another format version.
pub(crate) fn file_header_of_version(version: u32, counts: [u64; 4]) -> Vec<u8> {
    let mut header = Vec::new();
    header.extend_from_slice(b"ISDBSNAP");
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    for count in counts {
        header.extend_from_slice(&count.to_le_bytes());
    }
    header.extend_from_slice(&[0; 12]);
    let crc = crc32fast::hash(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    header
}
