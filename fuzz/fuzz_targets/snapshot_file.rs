//! The snapshot file reader on arbitrary bytes: it must never panic, and a
//! file it accepts must be exactly what writing the snapshot back in the
//! file's version produces (each version has one encoding of each
//! snapshot); written back in the current version, it reads back the same.
//!
//! The mapped reader runs over every input too, from a file: what
//! `read_from` accepts, `MappedSnapshot` must open, verify and answer
//! identically (entries, lookups, conflicts); what it refuses, the mapped
//! reader's `open` then `verify` must refuse.
//!
//! Random bytes rarely pass the header's checksum, so when the first byte is
//! odd the input is taken as the sections of a file instead, and the checksums
//! are filled in: the fuzzer then reaches the record and content checks. Its
//! second bit picks the version forced, 1 or 2.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use interned_string_db::{MappedSnapshot, Snapshot};
use libfuzzer_sys::fuzz_target;

/// The file each input is written to for the mapped reader: one a
/// process, rewritten (no mapping of it outlives an input).
fn scratch_file() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("isdb-fuzz-mapped-{}.isdb", std::process::id()))
    })
}

/// The mapped reader over `file`: the snapshot's answers if it opens and
/// verifies, checked against `expected` (`read_from`'s answer); an error
/// where `read_from` refused.
fn check_mapped(file: &[u8], expected: Option<&Snapshot>) {
    let path = scratch_file();
    std::fs::write(path, file).unwrap();
    let mapped = MappedSnapshot::open(path).and_then(|m| m.verify().map(|()| m));
    let (mapped, expected) = match (mapped, expected) {
        (Ok(mapped), Some(expected)) => (mapped, expected),
        (Err(_), None) => return,
        (Ok(_), None) => panic!("the mapped reader accepts a file read_from refuses"),
        (Err(e), Some(_)) => panic!("the mapped reader refuses a file read_from accepts: {e}"),
    };
    assert_eq!(mapped.len(), expected.len());
    assert_eq!(mapped.conflicts_dropped(), expected.conflicts_dropped());
    let entries: Vec<(u64, &[u8])> = mapped.iter().map(Result::unwrap).collect();
    assert_eq!(entries, expected.iter().collect::<Vec<_>>());
    for (id, bytes) in expected {
        assert_eq!(mapped.get(id).unwrap(), Some(bytes));
        for near in [id.wrapping_sub(1), id.wrapping_add(1)] {
            assert_eq!(mapped.get(near).unwrap(), expected.get(near));
        }
    }
    let conflicts: Vec<_> = mapped.conflicts().map(|c| c.unwrap().to_conflict()).collect();
    assert_eq!(conflicts, expected.conflicts());
}

/// `data` as a header body (60 bytes, magic and `version` forced) followed
/// by an entries section and a conflicts section split where `data[0]`
/// says, each section followed by its checksum.
fn with_checksums(version: u8, data: &[u8]) -> Vec<u8> {
    let split = data.first().copied().unwrap_or(0) as usize;
    let data = data.get(1..).unwrap_or_default();
    let mut header = [0u8; 60];
    header[..8].copy_from_slice(b"ISDBSNAP");
    header[8] = version;
    let body = data.get(..48).unwrap_or(data);
    header[12..12 + body.len()].copy_from_slice(body);
    let rest = data.get(48..).unwrap_or_default();
    let (entries, conflicts) = rest.split_at(split.min(rest.len()));
    let mut file = Vec::new();
    for section in [&header[..], entries, conflicts] {
        file.extend_from_slice(section);
        file.extend_from_slice(&crc32fast::hash(section).to_le_bytes());
    }
    file
}

fuzz_target!(|data: &[u8]| {
    let file = match data.split_first() {
        Some((mode, rest)) if mode & 1 == 1 => with_checksums(1 + (mode >> 1 & 1), rest),
        _ => data.to_vec(),
    };
    let read = Snapshot::read_from(&file[..]).ok();
    check_mapped(&file, read.as_ref());
    if let Some(snapshot) = read {
        let (mut written, mut current) = (Vec::new(), Vec::new());
        snapshot.write_to(&mut current).unwrap();
        if file[8] == 1 {
            snapshot.write_v1_to(&mut written).unwrap();
            assert_eq!(Snapshot::read_from(&current[..]).unwrap(), snapshot);
        } else {
            written.clone_from(&current);
        }
        assert_eq!(written, file, "a file read must be the snapshot's encoding");
        assert_eq!(Snapshot::merge([&snapshot]), snapshot);
    }
});
