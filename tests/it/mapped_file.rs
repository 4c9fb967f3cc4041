//! The mapped reader (`MappedSnapshot`) against the stream reader
//! (`Snapshot::load`): the same answers for every file both accept, in
//! versions 1 and 2; an error, never a panic, for every truncated, flipped,
//! sparse or crafted file.

use std::fs;
use std::path::{Path, PathBuf};

use interned_string_db::{
    Config, Cursor, InternedStringDb, LoadError, LoadProblem, MappedSnapshot, Snapshot,
};

/// A directory of its own under the target directory, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mapped_file-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The encodings of `snapshot` in versions 1 and 2.
fn encodings(snapshot: &Snapshot) -> [(u32, Vec<u8>); 2] {
    let (mut v1, mut v2) = (Vec::new(), Vec::new());
    snapshot.write_v1_to(&mut v1).unwrap();
    snapshot.write_to(&mut v2).unwrap();
    [(1, v1), (2, v2)]
}

/// A snapshot of `names` pseudo-random names (most of them not UTF-8)
/// interned on 4 NCs, with registered conflicts; `seed` picks them.
fn random_snapshot(seed: u64, names: u64) -> Snapshot {
    let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(4));
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..names {
        let r = next();
        let len = 1 + (r % 40) as usize;
        let name: Vec<u8> = (0..len).map(|k| (r >> (k % 56)) as u8).collect();
        let nc = (r >> 60) as usize % 4;
        db.intern_bytes(nc, &name).unwrap();
        if i % 7 == 0 {
            let id = next() % 64 + 1;
            db.register(nc, id, format!("kept {id}").as_bytes())
                .unwrap();
            db.register((nc + 1) % 4, id, format!("rejected {i}").as_bytes())
                .unwrap();
        }
    }
    db.snapshot()
}

/// Every answer of `mapped`, verified, is `expected`'s.
fn assert_answers_as(mapped: &MappedSnapshot, expected: &Snapshot) {
    mapped.verify().unwrap();
    assert_eq!(mapped.len(), expected.len());
    assert_eq!(mapped.is_empty(), expected.is_empty());
    assert_eq!(mapped.conflicts_dropped(), expected.conflicts_dropped());
    let entries: Vec<(u64, &[u8])> = mapped.iter().map(Result::unwrap).collect();
    assert_eq!(entries, expected.iter().collect::<Vec<_>>());
    for (id, bytes) in expected {
        assert_eq!(mapped.get(id).unwrap(), Some(bytes), "id {id}");
        for absent in [id - 1, id + 1] {
            assert_eq!(
                mapped.get(absent).unwrap(),
                expected.get(absent),
                "id {absent}"
            );
        }
    }
    for absent in [0, 1, u64::MAX, 1 << 50, (1 << 50) + 1] {
        assert_eq!(mapped.get(absent).unwrap(), expected.get(absent));
    }
    let conflicts: Vec<_> = mapped
        .conflicts()
        .map(|c| c.unwrap().to_conflict())
        .collect();
    assert_eq!(conflicts, expected.conflicts());
}

fn open(dir: &Path, name: &str, bytes: &[u8]) -> Result<MappedSnapshot, LoadError> {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    MappedSnapshot::open(&path)
}

/// Opens and verifies `bytes` as a file, touching every answer on the way
/// (which must not panic, whatever the file): the first error, if any.
fn open_and_verify(dir: &Path, bytes: &[u8]) -> Result<(), LoadError> {
    let mapped = open(dir, "file.isdb", bytes)?;
    for (id, _) in mapped.iter().flatten() {
        let _ = mapped.get(id);
    }
    let _ = mapped.conflicts().count();
    let _ = mapped.get(12345);
    mapped.verify()
}

#[test]
fn random_snapshots_answer_as_loaded_in_both_versions() {
    let dir = scratch("random");
    for seed in 0..12 {
        let names = [0, 1, 2, 17, 300, 5_000][seed as usize % 6];
        let snapshot = random_snapshot(seed, names);
        for (version, bytes) in encodings(&snapshot) {
            let path = dir.join(format!("{seed}-v{version}.isdb"));
            fs::write(&path, &bytes).unwrap();
            assert_eq!(Snapshot::load(&path).unwrap(), snapshot);
            let mapped = MappedSnapshot::open(&path).unwrap();
            assert_eq!(mapped.version(), version);
            assert_answers_as(&mapped, &snapshot);
        }
    }
    // `save` writes version 2.
    let snapshot = random_snapshot(99, 100);
    let path = dir.join("saved.isdb");
    snapshot.save(&path).unwrap();
    let mapped = MappedSnapshot::open(&path).unwrap();
    assert_eq!(mapped.version(), 2);
    assert_answers_as(&mapped, &snapshot);
}

/// A delta may hold a conflict on an id it does not hold (delivered by an
/// earlier delta): the kept bytes are then not checked against an entry.
#[test]
fn a_delta_with_conflicts_on_absent_ids() {
    let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(2));
    let mut cursor = Cursor::new();
    db.register(0, 5, b"first").unwrap();
    let _ = db.delta(&mut cursor);
    db.register(1, 5, b"second").unwrap();
    db.intern(0, "more").unwrap();
    let delta = db.delta(&mut cursor);
    assert!(delta.get(5).is_none() && !delta.conflicts().is_empty());
    let dir = scratch("delta");
    for (version, bytes) in encodings(&delta) {
        let mapped = open(&dir, &format!("v{version}.isdb"), &bytes).unwrap();
        assert_answers_as(&mapped, &delta);
    }
}

#[test]
fn every_truncation_is_an_error_of_open_or_verify() {
    let dir = scratch("truncated");
    let snapshot = random_snapshot(7, 40);
    assert!(!snapshot.conflicts().is_empty());
    for (version, bytes) in encodings(&snapshot) {
        for len in 0..bytes.len() {
            let err = open_and_verify(&dir, &bytes[..len])
                .expect_err(&format!("v{version} cut at {len}"));
            assert!(
                matches!(
                    err.problem(),
                    LoadProblem::Truncated(_) | LoadProblem::CountsExceedFile { .. }
                ),
                "v{version} cut at {len}: {err}"
            );
        }
    }
}

#[test]
fn every_flipped_bit_is_an_error_of_open_or_verify() {
    let dir = scratch("flipped");
    let snapshot = random_snapshot(3, 17);
    assert!(!snapshot.conflicts().is_empty());
    for (version, bytes) in encodings(&snapshot) {
        for at in 0..bytes.len() {
            for bit in [0, 3, 7] {
                let mut bad = bytes.clone();
                bad[at] ^= 1 << bit;
                let stream = Snapshot::read_from(&bad[..]).expect_err("a flipped file was read");
                let mapped = open_and_verify(&dir, &bad)
                    .expect_err(&format!("v{version}, byte {at} bit {bit}: {stream}"));
                assert!(!mapped.to_string().is_empty());
            }
        }
    }
}

#[test]
fn an_empty_file_a_directory_and_a_missing_file() {
    let dir = scratch("empty");
    let err = open(&dir, "empty.isdb", b"").unwrap_err();
    assert!(
        matches!(err.problem(), LoadProblem::Truncated(_)) && err.offset() == 0,
        "{err}"
    );
    let err = open(&dir, "zip", b"PK\x03\x04 not a snapshot").unwrap_err();
    assert!(matches!(err.problem(), LoadProblem::BadMagic), "{err}");
    for path in [dir.clone(), dir.join("missing"), PathBuf::from("/dev/null")] {
        let err = MappedSnapshot::open(&path).unwrap_err();
        assert!(
            matches!(err.problem(), LoadProblem::Io(_)) && err.offset() == 0,
            "{}: {err}",
            path.display()
        );
    }
    let mapped = open(&dir, "nothing.isdb", &encodings(&Snapshot::default())[1].1).unwrap();
    assert_answers_as(&mapped, &Snapshot::default());
    assert_eq!(mapped.get(1).unwrap(), None);
}

/// A version 2 file (checksums right) whose header claims `counts` over
/// `entries` and `conflicts` sections.
fn forge_v2(counts: [u64; 4], entries: &[u8], conflicts: &[u8]) -> Vec<u8> {
    crate::common::forged_file(
        crate::common::file_header_of_version(2, counts),
        entries,
        conflicts,
    )
}

use crate::common::entry_record as record;

/// Ends out of order or past the strings, and ids out of order: `get` and
/// iteration report what they read, `verify` everything, as `load` does.
#[test]
fn crafted_records_are_errors_where_they_are_read() {
    let dir = scratch("crafted");
    // Entry 2 ends before entry 1 does.
    let entries = [record(1, 2), record(2, 1), record(3, 3), b"abc".to_vec()].concat();
    let file = forge_v2([3, 3, 0, 0], &entries, &[]);
    let mapped = open(&dir, "backwards.isdb", &file).unwrap();
    assert_eq!(mapped.get(1).unwrap(), Some(&b"ab"[..]));
    let err = mapped.get(2).unwrap_err();
    assert!(matches!(err.problem(), LoadProblem::LengthsDisagree) && err.offset() == 88);
    assert_eq!(
        mapped.get(3).unwrap(),
        Some(&b"bc"[..]),
        "from entry 2's end"
    );
    assert_eq!(mapped.iter().filter(Result::is_err).count(), 1);
    let verified = mapped.verify().unwrap_err();
    let loaded = Snapshot::read_from(&file[..]).unwrap_err();
    assert_eq!(
        (verified.offset(), verified.to_string()),
        (loaded.offset(), loaded.to_string())
    );
    // An end past the strings, and one short of them.
    for (ends, at) in [([1, 9], 88), ([1, 2], 96)] {
        let entries = [record(1, ends[0]), record(2, ends[1]), b"abc".to_vec()].concat();
        let file = forge_v2([2, 3, 0, 0], &entries, &[]);
        let mapped = open(&dir, "ends.isdb", &file).unwrap();
        let err = mapped.verify().unwrap_err();
        assert!(
            matches!(err.problem(), LoadProblem::LengthsDisagree),
            "{err}"
        );
        assert_eq!(err.offset(), at);
    }
    // Ids out of order: iteration stops at the first.
    let entries = [record(5, 1), record(3, 2), b"ab".to_vec()].concat();
    let mapped = open(
        &dir,
        "unsorted.isdb",
        &forge_v2([2, 2, 0, 0], &entries, &[]),
    )
    .unwrap();
    let read: Vec<_> = mapped.iter().collect();
    assert_eq!(read.len(), 2);
    assert!(matches!(
        read[1].as_ref().unwrap_err().problem(),
        LoadProblem::Unsorted(3)
    ));
    assert!(matches!(
        mapped.verify().unwrap_err().problem(),
        LoadProblem::Unsorted(3)
    ));
    // A conflict whose strings run past the file.
    let entries = [record(1, 1), b"a".to_vec()].concat();
    let conflict = [
        1u64.to_le_bytes(),
        1u64.to_le_bytes(),
        (1u64 << 40).to_le_bytes(),
    ]
    .concat();
    let mapped = open(
        &dir,
        "long.isdb",
        &forge_v2([1, 1, 1, 0], &entries, &conflict),
    )
    .unwrap();
    let err = mapped.conflicts().next().unwrap().unwrap_err();
    assert!(matches!(err.problem(), LoadProblem::Truncated(_)), "{err}");
}

const TIB: u64 = 1 << 40;

/// Headers claiming what a 1 TiB sparse file holds, in both versions: the
/// mapped reader opens (version 2: the counts fit) or refuses (version 1:
/// its records are read), answers from the zeros without reading the hole,
/// and `verify` refuses at the first records.
#[test]
fn sparse_files_claiming_huge_counts() {
    let dir = scratch("sparse");
    let rest = TIB - 64 - 8;
    let claims = [
        ("entries", [rest / 16, 0, 0, 0]),
        ("string bytes", [0, rest, 0, 0]),
        ("conflicts", [0, 0, rest / 24, 0]),
    ];
    for (what, counts) in claims {
        for version in [1, 2] {
            let path = dir.join(format!("{}-v{version}", what.replace(' ', "-")));
            fs::write(
                &path,
                crate::common::file_header_of_version(version, counts),
            )
            .unwrap();
            let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
            if let Err(e) = file.set_len(TIB) {
                eprintln!("skipped: no sparse files here: {e}");
                return;
            }
            let err = match MappedSnapshot::open(&path) {
                Ok(mapped) => {
                    assert_eq!(mapped.get(get_some_id()).unwrap(), None);
                    assert!(mapped.iter().take(3).any(|e| e.is_err()) || counts[0] == 0);
                    mapped.verify().unwrap_err()
                }
                Err(err) => err,
            };
            assert!(
                crate::common::found_in_a_hole(err.problem()),
                "{what}, v{version}: {err}"
            );
            fs::remove_file(&path).unwrap();
        }
    }
}

fn get_some_id() -> u64 {
    interned_string_db::get_id(b"model_3/layer_41/tensor_1207")
}
