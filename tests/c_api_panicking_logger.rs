//! Nothing the C API does may abort, even when the installed `log` logger
//! panics on every record: each function answers its status (the panic is
//! caught at the boundary, and the boundary's own report of it must not
//! panic again inside an `extern "C"` function, which aborts).
//!
//! In its own test binary because it installs a process-wide logger; one test
//! function, so that the quiet panic hook is never raced.

#![cfg(feature = "capi")]

use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

use interned_string_db::ffi::db::*;
use interned_string_db::ffi::shard::*;
use interned_string_db::ffi::NRT_STATUS::{self, *};
use interned_string_db::get_id;

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

#[test]
fn a_panicking_logger_never_aborts_the_c_api() {
    static LOGGER: PanickingLogger = PanickingLogger;
    log::set_logger(&LOGGER).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // the logger's panics are expected

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
        assert_eq!(
            nrt_interned_string_db_intern(db, 0, c(c"x"), &mut id),
            NRT_SUCCESS
        );
        assert_eq!(id, get_id(b"x"));
        assert_eq!(nrt_interned_string_db_snapshot(db, null_mut()), NRT_INVALID);
        let mut snapshot = null_mut();
        assert_eq!(
            nrt_interned_string_db_snapshot(db, &mut snapshot),
            NRT_SUCCESS
        );

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
        assert_eq!(nrt_interned_string_db_get_id(null()), 0);
        assert_eq!(nrt_interned_string_db_get_conflicts_dropped(null_mut()), 0);

        nrt_interned_string_db_shard_free(shard);
        nrt_interned_string_db_shard_free(snapshot);
        nrt_interned_string_db_destroy(db);
    }
    std::panic::set_hook(hook);
}
