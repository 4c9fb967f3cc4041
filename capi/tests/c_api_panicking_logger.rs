//! Nothing the C API does may abort, even when the installed `log` logger
//! panics on every record: each function answers its status (the panic is
//! caught at the boundary, and the boundary's own report of it must not
//! panic again inside an `extern "C"` function, which aborts). And the
//! boundary's reports of bad input swallow the logger's panic, so that a bad
//! input still answers its own status (`NRT_INVALID`, `NRT_RESOURCE`), not
//! `NRT_FAILURE`: only a panic inside the operation itself (a conflict being
//! logged) is `NRT_FAILURE`.
//!
//! In its own test binary because it installs a process-wide logger; one
//! test function for the calls, so that the quiet panic hook is never raced.

use std::ffi::{c_char, CStr, CString};
use std::ptr::{null, null_mut};

use interned_string_db::{get_id, Snapshot};
use interned_string_db_capi::batch::*;
use interned_string_db_capi::db::*;
use interned_string_db_capi::shard::*;
use interned_string_db_capi::snapshot::*;
use interned_string_db_capi::NRT_STATUS::{self, *};

/// A logger that panics on every record.
struct PanickingLogger;

impl log::Log for PanickingLogger {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        panic!("logger panicked on: {}", record.args());
    }
    fn flush(&self) {}
}

fn c(s: &CStr) -> *const c_char {
    s.as_ptr()
}

/// A directory of its own under the target directory, emptied.
fn scratch() -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c-api-panicking-logger");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as a C string.
fn c_path(path: &std::path::Path) -> CString {
    CString::new(path.to_str().unwrap()).unwrap()
}

/// The number of entries in a shard, through `get_entries`.
///
/// # Safety
///
/// `shard` is live.
unsafe fn entries_of(shard: *mut InternedDataShard) -> usize {
    let (mut ids, mut names, mut count) = (null_mut(), null_mut(), 0);
    // SAFETY: the caller's contract; the out pointers are locals.
    unsafe {
        assert_eq!(
            nrt_interned_string_db_get_entries(shard, &mut ids, &mut names, &mut count),
            NRT_SUCCESS
        );
        nrt_interned_string_db_free_entries(ids, names, count);
    }
    count
}

#[test]
fn a_panicking_logger_never_aborts_the_c_api() {
    static LOGGER: PanickingLogger = PanickingLogger;
    log::set_logger(&LOGGER).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let hook = std::panic::take_hook();
    // The logger's panics are expected, and silenced; any other (a failed
    // assertion) is printed.
    std::panic::set_hook(Box::new(|info| {
        let message = info.payload_as_str().unwrap_or_default();
        if !message.starts_with("logger panicked on") {
            eprintln!("{info}");
        }
    }));
    let dir = scratch();
    let unwritable = c_path(&dir.join("no such directory").join("file.isdb"));
    let saved = dir.join("snapshot.isdb");
    let saved_delta = dir.join("delta.isdb");

    // SAFETY: every pointer is NULL, a live handle, a C string literal or a
    // local out-parameter; each handle is freed once, at the end.
    unsafe {
        // Bad input: every refusal is logged, and its status still returned.
        let mut id = 0;
        assert_eq!(
            nrt_interned_string_db_intern(null_mut(), 0, c(c"x"), &mut id),
            NRT_INVALID
        );
        // An absurd NC count is NULL, with the reason logged.
        assert!(nrt_interned_string_db_create(1 << 40, 0).is_null());
        let db = nrt_interned_string_db_create(2, 0);
        assert!(!db.is_null());
        let bad: [(usize, *const c_char, *mut u64, NRT_STATUS); 5] = [
            (0, null(), &mut id, NRT_INVALID),
            (0, c(c""), &mut id, NRT_INVALID),
            (0, c(c"\xff"), &mut id, NRT_INVALID),
            (2, c(c"x"), &mut id, NRT_INVALID),
            (0, c(c"x"), null_mut(), NRT_INVALID),
        ];
        for (nc, s, out, expected) in bad {
            assert_eq!(nrt_interned_string_db_intern(db, nc, s, out), expected);
        }
        assert_eq!(nrt_interned_string_db_close_nc(db, 7), NRT_INVALID);
        assert_eq!(nrt_interned_string_db_open_nc(null_mut(), 0), NRT_INVALID);
        assert_eq!(nrt_interned_string_db_close_nc(db, 1), NRT_SUCCESS);
        assert_eq!(
            nrt_interned_string_db_intern(db, 1, c(c"x"), &mut id),
            NRT_INVALID_HANDLE
        );
        assert_eq!(nrt_interned_string_db_open_nc(db, 1), NRT_SUCCESS);
        assert_eq!(
            nrt_interned_string_db_intern(db, 0, c(c"x"), &mut id),
            NRT_SUCCESS
        );
        assert_eq!(id, get_id(b"x"));
        assert_eq!(nrt_interned_string_db_snapshot(db, null_mut()), NRT_INVALID);
        assert_eq!(
            nrt_interned_string_db_snapshot(null_mut(), &mut null_mut()),
            NRT_INVALID
        );
        let mut snapshot = null_mut();
        assert_eq!(
            nrt_interned_string_db_snapshot(db, &mut snapshot),
            NRT_SUCCESS
        );
        assert_eq!(entries_of(snapshot), 1);

        // Batches: NULL names or ids are NRT_INVALID with `*out_interned`
        // written; a bad name stops the batch there.
        let names = [c(c"b0"), c(c"b1"), null(), c(c"b3")];
        let mut ids = [0u64; 4];
        let mut interned = 99;
        let batch = nrt_interned_string_db_intern_batch;
        let cases: [(
            *mut NrtInternedStringDb,
            usize,
            *const *const c_char,
            *mut u64,
            NRT_STATUS,
            usize,
        ); 5] = [
            (
                null_mut(),
                0,
                names.as_ptr(),
                ids.as_mut_ptr(),
                NRT_INVALID,
                0,
            ),
            (db, 0, null(), ids.as_mut_ptr(), NRT_INVALID, 0),
            (db, 0, names.as_ptr(), null_mut(), NRT_INVALID, 0),
            (db, 2, names.as_ptr(), ids.as_mut_ptr(), NRT_INVALID, 0),
            (db, 0, names.as_ptr(), ids.as_mut_ptr(), NRT_INVALID, 2),
        ];
        for (at, (batch_db, nc, names, out_ids, expected, done)) in cases.into_iter().enumerate() {
            interned = 99;
            let got = batch(batch_db, nc, names, 4, out_ids, &mut interned);
            assert_eq!((got, interned), (expected, done), "batch case {at}");
        }
        assert_eq!(&ids[..2], &[get_id(b"b0"), get_id(b"b1")]);
        assert_eq!(nrt_interned_string_db_close_nc(db, 1), NRT_SUCCESS);
        let got = batch(db, 1, names.as_ptr(), 2, ids.as_mut_ptr(), &mut interned);
        assert_eq!((got, interned), (NRT_INVALID_HANDLE, 0));
        assert_eq!(nrt_interned_string_db_open_nc(db, 1), NRT_SUCCESS);
        let good = [c(c"b3"), c(c"b4")];
        let got = batch(db, 1, good.as_ptr(), 2, ids.as_mut_ptr(), null_mut());
        assert_eq!(got, NRT_SUCCESS);
        assert_eq!(&ids[..2], &[get_id(b"b3"), get_id(b"b4")]);
        let got = batch(db, 0, null(), 0, null_mut(), &mut interned);
        assert_eq!((got, interned), (NRT_SUCCESS, 0), "an empty batch");

        // Cursors and deltas: every NULL is NRT_INVALID.
        let cursor = nrt_interned_string_db_cursor_create();
        assert!(!cursor.is_null());
        let mut delta = null_mut();
        assert_eq!(
            nrt_interned_string_db_delta(null_mut(), cursor, &mut delta),
            NRT_INVALID
        );
        assert_eq!(
            nrt_interned_string_db_delta(db, null_mut(), &mut delta),
            NRT_INVALID
        );
        assert_eq!(
            nrt_interned_string_db_delta(db, cursor, null_mut()),
            NRT_INVALID
        );
        assert!(delta.is_null());
        // Snapshot and delta files: NULL or bad paths are NRT_INVALID, a
        // path that cannot be written NRT_RESOURCE.
        let path = c_path(&saved);
        let save_snapshot = nrt_interned_string_db_save_snapshot;
        assert_eq!(save_snapshot(null_mut(), path.as_ptr()), NRT_INVALID);
        for bad in [null(), c(c""), c(c"\xff")] {
            assert_eq!(save_snapshot(db, bad), NRT_INVALID);
        }
        assert_eq!(save_snapshot(db, unwritable.as_ptr()), NRT_RESOURCE);
        assert_eq!(save_snapshot(db, path.as_ptr()), NRT_SUCCESS);
        assert_eq!(Snapshot::load(&saved).unwrap().len(), 5);
        let path = c_path(&saved_delta);
        let save_delta = nrt_interned_string_db_save_delta;
        assert_eq!(save_delta(null_mut(), cursor, path.as_ptr()), NRT_INVALID);
        assert_eq!(save_delta(db, null_mut(), path.as_ptr()), NRT_INVALID);
        for bad in [null(), c(c""), c(c"\xff")] {
            assert_eq!(save_delta(db, cursor, bad), NRT_INVALID);
        }
        assert_eq!(save_delta(db, cursor, unwritable.as_ptr()), NRT_RESOURCE);
        // The failed saves moved nothing: the delta is everything.
        assert_eq!(save_delta(db, cursor, path.as_ptr()), NRT_SUCCESS);
        assert_eq!(Snapshot::load(&saved_delta).unwrap().len(), 5);
        assert_eq!(
            nrt_interned_string_db_intern(db, 1, c(c"late"), &mut id),
            NRT_SUCCESS
        );
        assert_eq!(
            nrt_interned_string_db_delta(db, cursor, &mut delta),
            NRT_SUCCESS
        );
        assert_eq!(entries_of(delta), 1, "only the entry new since the save");
        nrt_interned_string_db_cursor_free(null_mut());
        nrt_interned_string_db_cursor_free(cursor);

        // The reference's shims.
        let shard = nrt_interned_string_db_shard_alloc();
        assert_eq!(
            nrt_interned_string_db_register_entry(null(), 1, shard),
            NRT_INVALID
        );
        assert_eq!(
            nrt_interned_string_db_register_entry(c(c"a"), 1, null_mut()),
            NRT_INVALID
        );
        assert_eq!(
            nrt_interned_string_db_register_entry(c(c"a"), 1, shard),
            NRT_SUCCESS
        );
        // A conflict is logged as a warning; the logger panics inside the
        // register, which the boundary turns into NRT_FAILURE.
        assert_eq!(
            nrt_interned_string_db_register_entry(c(c"b"), 1, shard),
            NRT_FAILURE
        );
        let (mut ids, mut names, mut kept, mut count) = (null_mut(), null_mut(), null_mut(), 0);
        assert_eq!(
            nrt_interned_string_db_get_entries(shard, null_mut(), &mut names, &mut count),
            NRT_INVALID
        );
        assert_eq!(
            nrt_interned_string_db_get_conflicts(
                null_mut(),
                &mut ids,
                &mut kept,
                &mut names,
                &mut count
            ),
            NRT_INVALID
        );
        nrt_interned_string_db_free_entries(null_mut(), null_mut(), 3);
        nrt_interned_string_db_free_conflicts(null_mut(), null_mut(), null_mut(), 3);
        // The shard is still usable, and kept the first string.
        assert_eq!(
            nrt_interned_string_db_get_entries(shard, &mut ids, &mut names, &mut count),
            NRT_SUCCESS
        );
        assert_eq!(count, 1);
        assert_eq!(CStr::from_ptr(*names).to_bytes(), b"a");
        nrt_interned_string_db_free_entries(ids, names, count);
        let mut rejected = null_mut();
        assert_eq!(
            nrt_interned_string_db_get_conflicts(
                shard,
                &mut ids,
                &mut kept,
                &mut rejected,
                &mut count
            ),
            NRT_SUCCESS
        );
        assert_eq!(
            count, 0,
            "the conflict the logger interrupted is not recorded"
        );
        nrt_interned_string_db_free_conflicts(ids, kept, rejected, count);
        assert_eq!(nrt_interned_string_db_get_id(null()), 0);
        assert_eq!(nrt_interned_string_db_get_id(c(c"\xff")), 0);
        assert_eq!(nrt_interned_string_db_get_id(c(c"x")), get_id(b"x"));
        assert_eq!(nrt_interned_string_db_get_conflicts_dropped(null_mut()), 0);
        assert_eq!(nrt_interned_string_db_get_conflicts_dropped(shard), 0);

        nrt_interned_string_db_shard_free(null_mut());
        nrt_interned_string_db_shard_free(shard);
        nrt_interned_string_db_shard_free(snapshot);
        nrt_interned_string_db_shard_free(delta);
        nrt_interned_string_db_destroy(null_mut());
        nrt_interned_string_db_destroy(db);
    }
    std::panic::set_hook(hook);
}

/// The test above calls every function the header declares.
#[test]
fn every_c_function_is_called_above() {
    let header = include_str!("../../include/interned_string_db.h");
    let test = include_str!("c_api_panicking_logger.rs");
    let declared: Vec<&str> = header
        .lines()
        .filter(|line| !line.starts_with("//"))
        .filter_map(|line| {
            let at = line.find("nrt_interned_string_db_")?;
            let name = &line[at..];
            let end = name.find('(')?;
            Some(&name[..end])
        })
        .collect();
    assert_eq!(declared.len(), 21, "{declared:?}");
    for name in declared {
        let called = test.contains(&format!("{name}(")) || test.contains(&format!("= {name};"));
        assert!(called, "{name} is not called by the panicking-logger test");
    }
}
