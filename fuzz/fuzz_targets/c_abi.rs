//! The C ABI on arbitrary bytes: lines of the input become C strings (NUL
//! appended, so a string ends at its first NUL byte, as C would see it: not
//! NUL-terminated input is handled by construction), of any length, valid
//! UTF-8 or not. Every shim must answer as documented and never crash; the
//! exported entries must be exactly what was registered.
#![no_main]

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};

use interned_string_db::get_id;
use interned_string_db_capi::db::*;
use interned_string_db_capi::shard::*;
use interned_string_db_capi::NRT_STATUS;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, data)) = data.split_first() else {
        return;
    };
    // SAFETY (whole target): every pointer passed is NULL or valid, and every
    // array is freed exactly once with the count it came with.
    unsafe {
        let shard = nrt_interned_string_db_shard_alloc();
        let db = nrt_interned_string_db_create(usize::from(control % 4) + 1, 0);
        let mut expected: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (i, line) in data.split(|&b| b == b'\n').enumerate() {
            let mut owned = line.to_vec();
            owned.push(0);
            let s = owned.as_ptr().cast::<c_char>();
            let bytes = CStr::from_ptr(s).to_bytes();
            let valid = std::str::from_utf8(bytes).is_ok();

            let id = nrt_interned_string_db_get_id(s);
            assert_eq!(id, if valid { get_id(bytes) } else { 0 });

            // Half the registrations with the hash, half with a small id
            // that collides on purpose.
            let id = if i % 2 == 0 {
                id
            } else {
                u64::from(control) + (i % 3) as u64
            };
            let status = nrt_interned_string_db_register_entry(s, id, shard);
            if valid && !bytes.is_empty() {
                assert_eq!(status, NRT_STATUS::NRT_SUCCESS);
                expected.entry(id).or_insert_with(|| bytes.to_vec());
            } else {
                assert_eq!(status, NRT_STATUS::NRT_INVALID);
            }

            let nc = usize::from(control) + i;
            let mut out = 0u64;
            let status = nrt_interned_string_db_intern(db, nc % 5, s, &mut out);
            match status {
                NRT_STATUS::NRT_SUCCESS => assert_eq!(out, get_id(bytes)),
                NRT_STATUS::NRT_INVALID => {
                    assert!(!valid || bytes.is_empty() || nc % 5 >= usize::from(control % 4) + 1)
                }
                NRT_STATUS::NRT_INVALID_HANDLE => {}
                other => panic!("intern: {other:?}"),
            }
            if i % 7 == 3 {
                nrt_interned_string_db_close_nc(db, nc % 4);
            } else if i % 7 == 5 {
                nrt_interned_string_db_open_nc(db, nc % 4);
            }
        }

        // Export: exactly the first string registered under each id.
        let (mut ids, mut names, mut count) = (std::ptr::null_mut(), std::ptr::null_mut(), 0usize);
        assert_eq!(
            nrt_interned_string_db_get_entries(shard, &mut ids, &mut names, &mut count),
            NRT_STATUS::NRT_SUCCESS
        );
        assert_eq!(count, expected.len());
        for k in 0..count {
            let name = CStr::from_ptr(*names.add(k)).to_bytes();
            assert_eq!(expected.get(&*ids.add(k)).map(Vec::as_slice), Some(name));
        }
        nrt_interned_string_db_free_entries(ids, names, count);

        let (mut kept, mut rejected) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(
            nrt_interned_string_db_get_conflicts(
                shard,
                &mut ids,
                &mut kept,
                &mut rejected,
                &mut count
            ),
            NRT_STATUS::NRT_SUCCESS
        );
        nrt_interned_string_db_free_conflicts(ids, kept, rejected, count);

        let mut snapshot = std::ptr::null_mut();
        assert_eq!(
            nrt_interned_string_db_snapshot(db, &mut snapshot),
            NRT_STATUS::NRT_SUCCESS
        );
        assert_eq!(
            nrt_interned_string_db_get_entries(snapshot, &mut ids, &mut names, &mut count),
            NRT_STATUS::NRT_SUCCESS
        );
        nrt_interned_string_db_free_entries(ids, names, count);
        nrt_interned_string_db_shard_free(snapshot);

        // NULLs everywhere.
        assert_eq!(nrt_interned_string_db_get_id(std::ptr::null()), 0);
        assert_eq!(
            nrt_interned_string_db_register_entry(std::ptr::null(), 1, shard),
            NRT_STATUS::NRT_INVALID
        );
        nrt_interned_string_db_free_entries(std::ptr::null_mut(), std::ptr::null_mut(), 5);
        nrt_interned_string_db_shard_free(shard);
        nrt_interned_string_db_destroy(db);
    }
});
