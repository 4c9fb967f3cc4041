//! A C `delta` whose copy into a shard is refused for memory answers
//! `NRT_RESOURCE` and loses nothing: the cursor is rewound, and the next
//! delta delivers the same entries. Its own binary, for the global
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::CString;

use interned_string_db_capi::db::*;
use interned_string_db_capi::shard::*;
use interned_string_db_capi::snapshot::*;
use interned_string_db_capi::NRT_STATUS;

/// While armed, allocations of a size in this range fail: the shard's copy
/// of the 2 MiB name, but neither the small bookkeeping nor the delta's own
/// arrays, which hold the 8 MiB padding name too.
const REFUSED: std::ops::Range<usize> = (1 << 20)..(4 << 20);
const NAME_LEN: usize = 2 << 20;
const PADDING_LEN: usize = 8 << 20;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

struct Failing;

// SAFETY: forwards to `System`, or returns null, which `GlobalAlloc` allows.
unsafe impl GlobalAlloc for Failing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if REFUSED.contains(&layout.size()) && ARMED.try_with(Cell::get).unwrap_or(false) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Failing = Failing;

/// The lengths of the names of `shard`'s entries, sorted; frees them.
///
/// # Safety
///
/// `shard` is a live shard.
unsafe fn entry_lengths(shard: *mut InternedDataShard) -> Vec<usize> {
    let (mut ids, mut names, mut count) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
    // SAFETY: `shard` is live; the out pointers are locals.
    let status =
        unsafe { nrt_interned_string_db_get_entries(shard, &mut ids, &mut names, &mut count) };
    assert_eq!(status, NRT_STATUS::NRT_SUCCESS);
    let mut lengths: Vec<usize> = (0..count)
        .map(|i| {
            // SAFETY: `get_entries` wrote `count` valid C strings.
            let name = unsafe { std::ffi::CStr::from_ptr(*names.add(i)) };
            name.to_bytes().len()
        })
        .collect();
    lengths.sort_unstable();
    // SAFETY: from `get_entries` with this count, freed once.
    unsafe { nrt_interned_string_db_free_entries(ids, names, count) };
    lengths
}

#[test]
fn a_refused_delta_is_delivered_again() {
    let db = nrt_interned_string_db_create(1, 0);
    assert!(!db.is_null());
    let cursor = nrt_interned_string_db_cursor_create();
    let name = CString::new("n".repeat(NAME_LEN)).unwrap();
    let padding = CString::new("p".repeat(PADDING_LEN)).unwrap();
    // SAFETY: `db` and `cursor` are live until freed at the end, used by
    // this thread only; the strings are valid C strings; the out pointers
    // are locals.
    unsafe {
        let mut id = 0;
        for s in [&name, &padding] {
            let status = nrt_interned_string_db_intern(db, 0, s.as_ptr(), &mut id);
            assert_eq!(status, NRT_STATUS::NRT_SUCCESS);
        }

        let mut shard = std::ptr::null_mut();
        ARMED.with(|a| a.set(true));
        let refused = nrt_interned_string_db_delta(db, cursor, &mut shard);
        ARMED.with(|a| a.set(false));
        assert_eq!(refused, NRT_STATUS::NRT_RESOURCE);
        assert!(shard.is_null(), "no shard on a failure");

        // The same entries, again: nothing was lost.
        let status = nrt_interned_string_db_delta(db, cursor, &mut shard);
        assert_eq!(status, NRT_STATUS::NRT_SUCCESS);
        assert_eq!(entry_lengths(shard), [NAME_LEN, PADDING_LEN]);
        nrt_interned_string_db_shard_free(shard);

        // And delivered once.
        let mut shard = std::ptr::null_mut();
        let status = nrt_interned_string_db_delta(db, cursor, &mut shard);
        assert_eq!(status, NRT_STATUS::NRT_SUCCESS);
        assert_eq!(entry_lengths(shard), [] as [usize; 0]);
        nrt_interned_string_db_shard_free(shard);

        nrt_interned_string_db_cursor_free(cursor);
        nrt_interned_string_db_destroy(db);
    }
}
