//! Deltas and snapshot files from C: a cursor handle, the delta as a shard,
//! and saving a snapshot or a delta to a file (`docs/snapshot-format.md`).
//! A cursor is used by one thread at a time; the db by any number.

use std::ffi::c_char;

use super::db::{export_to_shard, live, with_db, NrtInternedStringDb};
use super::shard::InternedDataShard;
use crate::boundary::{guard, log_error, required_str, NRT_STATUS};
use interned_string_db::{Cursor, InternedStringDb};

/// What a sequence of deltas has delivered (see `Cursor`). Opaque to C.
#[derive(Debug)]
pub struct NrtInternedStringDbCursor {
    cursor: Cursor,
}

/// A cursor that has delivered nothing. Free it with
/// [`nrt_interned_string_db_cursor_free`]. NULL only if a panic was caught.
#[no_mangle]
pub extern "C" fn nrt_interned_string_db_cursor_create() -> *mut NrtInternedStringDbCursor {
    guard(
        "nrt_interned_string_db_cursor_create",
        std::ptr::null_mut(),
        || {
            Box::into_raw(Box::new(NrtInternedStringDbCursor {
                cursor: Cursor::new(),
            }))
        },
    )
}

/// Frees a cursor. NULL is a no-op.
///
/// # Safety
///
/// `cursor` is NULL or from [`nrt_interned_string_db_cursor_create`], and
/// not used during or after the call.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_cursor_free(
    cursor: *mut NrtInternedStringDbCursor,
) {
    guard("nrt_interned_string_db_cursor_free", (), || {
        if !cursor.is_null() {
            // SAFETY: from `Box::into_raw` in `cursor_create`, unused from now on.
            drop(unsafe { Box::from_raw(cursor) });
        }
    })
}

/// The db and the cursor behind two handles, or `NRT_INVALID` (logged) if
/// either is NULL.
///
/// # Safety
///
/// `db` is NULL or live; `cursor` is NULL or live and used by no other
/// thread for `'a`.
unsafe fn db_and_cursor<'a>(
    function: &str,
    db: *mut NrtInternedStringDb,
    cursor: *mut NrtInternedStringDbCursor,
) -> Result<(&'a InternedStringDb, &'a mut Cursor), NRT_STATUS> {
    // SAFETY: the caller's contract.
    let db = unsafe { live(function, db) }?;
    // SAFETY: the caller's contract: live, and this thread's alone.
    match unsafe { cursor.as_mut() } {
        Some(handle) => Ok((db, &mut handle.cursor)),
        None => {
            log_error(format_args!("{function}: the cursor is NULL"));
            Err(NRT_STATUS::NRT_INVALID)
        }
    }
}

/// The entries of open NCs that `cursor` has not delivered yet, as a new
/// shard written to `out_shard` (export it with `get_entries`, read the
/// conflicts newly seen with `get_conflicts`, free it with `shard_free`);
/// advances the cursor, but only if the shard is made: after `NRT_RESOURCE`
/// (memory for the copy ran out; `*out_shard` is not written), the next
/// delta delivers the same entries again. No id is delivered twice to one
/// cursor; a closed NC delivers its entries once reopened. `NRT_INVALID`
/// for a NULL argument.
///
/// # Safety
///
/// `db` is NULL or live; `cursor` is NULL or live and used by no other
/// thread during the call; `out_shard` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_delta(
    db: *mut NrtInternedStringDb,
    cursor: *mut NrtInternedStringDbCursor,
    out_shard: *mut *mut InternedDataShard,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_delta";
    guard(NAME, NRT_STATUS::NRT_FAILURE, || {
        // SAFETY: the caller's contract.
        let (db, cursor) = match unsafe { db_and_cursor(NAME, db, cursor) } {
            Ok(both) => both,
            Err(status) => return status,
        };
        if out_shard.is_null() {
            log_error(format_args!("{NAME}: out_shard is NULL"));
            return NRT_STATUS::NRT_INVALID;
        }
        // The cursor advances only if the delta reaches C: a copy refused
        // (`NRT_RESOURCE`) rewinds it, so the next delta delivers the same
        // entries again.
        let exported = db.delta_with(cursor, |delta| {
            // SAFETY: non-NULL and writable (the caller's contract).
            match unsafe { export_to_shard(NAME, delta, out_shard) } {
                NRT_STATUS::NRT_SUCCESS => Ok(NRT_STATUS::NRT_SUCCESS),
                failed => Err(failed),
            }
        });
        exported.unwrap_or_else(|failed| failed)
    })
}

/// Saves the delta for `cursor` (what [`nrt_interned_string_db_delta`]
/// would return) to the file `path` (a UTF-8 path), in the format of
/// `docs/snapshot-format.md`, atomically as
/// [`nrt_interned_string_db_save_snapshot`] does. The cursor advances only
/// once the file is saved: after `NRT_RESOURCE` (the file cannot be
/// written, nothing is left under `path`), the next delta delivers the same
/// entries again. `NRT_INVALID` for a NULL db or cursor, or a NULL, empty or
/// non-UTF-8 path (the cursor unchanged).
///
/// # Safety
///
/// `db` is NULL or live; `cursor` is NULL or live and used by no other
/// thread during the call; `path` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_save_delta(
    db: *mut NrtInternedStringDb,
    cursor: *mut NrtInternedStringDbCursor,
    path: *const c_char,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_save_delta";
    guard(NAME, NRT_STATUS::NRT_FAILURE, || {
        // SAFETY: the caller's contract.
        let (db, cursor) = match unsafe { db_and_cursor(NAME, db, cursor) } {
            Ok(both) => both,
            Err(status) => return status,
        };
        // SAFETY: the caller's contract on `path`.
        let path = match unsafe { required_str(NAME, path) } {
            Ok(path) => path,
            Err(status) => return status,
        };
        saved(NAME, path, db.save_delta(cursor, path).map(drop))
    })
}

/// The status of a save to `path`: a failure is logged.
fn saved(function: &str, path: &str, result: std::io::Result<()>) -> NRT_STATUS {
    match result {
        Ok(()) => NRT_STATUS::NRT_SUCCESS,
        Err(e) => {
            log_error(format_args!("{function}: {path}: {e}"));
            NRT_STATUS::NRT_RESOURCE
        }
    }
}

/// Saves a snapshot of every open NC to the file `path` (a UTF-8 path), in
/// the format of `docs/snapshot-format.md`, atomically: a temporary file in
/// the same directory, synced, renamed over `path`. `NRT_INVALID` for a NULL
/// db, or a NULL, empty or non-UTF-8 path; `NRT_RESOURCE` if the file cannot
/// be written (nothing is left under `path` then).
///
/// # Safety
///
/// `db` is NULL or live; `path` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_save_snapshot(
    db: *mut NrtInternedStringDb,
    path: *const c_char,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_save_snapshot";
    let body = |db: &InternedStringDb| {
        // SAFETY: the caller's contract on `path`.
        let path = match unsafe { required_str(NAME, path) } {
            Ok(path) => path,
            Err(status) => return status,
        };
        saved(NAME, path, db.snapshot().save(path))
    };
    // SAFETY: the caller's contract.
    unsafe { with_db(NAME, db, body) }
}
