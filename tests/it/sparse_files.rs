//! Snapshot files whose header claims more than memory holds: a sparse file
//! (1 TiB long, 64 bytes on disk) passes the check of the header's counts
//! against the file's length, so the reader must not reserve what the counts
//! claim. The binary's allocator (`crate::alloc`) records the largest
//! allocation the reading thread asks for, and can refuse large ones (a
//! machine out of memory), which must be a `LoadError`, never an abort.

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};

use crate::alloc::{LARGEST, WATCHED, WATCHED_REFUSED_FROM};
use interned_string_db::{LoadError, LoadProblem, Snapshot};

/// Loads `path` on this thread, refusing allocations from `refused_from`
/// bytes: the result, and the largest allocation asked for.
fn load_watched(path: &Path, refused_from: usize) -> (Result<Snapshot, LoadError>, usize) {
    LARGEST.with(|l| l.set(0));
    WATCHED_REFUSED_FROM.with(|r| r.set(refused_from));
    WATCHED.with(|w| w.set(true));
    let result = Snapshot::load(path);
    WATCHED.with(|w| w.set(false));
    (result, LARGEST.with(Cell::get))
}

const TIB: u64 = 1 << 40;

/// `name` in a directory of its own: `bytes`, then zeros (a hole) to
/// `length` bytes; `None`, with a message, if the filesystem refuses.
fn sparse(name: &str, bytes: &[u8], length: u64) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sparse_files");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    if let Err(e) = file.set_len(length) {
        eprintln!("skipped: this filesystem cannot make a {length}-byte sparse file: {e}");
        let _ = fs::remove_file(&path);
        return None;
    }
    Some(path)
}

/// Headers that claim as much as a 1 TiB file can hold, of each kind: the
/// reader fails on the zeros of the hole, having allocated almost nothing.
#[test]
fn counts_a_sparse_file_claims_allocate_nothing() {
    let header_and_checksums = 64 + 2 * 4;
    let claims = [
        ("entries", [(TIB - header_and_checksums) / 16, 0, 0, 0]),
        ("string bytes", [0, TIB - header_and_checksums, 0, 0]),
        ("conflicts", [0, 0, (TIB - header_and_checksums) / 24, 0]),
    ];
    for (what, counts) in claims {
        let Some(path) = sparse(
            &format!("claims-{}", what.replace(' ', "-")),
            &crate::common::file_header(counts),
            TIB,
        ) else {
            return;
        };
        let (result, largest) = load_watched(&path, usize::MAX);
        let err = result.expect_err(what);
        assert!(
            crate::common::found_in_a_hole(err.problem()),
            "{what}: {err}"
        );
        assert!(
            largest <= 1 << 20,
            "{what}: an allocation of {largest} bytes"
        );
        fs::remove_file(&path).unwrap();
    }
}

/// A file whose records do add up, over a hole of zeros that arrive as
/// string bytes: the vectors grow as the bytes arrive, and when memory runs
/// out the load is an error, not an abort.
#[test]
fn running_out_of_memory_while_reading_is_an_error() {
    const STRINGS: u64 = 64 << 20;
    let mut bytes = crate::common::file_header([1, STRINGS, 0, 0]);
    bytes.extend_from_slice(&1u64.to_le_bytes());
    bytes.extend_from_slice(&STRINGS.to_le_bytes());
    let Some(path) = sparse("zeros", &bytes, 64 + 16 + STRINGS + 8) else {
        return;
    };
    let (result, largest) = load_watched(&path, 16 << 20);
    let err = result.expect_err("more than memory holds");
    assert!(
        matches!(err.problem(), LoadProblem::OutOfMemory { .. }),
        "{err}"
    );
    assert!(largest >= 16 << 20, "the refusal was reached: {largest}");
    // With the memory, the bytes arrive and the entries' checksum (of the
    // header's forger, who wrote none) is what fails.
    let (result, _) = load_watched(&path, usize::MAX);
    let err = result.expect_err("no checksum");
    assert!(
        matches!(err.problem(), LoadProblem::ChecksumMismatch { .. }),
        "{err}"
    );
    fs::remove_file(&path).unwrap();
}
