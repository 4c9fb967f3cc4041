//! Batch interning from C: many names into one NC in one call, with the
//! lookups pipelined (see `InternedStringDb::intern_batch`).

use std::ffi::c_char;

use super::db::{live, NrtInternedStringDb};
use crate::boundary::{guard, log_error, required_str, status, NRT_STATUS};
use interned_string_db::{BatchError, Error};

/// Interns the `count` names of `names` into NC `nc`, in order, writing
/// their ids to `out_ids[0..count]`: the same ids and effects as calling
/// `nrt_interned_string_db_intern` on each name in turn, in one call.
///
/// `out_interned`, if not NULL, receives how many names were interned: all
/// `count` on success; on failure, the index of the first name that failed
/// (the names before it are interned and their ids written). Statuses as for
/// `nrt_interned_string_db_intern`, for the name that failed: `NRT_INVALID`
/// for a NULL db, a NULL `names` or `out_ids` with `count > 0`, a NULL,
/// empty or non-UTF-8 name, or `nc` out of range; `NRT_INVALID_HANDLE` for
/// a closed NC; `NRT_RESOURCE` for a cap reached or memory exhausted.
///
/// # Safety
///
/// `db` is NULL or live; `names` is NULL or points to `count` pointers, each
/// NULL or a valid NUL-terminated string; `out_ids` is NULL or writable for
/// `count` ids; `out_interned` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_intern_batch(
    db: *mut NrtInternedStringDb,
    nc: usize,
    names: *const *const c_char,
    count: usize,
    out_ids: *mut u64,
    out_interned: *mut usize,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_intern_batch";
    guard(NAME, NRT_STATUS::NRT_FAILURE, || {
        let mut interned = 0;
        // SAFETY: the caller's contract on every pointer.
        let result = unsafe { intern_all(db, nc, names, count, out_ids, &mut interned) };
        if !out_interned.is_null() {
            // SAFETY: non-NULL and writable (the caller's contract).
            unsafe { *out_interned = interned };
        }
        match result {
            Ok(()) => NRT_STATUS::NRT_SUCCESS,
            Err(Ok(error)) => status(NAME, Err::<(), _>(error)),
            Err(Err(status)) => status,
        }
    })
}

/// The batch, a step of names at a time; `interned` counts the names done.
/// Fails with the db's error, not logged yet, or with a status whose reason
/// is logged already.
///
/// # Safety
///
/// As [`nrt_interned_string_db_intern_batch`].
unsafe fn intern_all(
    db: *mut NrtInternedStringDb,
    nc: usize,
    names: *const *const c_char,
    count: usize,
    out_ids: *mut u64,
    interned: &mut usize,
) -> Result<(), Result<Error, NRT_STATUS>> {
    const NAME: &str = "nrt_interned_string_db_intern_batch";
    /// Names converted (strlen, UTF-8 check) before each call into the db.
    const STEP: usize = 256;
    // SAFETY: the caller's contract.
    let db = unsafe { live(NAME, db) }.map_err(Err)?;
    if count == 0 {
        return Ok(());
    }
    if names.is_null() || out_ids.is_null() {
        log_error(format_args!("{NAME}: names or out_ids is NULL"));
        return Err(Err(NRT_STATUS::NRT_INVALID));
    }
    // SAFETY: `count` readable pointers and `count` writable ids (the
    // caller's contract), both non-NULL.
    let (names, ids) = unsafe {
        (
            core::slice::from_raw_parts(names, count),
            core::slice::from_raw_parts_mut(out_ids, count),
        )
    };
    let mut step: Vec<&str> = Vec::with_capacity(STEP.min(count));
    for (names, ids) in names.chunks(STEP).zip(ids.chunks_mut(STEP)) {
        step.clear();
        let mut bad = None;
        for &name in names {
            // SAFETY: NULL or a valid C string (the caller's contract).
            match unsafe { required_str(NAME, name) } {
                Ok(name) => step.push(name),
                Err(status) => {
                    bad = Some(status);
                    break;
                }
            }
        }
        let good = step.len();
        match db.intern_batch(nc, &step, &mut ids[..good]) {
            Ok(()) => *interned += good,
            Err(BatchError::At { index, error }) => {
                *interned += index;
                return Err(Ok(error));
            }
            Err(other) => unreachable!("lengths match: {other}"),
        }
        if let Some(status) = bad {
            return Err(Err(status));
        }
    }
    Ok(())
}
