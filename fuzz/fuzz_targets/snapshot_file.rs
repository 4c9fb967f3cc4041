//! The snapshot file reader on arbitrary bytes: it must never panic, and a
//! file it accepts must be exactly what writing the snapshot back in the
//! file's version produces (each version has one encoding of each
//! snapshot); written back in the current version, it reads back the same.
//!
//! Random bytes rarely pass the header's checksum, so when the first byte is
//! odd the input is taken as the sections of a file instead, and the checksums
//! are filled in: the fuzzer then reaches the record and content checks. Its
//! second bit picks the version forced, 1 or 2.

#![no_main]

use interned_string_db::Snapshot;
use libfuzzer_sys::fuzz_target;

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
    if let Ok(snapshot) = Snapshot::read_from(&file[..]) {
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
