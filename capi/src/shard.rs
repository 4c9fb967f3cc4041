//! The six shims of the reference, with its exact signatures and status
//! codes. Unlike the reference, an [`InternedDataShard`] is internally
//! synchronised: `register_entry` and `get_entries` may be called from many
//! threads at once on one shard.

use std::ffi::c_char;

use crate::boundary::{
    export_names, free_c_strings, guard, leak_array, log_error, required_str, status, take_array,
    NRT_STATUS,
};
use interned_string_db::{get_id, Config, Conflict, InternedStringDb};

/// An id → string table (the reference's 48-byte hashbrown shard; here a
/// one-NC db of the default strategy, internally synchronised). Opaque to C.
#[derive(Debug)]
pub struct InternedDataShard {
    pub(crate) db: InternedStringDb,
    /// Conflicts found when this shard was built by merging (a snapshot),
    /// beside those its own registrations find.
    pub(crate) merged_conflicts: Vec<Conflict>,
    /// Conflicts the merged NCs counted without storing them.
    pub(crate) merged_conflicts_dropped: u64,
}

impl InternedDataShard {
    pub(crate) fn new() -> Self {
        InternedDataShard {
            db: InternedStringDb::with_config(Config::new().ncs(1)),
            merged_conflicts: Vec::new(),
            merged_conflicts_dropped: 0,
        }
    }
}

/// The id of the NUL-terminated string `s`: `0` for NULL or invalid UTF-8;
/// the empty string has a real, non-zero id.
///
/// # Safety
///
/// `s` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_get_id(s: *const c_char) -> u64 {
    guard("nrt_interned_string_db_get_id", 0, || {
        if s.is_null() {
            return 0;
        }
        // SAFETY: non-NULL, and the caller guarantees a valid C string.
        let bytes = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes();
        match core::str::from_utf8(bytes) {
            Ok(_) => get_id(bytes),
            Err(_) => 0,
        }
    })
}

/// Stores `id → s` in `shard`. The id is the caller's and is stored as given
/// (not recomputed from `s`). Registering the same (id, string) again
/// succeeds and allocates nothing; a different string under a stored id
/// succeeds, keeps the first string, and logs and counts the conflict.
///
/// Returns `NRT_INVALID` for a NULL, empty or non-UTF-8 string or a NULL
/// shard, `NRT_RESOURCE` when memory runs out.
///
/// # Safety
///
/// `s` is NULL or a valid NUL-terminated string; `shard` is NULL or a live
/// shard from [`nrt_interned_string_db_shard_alloc`] or a snapshot.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_register_entry(
    s: *const c_char,
    id: u64,
    shard: *mut InternedDataShard,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_register_entry";
    guard(NAME, NRT_STATUS::NRT_FAILURE, || {
        // SAFETY: the caller's contract on `s`.
        let name = match unsafe { required_str(NAME, s) } {
            Ok(name) => name,
            Err(status) => return status,
        };
        // SAFETY: the caller's contract on `shard`; shared access only.
        let Some(shard) = (unsafe { shard.as_ref() }) else {
            log_error(format_args!("{NAME}: the shard is NULL"));
            return NRT_STATUS::NRT_INVALID;
        };
        status(NAME, shard.db.register(0, id, name.as_bytes()))
    })
}

/// Exports `shard` as two arrays the caller owns, `ids[count]` and
/// `names[count]` (NUL-terminated copies), to be freed only by
/// [`nrt_interned_string_db_free_entries`]. An empty shard gives count 0 and
/// arrays that `free_entries` accepts.
///
/// Returns `NRT_INVALID` if any argument is NULL, or if a name holds a NUL
/// byte (possible only for strings interned as bytes from Rust), which C
/// could not see whole: nothing is exported then.
///
/// # Safety
///
/// `shard` is NULL or live; the out pointers are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_get_entries(
    shard: *mut InternedDataShard,
    out_ids: *mut *mut u64,
    out_names: *mut *mut *mut c_char,
    out_count: *mut usize,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_get_entries";
    guard(NAME, NRT_STATUS::NRT_FAILURE, || {
        if shard.is_null() || out_ids.is_null() || out_names.is_null() || out_count.is_null() {
            log_error(format_args!("{NAME}: a NULL argument"));
            return NRT_STATUS::NRT_INVALID;
        }
        // SAFETY: non-NULL and live (the caller's contract).
        let shard = unsafe { &*shard };
        let snapshot = shard.db.snapshot();
        let Some(names) = export_names(snapshot.iter().map(|(_, bytes)| bytes)) else {
            log_error(format_args!(
                "{NAME}: a name holds a NUL byte; nothing exported"
            ));
            return NRT_STATUS::NRT_INVALID;
        };
        let ids: Vec<u64> = snapshot.iter().map(|(id, _)| id).collect();
        let count = ids.len();
        // SAFETY: the out pointers are non-NULL and writable.
        unsafe {
            *out_ids = leak_array(ids);
            *out_names = names;
            *out_count = count;
        }
        NRT_STATUS::NRT_SUCCESS
    })
}

/// Frees the arrays of [`nrt_interned_string_db_get_entries`]. NULL arrays
/// are a logged no-op.
///
/// # Safety
///
/// `ids`, `names` and `count` are exactly what one `get_entries` call
/// returned, and are not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_free_entries(
    ids: *mut u64,
    names: *mut *mut c_char,
    count: usize,
) {
    const NAME: &str = "nrt_interned_string_db_free_entries";
    guard(NAME, (), || {
        if ids.is_null() || names.is_null() {
            log_error(format_args!("{NAME}: a NULL array; nothing freed"));
            return;
        }
        // SAFETY: the caller's contract: both arrays came from one
        // `get_entries` call with this count.
        unsafe {
            free_c_strings(names, count);
            drop(take_array(ids, count));
        }
    })
}

/// A new, empty shard (NULL only if a panic was caught).
#[no_mangle]
pub extern "C" fn nrt_interned_string_db_shard_alloc() -> *mut InternedDataShard {
    guard(
        "nrt_interned_string_db_shard_alloc",
        std::ptr::null_mut(),
        || Box::into_raw(Box::new(InternedDataShard::new())),
    )
}

/// Frees a shard and every string in it. NULL is a no-op.
///
/// # Safety
///
/// `shard` is NULL or live, and no other thread uses it during or after the
/// call.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_shard_free(shard: *mut InternedDataShard) {
    guard("nrt_interned_string_db_shard_free", (), || {
        if !shard.is_null() {
            // SAFETY: from `Box::into_raw` (alloc or snapshot), and no longer
            // used by anyone (the caller's contract).
            drop(unsafe { Box::from_raw(shard) });
        }
    })
}

/// The conflicts `shard` has seen: registrations of a different string under
/// a stored id, and, for a snapshot, those found merging NCs. Three arrays
/// the caller owns (`ids`, `kept`, `rejected`, each `count` long; the names
/// NUL-terminated copies), freed only by
/// [`nrt_interned_string_db_free_conflicts`].
///
/// Returns `NRT_INVALID` for a NULL argument or a name holding a NUL byte.
///
/// # Safety
///
/// As [`nrt_interned_string_db_get_entries`].
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_get_conflicts(
    shard: *mut InternedDataShard,
    out_ids: *mut *mut u64,
    out_kept: *mut *mut *mut c_char,
    out_rejected: *mut *mut *mut c_char,
    out_count: *mut usize,
) -> NRT_STATUS {
    const NAME: &str = "nrt_interned_string_db_get_conflicts";
    guard(NAME, NRT_STATUS::NRT_FAILURE, || {
        if shard.is_null()
            || out_ids.is_null()
            || out_kept.is_null()
            || out_rejected.is_null()
            || out_count.is_null()
        {
            log_error(format_args!("{NAME}: a NULL argument"));
            return NRT_STATUS::NRT_INVALID;
        }
        // SAFETY: non-NULL and live (the caller's contract).
        let shard = unsafe { &*shard };
        let mut conflicts = shard.db.conflicts();
        conflicts.extend(shard.merged_conflicts.iter().cloned());
        let names = || conflicts.iter().flat_map(|c| [&*c.kept, &*c.rejected]);
        if names().any(|name| name.contains(&0)) {
            log_error(format_args!(
                "{NAME}: a name holds a NUL byte; nothing exported"
            ));
            return NRT_STATUS::NRT_INVALID;
        }
        let kept = export_names(conflicts.iter().map(|c| &*c.kept)).expect("checked for NUL");
        let rejected =
            export_names(conflicts.iter().map(|c| &*c.rejected)).expect("checked for NUL");
        let ids: Vec<u64> = conflicts.iter().map(|c| c.id).collect();
        let count = ids.len();
        // SAFETY: the out pointers are non-NULL and writable.
        unsafe {
            *out_ids = leak_array(ids);
            *out_kept = kept;
            *out_rejected = rejected;
            *out_count = count;
        }
        NRT_STATUS::NRT_SUCCESS
    })
}

/// How many conflicts `shard` counted without storing them, because its
/// conflict budget (64 KiB of conflicting strings, as for every NC) was
/// spent; for a snapshot, also those of the merged NCs. They are missing from
/// [`nrt_interned_string_db_get_conflicts`]. `0` for a NULL shard.
///
/// # Safety
///
/// `shard` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_get_conflicts_dropped(
    shard: *mut InternedDataShard,
) -> u64 {
    const NAME: &str = "nrt_interned_string_db_get_conflicts_dropped";
    guard(NAME, 0, || {
        // SAFETY: NULL or live (the caller's contract); shared access only.
        match unsafe { shard.as_ref() } {
            Some(shard) => shard.db.conflicts_dropped() + shard.merged_conflicts_dropped,
            None => {
                log_error(format_args!("{NAME}: the shard is NULL"));
                0
            }
        }
    })
}

/// Frees the arrays of [`nrt_interned_string_db_get_conflicts`]. NULL arrays
/// are a logged no-op.
///
/// # Safety
///
/// The arrays and count are exactly what one `get_conflicts` call returned,
/// and are not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn nrt_interned_string_db_free_conflicts(
    ids: *mut u64,
    kept: *mut *mut c_char,
    rejected: *mut *mut c_char,
    count: usize,
) {
    const NAME: &str = "nrt_interned_string_db_free_conflicts";
    guard(NAME, (), || {
        if ids.is_null() || kept.is_null() || rejected.is_null() {
            log_error(format_args!("{NAME}: a NULL array; nothing freed"));
            return;
        }
        // SAFETY: the caller's contract: all three came from one
        // `get_conflicts` call with this count.
        unsafe {
            free_c_strings(kept, count);
            free_c_strings(rejected, count);
            drop(take_array(ids, count));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name with a NUL byte cannot reach C whole: nothing is exported, and
    /// nothing leaks (Miri checks the latter).
    #[test]
    fn names_with_nul_are_refused_whole() {
        let shard = Box::into_raw(Box::new(InternedDataShard::new()));
        // SAFETY: `shard` is live until freed below; out pointers are locals.
        unsafe {
            (*shard).db.register(0, 1, b"fine").unwrap();
            (*shard).db.register(0, 2, b"a\0b").unwrap();
            (*shard).db.register(0, 2, b"c\0d").unwrap(); // a conflict too
            let (mut ids, mut names, mut count) = (std::ptr::null_mut(), std::ptr::null_mut(), 7);
            let status =
                nrt_interned_string_db_get_entries(shard, &mut ids, &mut names, &mut count);
            assert_eq!(status, NRT_STATUS::NRT_INVALID);
            assert_eq!((ids.is_null(), names.is_null(), count), (true, true, 7));
            let (mut kept, mut rejected) = (std::ptr::null_mut(), std::ptr::null_mut());
            let status = nrt_interned_string_db_get_conflicts(
                shard,
                &mut ids,
                &mut kept,
                &mut rejected,
                &mut count,
            );
            assert_eq!(status, NRT_STATUS::NRT_INVALID);
            nrt_interned_string_db_shard_free(shard);
        }
    }
}
