//! The binary's one global allocator (a binary has only one): `System`,
//! watched per thread for the modules that count or refuse allocations.
//! Each watch is off unless a test turns it on, on its own thread, so every
//! other test allocates as from `System`:
//!
//! - `memory`: the live bytes and the allocations of the thread that holds
//!   the counting turn ([`COUNTED`], into [`COUNTED_LIVE`] and
//!   [`COUNTED_ALLOCATIONS`]);
//! - `oom`: allocations of [`ARMED_REFUSES_FROM`] bytes or more fail while
//!   the thread is [`ARMED`]; every thread's live bytes ([`THREAD_LIVE`]);
//! - `sparse_files`: the largest allocation a [`WATCHED`] thread asks for
//!   ([`LARGEST`]), and the size from which they fail
//!   ([`WATCHED_REFUSED_FROM`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

/// Live bytes allocated by counted threads (`memory`).
pub(crate) static COUNTED_LIVE: AtomicIsize = AtomicIsize::new(0);
/// Allocations made by counted threads (`memory`).
pub(crate) static COUNTED_ALLOCATIONS: AtomicIsize = AtomicIsize::new(0);

/// While armed (`oom`), allocations at least this large fail: the string's
/// copy, never the small bookkeeping a failure path may need.
pub(crate) const ARMED_REFUSES_FROM: usize = 1 << 20;

// `const`, with no destructor, so reading them never allocates.
thread_local! {
    /// Whether this thread's allocations are counted (`memory`).
    pub(crate) static COUNTED: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's large allocations fail (`oom`).
    pub(crate) static ARMED: Cell<bool> = const { Cell::new(false) };
    /// Bytes this thread allocated and has not freed (`oom`).
    pub(crate) static THREAD_LIVE: Cell<isize> = const { Cell::new(0) };
    /// Whether this thread's allocations are watched (`sparse_files`).
    pub(crate) static WATCHED: Cell<bool> = const { Cell::new(false) };
    /// The largest allocation this thread asked for while watched.
    pub(crate) static LARGEST: Cell<usize> = const { Cell::new(0) };
    /// While watched, allocations from this size fail.
    pub(crate) static WATCHED_REFUSED_FROM: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn counted() -> bool {
    COUNTED.try_with(Cell::get).unwrap_or(false)
}

/// Adds `bytes` to this thread's live count.
fn count_thread_live(bytes: isize) {
    let _ = THREAD_LIVE.try_with(|live| live.set(live.get() + bytes));
}

/// Whether an allocation of `size` bytes on this thread must fail.
fn refused(size: usize) -> bool {
    if WATCHED.try_with(Cell::get).unwrap_or(false) {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        if size
            >= WATCHED_REFUSED_FROM
                .try_with(Cell::get)
                .unwrap_or(usize::MAX)
        {
            return true;
        }
    }
    size >= ARMED_REFUSES_FROM && ARMED.try_with(Cell::get).unwrap_or(false)
}

struct Watching;

// SAFETY: forwards to `System`, or returns null, which `GlobalAlloc` allows;
// it only counts.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        if counted() {
            COUNTED_LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            COUNTED_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count_thread_live(layout.size() as isize);
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counted() {
            COUNTED_LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        count_thread_live(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;
