//! The process-level C API: a whole db of N NCs, beyond the reference's
//! storage shims, so that C callers get the whole product. Every function is
//! thread-safe except `destroy`, which must not race any other use.

use std::ffi::c_char;

use super::shard::InternedDataShard;
use crate::boundary::{guard, log_error, required_str, status, NRT_STATUS};
use interned_string_db::{Config, InternedStringDb, Snapshot};

/// A db of N NCs (the default strategy). Opaque to C.
#[derive(Debug)]
pub struct NrtInternedStringDb {
    db: InternedStringDb,
}

/// A new db of `ncs` NCs (`0` means the default, 256), with a per-NC byte
/// cap of `byte_cap` bytes of string data (`0` means none). NULL (logged)
/// if memory for `ncs` NCs cannot be allocated, or if a panic was caught.
#[no_mangle]
pub extern "C" fn nrt_interned_string_db_create(
    ncs: usize,
    byte_cap: usize,
) -> *mut NrtInternedStringDb {
    const NAME: &str = "nrt_interned_string_db_create";
    guard(NAME, std::ptr::null_mut(), || {
        let mut config = Config::new();
        if ncs != 0 {
            config = config.ncs(ncs);
        }
        if byte_cap != 0 {
            config = config.byte_cap(byte_cap);
        }
        match InternedStringDb::try_with_config(config) {
            Ok(db) => Box::into_raw(Box::new(NrtInternedStringDb { db })),
            Err(e) => {
                log_error(format_args!("{NAME}: {e}"));
                std::ptr::null_mut()
            }
        }
    })
}

/// Frees a db and every string in it. NULL is a no-op.
///
/// # Safety
///
/// `db` is NULL or from [`nrt_interned_string_db_create`], and no other
/// thread uses it during or after the call.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_destroy(db: *mut NrtInternedStringDb) {
    guard("nrt_interned_string_db_destroy", (), || {
        if !db.is_null() {
            // SAFETY: from `Box::into_raw` in `create`, unused from now on.
            drop(unsafe { Box::from_raw(db) });
        }
    })
}

/// The db behind a handle, or `NRT_INVALID` (logged) for NULL.
///
/// # Safety
///
/// `db` is NULL or live for `'a`.
pub(super) unsafe fn live<'a>(
    function: &str,
    db: *const NrtInternedStringDb,
) -> Result<&'a InternedStringDb, NRT_STATUS> {
    // SAFETY: the caller's contract.
    match unsafe { db.as_ref() } {
        Some(handle) => Ok(&handle.db),
        None => {
            log_error(format_args!("{function}: the db is NULL"));
            Err(NRT_STATUS::NRT_INVALID)
        }
    }
}

/// Runs `body` on the db behind `db` inside the panic guard: a NULL `db`
/// answers `NRT_INVALID` (logged), a panic `NRT_FAILURE`.
///
/// # Safety
///
/// `db` is NULL or live for the call.
pub(super) unsafe fn with_db(
    function: &str,
    db: *const NrtInternedStringDb,
    body: impl FnOnce(&InternedStringDb) -> NRT_STATUS,
) -> NRT_STATUS {
    guard(function, NRT_STATUS::NRT_FAILURE, || {
        // SAFETY: the caller's contract.
        match unsafe { live(function, db) } {
            Ok(db) => body(db),
            Err(status) => status,
        }
    })
}

/// Interns `s` into NC `nc` and writes its id to `out_id`.
///
/// Returns `NRT_INVALID` for a NULL db, string or `out_id`, an empty or
/// non-UTF-8 string, or `nc` out of range; `NRT_INVALID_HANDLE` for a closed
/// NC; `NRT_RESOURCE` for a cap reached or memory exhausted. A conflict (the
/// id held by another string) succeeds: the first string is kept and the
/// conflict recorded, as in the reference.
///
/// # Safety
///
/// `db` is NULL or live; `s` is NULL or a valid NUL-terminated string;
/// `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_intern(
    db: *mut NrtInternedStringDb,
    nc: usize,
    s: *const c_char,
    out_id: *mut u64,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_intern";
    let body = |db: &InternedStringDb| {
        if out_id.is_null() {
            log_error(format_args!("{NAME}: out_id is NULL"));
            return NRT_STATUS::NRT_INVALID;
        }
        // SAFETY: the caller's contract on `s`.
        let name = match unsafe { required_str(NAME, s) } {
            Ok(name) => name,
            Err(status) => return status,
        };
        let result = db.intern(nc, name);
        if let Ok(id) = result {
            // SAFETY: non-NULL and writable (the caller's contract).
            unsafe { *out_id = id };
        }
        status(NAME, result)
    };
    // SAFETY: the caller's contract.
    unsafe { with_db(NAME, db, body) }
}

/// Opens or closes an NC.
///
/// # Safety
///
/// `db` is NULL or live.
unsafe fn set_open(
    function: &str,
    db: *mut NrtInternedStringDb,
    nc: usize,
    open: bool,
) -> NRT_STATUS {
    let body = |db: &InternedStringDb| {
        let result = if open {
            db.open_nc(nc)
        } else {
            db.close_nc(nc)
        };
        status(function, result)
    };
    // SAFETY: the caller's contract.
    unsafe { with_db(function, db, body) }
}

/// Closes NC `nc`: it refuses new strings and snapshots skip it; its entries
/// are kept. `NRT_INVALID` for a NULL db or `nc` out of range.
///
/// # Safety
///
/// `db` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_close_nc(
    db: *mut NrtInternedStringDb,
    nc: usize,
) -> NRT_STATUS {
    // SAFETY: the caller's contract, passed on.
    unsafe { set_open("nrt_interned_string_db_close_nc", db, nc, false) }
}

/// Opens NC `nc` again. `NRT_INVALID` for a NULL db or `nc` out of range.
///
/// # Safety
///
/// `db` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_open_nc(
    db: *mut NrtInternedStringDb,
    nc: usize,
) -> NRT_STATUS {
    // SAFETY: the caller's contract, passed on.
    unsafe { set_open("nrt_interned_string_db_open_nc", db, nc, true) }
}

/// Merges every open NC into a new shard written to `out_shard`: export it
/// with [`nrt_interned_string_db_get_entries`](super::shard::nrt_interned_string_db_get_entries),
/// read its conflicts (within and across NCs) with
/// [`nrt_interned_string_db_get_conflicts`](super::shard::nrt_interned_string_db_get_conflicts),
/// free it with [`nrt_interned_string_db_shard_free`](super::shard::nrt_interned_string_db_shard_free).
/// Runs concurrently with interning. `NRT_INVALID` for a NULL argument.
///
/// # Safety
///
/// `db` is NULL or live; `out_shard` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_snapshot(
    db: *mut NrtInternedStringDb,
    out_shard: *mut *mut InternedDataShard,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_snapshot";
    let body = |db: &InternedStringDb| {
        if out_shard.is_null() {
            log_error(format_args!("{NAME}: out_shard is NULL"));
            return NRT_STATUS::NRT_INVALID;
        }
        // SAFETY: non-NULL and writable (the caller's contract).
        unsafe { export_to_shard(NAME, &db.snapshot(), out_shard) }
    };
    // SAFETY: the caller's contract.
    unsafe { with_db(NAME, db, body) }
}

/// Copies `snapshot` into a new shard (the reference's export flow) and
/// stores it in `*out_shard`.
///
/// # Safety
///
/// `out_shard` is non-NULL and writable.
pub(super) unsafe fn export_to_shard(
    function: &str,
    snapshot: &Snapshot,
    out_shard: *mut *mut InternedDataShard,
) -> NRT_STATUS {
    let mut shard = InternedDataShard::new();
    for (id, bytes) in snapshot {
        let stored = status(function, shard.db.register(0, id, bytes));
        if stored != NRT_STATUS::NRT_SUCCESS {
            return stored;
        }
    }
    shard.merged_conflicts = snapshot.conflicts().to_vec();
    shard.merged_conflicts_dropped = snapshot.conflicts_dropped();
    // SAFETY: the caller's contract.
    unsafe { *out_shard = Box::into_raw(Box::new(shard)) };
    NRT_STATUS::NRT_SUCCESS
}
