//! Snapshot files: round trips, atomic saves, merges, and every kind of bad
//! file (each an error naming the problem and its offset, never a panic).

use std::fs;
use std::path::PathBuf;

use interned_string_db::{Config, Conflict, InternedStringDb, LoadError, LoadProblem, Snapshot};

/// A directory of its own under the target directory, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("snapshot_file-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Entries on several NCs, non-UTF-8 bytes, and conflicts of both kinds.
fn sample() -> Snapshot {
    let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(4));
    for i in 0..300 {
        db.intern(i % 4, &format!("model_{}/layer_{i}", i % 5))
            .unwrap();
    }
    db.intern_bytes(2, &[0xff, 0xfe, 0]).unwrap();
    db.register(1, 7, b"seven").unwrap();
    db.register(3, 7, b"sept").unwrap();
    db.register(1, 7, b"siete").unwrap();
    let snapshot = db.snapshot();
    assert_eq!(snapshot.conflicts().len(), 2);
    snapshot
}

fn encoded(snapshot: &Snapshot) -> Vec<u8> {
    let mut bytes = Vec::new();
    snapshot.write_to(&mut bytes).unwrap();
    bytes
}

fn read_err(bytes: &[u8]) -> LoadError {
    Snapshot::read_from(bytes).expect_err("a bad file was read")
}

/// A file whose sections are as given, with correct checksums: to reach the
/// checks behind them.
fn forge(header_counts: [u64; 4], entries: &[u8], conflicts: &[u8]) -> Vec<u8> {
    crate::common::forged_file(
        crate::common::file_header(header_counts),
        entries,
        conflicts,
    )
}

use crate::common::entry_record as record;

#[test]
fn round_trip_through_a_stream_and_a_file() {
    let snapshot = sample();
    let bytes = encoded(&snapshot);
    assert_eq!(Snapshot::read_from(&bytes[..]).unwrap(), snapshot);
    let dir = scratch("round-trip");
    let path = dir.join("dict.isdb");
    snapshot.save(&path).unwrap();
    assert_eq!(Snapshot::load(&path).unwrap(), snapshot);
    assert_eq!(
        fs::read(&path).unwrap(),
        bytes,
        "save writes what write_to does"
    );
    let empty = Snapshot::default();
    assert_eq!(Snapshot::read_from(&encoded(&empty)[..]).unwrap(), empty);
}

#[test]
fn get_str_tells_a_name_not_utf8_from_an_absent_one() {
    let binary = interned_string_db::get_id(&[0xff, 0xfe, 0]);
    let text = interned_string_db::get_id(b"model_0/layer_0");
    let absent = interned_string_db::get_id(b"never interned");
    let loaded = Snapshot::read_from(&encoded(&sample())[..]).unwrap();
    for snapshot in [sample(), loaded] {
        assert_eq!(snapshot.get(binary), Some(&[0xff, 0xfe, 0][..]));
        let err = snapshot.get_str(binary).unwrap().unwrap_err();
        assert_eq!(err.valid_up_to(), 0, "0xff starts no UTF-8 sequence");
        assert_eq!(snapshot.get_str(text), Some(Ok("model_0/layer_0")));
        assert_eq!(snapshot.get_str(absent), None);
    }
}

#[test]
fn save_replaces_atomically_and_leaves_no_temporary() {
    let dir = scratch("atomic");
    let path = dir.join("dict.isdb");
    Snapshot::default().save(&path).unwrap();
    let snapshot = sample();
    snapshot.save(&path).unwrap();
    assert_eq!(Snapshot::load(&path).unwrap(), snapshot);
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["dict.isdb"], "no temporary file is left");
    // Into a directory that does not exist: an error, nothing created.
    assert!(snapshot.save(dir.join("missing/dict.isdb")).is_err());
    // Over a directory: the rename fails, and the temporary is removed.
    fs::create_dir(dir.join("a-directory")).unwrap();
    assert!(snapshot.save(dir.join("a-directory")).is_err());
    let mut names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["a-directory", "dict.isdb"]);
}

/// `save` replaces only a regular file: a device, a FIFO, a symbolic link
/// (to a regular file, here) or a directory at the path is an error, and is
/// still there, unchanged, afterwards; no temporary file is left.
#[test]
fn save_refuses_what_is_not_a_regular_file() {
    use std::io::ErrorKind;
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("not-regular");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success(), "mkfifo");
    let target = dir.join("target.isdb");
    fs::write(&target, "old").unwrap();
    let link = dir.join("link.isdb");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let sub = dir.join("sub");
    fs::create_dir(&sub).unwrap();
    let null = PathBuf::from("/dev/null");
    let snapshot = sample();
    for (path, kind, says) in [
        (&null, ErrorKind::InvalidInput, "not a regular file"),
        (&fifo, ErrorKind::InvalidInput, "not a regular file"),
        (&link, ErrorKind::InvalidInput, "symbolic link"),
        (&sub, ErrorKind::IsADirectory, "directory"),
    ] {
        let err = snapshot.save(path).unwrap_err();
        assert_eq!(err.kind(), kind, "{}: {err}", path.display());
        assert!(err.to_string().contains(says), "{}: {err}", path.display());
    }
    let kind = |path: &PathBuf| fs::symlink_metadata(path).unwrap().file_type();
    assert!(kind(&null).is_char_device(), "/dev/null is still a device");
    assert!(kind(&fifo).is_fifo(), "the FIFO is still one");
    assert!(kind(&link).is_symlink(), "the link is still one");
    assert_eq!(fs::read_to_string(&target).unwrap(), "old");
    assert!(kind(&sub).is_dir());
    let mut names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["fifo", "link.isdb", "sub", "target.isdb"]);
    // A regular file is still replaced.
    snapshot.save(&target).unwrap();
    assert_eq!(Snapshot::load(&target).unwrap(), snapshot);
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = encoded(&sample());
    for len in 0..bytes.len() {
        let err = read_err(&bytes[..len]);
        assert!(
            matches!(err.problem(), LoadProblem::Truncated(_)),
            "cut at {len}: {err}"
        );
        assert!(err.offset() <= len as u64, "cut at {len}: {err}");
    }
}

#[test]
fn every_corrupted_byte_is_an_error() {
    let bytes = encoded(&sample());
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x20;
        let err = read_err(&bad);
        assert!(!err.to_string().is_empty());
        match at {
            0..=7 => assert!(
                matches!(err.problem(), LoadProblem::BadMagic),
                "{at}: {err}"
            ),
            8..=11 => assert!(
                matches!(err.problem(), LoadProblem::UnsupportedVersion(_)),
                "{at}: {err}"
            ),
            _ => {} // a checksum, or a count that no longer fits the data
        }
    }
}

#[test]
fn magic_version_flags_and_trailing_bytes() {
    let good = encoded(&sample());
    let err = read_err(b"PK\x03\x04 definitely a zip file, not a snapshot.........");
    assert!(matches!(err.problem(), LoadProblem::BadMagic) && err.offset() == 0);
    let mut v3 = good.clone();
    v3[8] = 3;
    let err = read_err(&v3);
    assert!(matches!(err.problem(), LoadProblem::UnsupportedVersion(3)));
    assert_eq!(err.offset(), 8);
    assert!(err.to_string().contains("version 3"), "{err}");
    let mut flagged = forge([0; 4], &[], &[]);
    flagged[12] = 1;
    let header_crc = crc32fast::hash(&flagged[..60]);
    flagged[60..64].copy_from_slice(&header_crc.to_le_bytes());
    let err = read_err(&flagged);
    assert!(matches!(err.problem(), LoadProblem::UnknownFlags) && err.offset() == 12);
    let mut trailing = good.clone();
    trailing.push(0);
    let err = read_err(&trailing);
    assert!(matches!(err.problem(), LoadProblem::TrailingBytes));
    assert_eq!(err.offset(), good.len() as u64);
}

#[test]
fn checksum_errors_name_the_section_and_offset() {
    let mut bad = encoded(&Snapshot::default());
    bad[65] ^= 1; // inside the (empty) entries section's checksum
    let err = read_err(&bad);
    assert!(
        matches!(
            err.problem(),
            LoadProblem::ChecksumMismatch {
                section: "entries",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.offset(), 64);
    assert!(err
        .to_string()
        .starts_with("at byte 64: the entries section is corrupt"));
}

#[test]
fn absurd_counts_allocate_nothing_and_fail() {
    // Claims 2^60 entries of 2^62 bytes: a reader that reserved for the
    // claim would abort the process here.
    let file = forge([1 << 60, 1 << 62, 1 << 59, 0], &[], &[]);
    let err = read_err(&file);
    assert!(matches!(err.problem(), LoadProblem::Truncated(_)), "{err}");
    assert_eq!(
        err.offset(),
        72,
        "the first record's id is read, not its length"
    );
    let dir = scratch("absurd");
    let path = dir.join("absurd.isdb");
    fs::write(&path, &file).unwrap();
    let err = Snapshot::load(&path).unwrap_err();
    assert!(
        matches!(err.problem(), LoadProblem::CountsExceedFile { .. }),
        "{err}"
    );
    assert_eq!(err.offset(), 16);
    let err = Snapshot::load(dir.join("missing.isdb")).unwrap_err();
    assert!(matches!(err.problem(), LoadProblem::Io(_)) && err.offset() == 0);
}

#[test]
fn load_errors_name_their_file() {
    let dir = scratch("named");
    let path = dir.join("flush_2.isdb");
    let mut bytes = encoded(&sample());
    bytes[20] ^= 1; // the header's entry count: its checksum fails
    fs::write(&path, &bytes).unwrap();
    let err = Snapshot::load(&path).unwrap_err();
    assert_eq!(err.path(), Some(path.as_path()));
    assert!(
        matches!(err.problem(), LoadProblem::ChecksumMismatch { .. }),
        "{err}"
    );
    let shown = err.to_string();
    let prefix = format!("{}: at byte {}: ", path.display(), err.offset());
    assert!(shown.starts_with(&prefix), "{shown}");
    assert_eq!(shown.matches("flush_2.isdb").count(), 1, "{shown}");

    let missing = dir.join("missing.isdb");
    let err = Snapshot::load(&missing).unwrap_err();
    assert_eq!(err.path(), Some(missing.as_path()));
    assert!(err
        .to_string()
        .starts_with(&format!("{}: at byte 0: ", missing.display())));
    // The mapped reader's open names its file too.
    let err = interned_string_db::MappedSnapshot::open(&path).unwrap_err();
    assert_eq!(err.path(), Some(path.as_path()), "{err}");

    // A stream has no path.
    let err = read_err(&bytes);
    assert_eq!(err.path(), None);
    assert!(err.to_string().starts_with("at byte "), "{err}");
}

#[test]
fn contents_must_follow_the_rules() {
    // Ids out of order.
    let entries = [record(5, 1), record(3, 1), b"ab".to_vec()].concat();
    let err = read_err(&forge([2, 2, 0, 0], &entries, &[]));
    assert!(matches!(err.problem(), LoadProblem::Unsorted(3)) && err.offset() == 80);
    // A repeated id.
    let entries = [record(5, 1), record(5, 1), b"ab".to_vec()].concat();
    assert!(matches!(
        read_err(&forge([2, 2, 0, 0], &entries, &[])).problem(),
        LoadProblem::Unsorted(5)
    ));
    // Lengths that overrun, or fall short of, the string bytes.
    for (lens, total) in [([1, 5], 2), ([1, 0], 2), ([u64::MAX, 2], 2)] {
        let entries = [record(1, lens[0]), record(2, lens[1]), b"ab".to_vec()].concat();
        let err = read_err(&forge([2, total, 0, 0], &entries, &[]));
        assert!(
            matches!(err.problem(), LoadProblem::LengthsDisagree),
            "{err}"
        );
    }
    // A conflict whose kept bytes are not the entry's.
    let entries = [record(1, 1), b"a".to_vec()].concat();
    let conflict = [1u64.to_le_bytes(), 1u64.to_le_bytes(), 1u64.to_le_bytes()].concat();
    let conflicts = [conflict.clone(), b"zy".to_vec()].concat();
    let err = read_err(&forge([1, 1, 1, 0], &entries, &conflicts));
    assert!(
        matches!(err.problem(), LoadProblem::BadConflict(1)),
        "{err}"
    );
    // Kept equal to rejected.
    let conflicts = [conflict, b"aa".to_vec()].concat();
    assert!(matches!(
        read_err(&forge([1, 1, 1, 0], &entries, &conflicts)).problem(),
        LoadProblem::BadConflict(1)
    ));
}

#[test]
fn merge_keeps_the_first_input_and_reports_conflicts() {
    let host = |names: &[&str]| {
        let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(2));
        for (i, name) in names.iter().enumerate() {
            db.intern(i % 2, name).unwrap();
        }
        db.snapshot()
    };
    let a = host(&["shared", "only a"]);
    let b = host(&["shared", "only b"]);
    let narrowed: InternedStringDb =
        InternedStringDb::with_config(Config::new().ncs(1).narrow_id_mask_for_tests(0));
    narrowed.intern(0, "one").unwrap();
    let c = narrowed.snapshot(); // id 1 = "one"
    let mut d_db: InternedStringDb =
        InternedStringDb::with_config(Config::new().ncs(1).narrow_id_mask_for_tests(0));
    d_db.intern(0, "uno").unwrap();
    d_db.intern(0, "eins").unwrap(); // d's own conflict
    let d = d_db.snapshot();
    d_db.reset();

    let merged = Snapshot::merge([&a, &b, &c, &d]);
    assert_eq!(merged.len(), 4);
    assert_eq!(
        merged.get_str(1),
        Some(Ok("one")),
        "the first input's bytes"
    );
    for name in ["shared", "only a", "only b"] {
        assert_eq!(
            merged.get_str(interned_string_db::get_id(name.as_bytes())),
            Some(Ok(name))
        );
    }
    let conflict = |rejected: &str| Conflict {
        id: 1,
        kept: b"one"[..].into(),
        rejected: rejected.as_bytes().into(),
    };
    assert_eq!(merged.conflicts(), &[conflict("eins"), conflict("uno")]);
    assert_eq!(Snapshot::merge([&a]), a);
    assert_eq!(Snapshot::merge([]), Snapshot::default());
}
