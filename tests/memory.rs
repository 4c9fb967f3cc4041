//! `drop` and `reset` free every byte the db allocated: a counting global
//! allocator checks live bytes against the baseline.
//!
//! Only threads that opt in are counted: the test harness's own thread
//! allocates concurrently (it registers the running test), which once showed
//! up as a 900-byte "leak" on a loaded machine. Everything the db does here
//! happens on the test's thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;

use interned_string_db::{
    ArcSwapStrategy, Config, DashMapStrategy, InternedStringDb, OptimisticStrategy, RwLockStrategy,
    Strategy,
};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

/// `LIVE` is one count for every counted thread: tests that read it take
/// turns.
static SERIAL: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread's allocations are counted. `const`, with no
    /// destructor, so reading it never allocates.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn counted() -> bool {
    COUNTED.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: forwards to `System`, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counted() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counted() {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

fn fill<S: Strategy>(db: &InternedStringDb<S>) {
    for i in 0..20_000 {
        db.intern(
            i % 16,
            &format!("model_{}/layer_{}/tensor_{i}", i % 3, i % 50),
        )
        .unwrap();
    }
    db.close_nc(3).unwrap();
}

fn frees_everything<S: Strategy>() {
    // Process-wide state a dependency allocates once and keeps (arc-swap's
    // per-thread debt node) is not the db's: allocate it before the baseline.
    {
        let warm: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(1));
        warm.intern(0, "warm-up").unwrap();
    }
    let baseline = live();
    {
        let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(16));
        fill(&db);
        assert!(
            live() - baseline > 20_000 * 30,
            "{}: the strings are stored",
            S::NAME
        );
    }
    assert_eq!(live(), baseline, "{}: drop leaked", S::NAME);

    let mut db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(16));
    let empty = live();
    fill(&db);
    db.reset();
    assert_eq!(live(), empty, "{}: reset kept memory", S::NAME);
    fill(&db);
    drop(db);
    assert_eq!(live(), baseline, "{}: drop after reset leaked", S::NAME);
}

#[test]
fn drop_and_reset_free_every_byte() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    COUNTED.with(|c| c.set(true));
    frees_everything::<RwLockStrategy>();
    frees_everything::<OptimisticStrategy>();
    frees_everything::<DashMapStrategy>();
    frees_everything::<ArcSwapStrategy>();
}

/// A snapshot holds its strings and 16 bytes an entry, nothing more, even
/// when every string is on two NCs (the duplicates are staged, then dropped).
fn snapshot_is_strings_and_16_bytes_an_entry<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(16));
    for i in 0..20_000 {
        let name = format!("model_{}/layer_{}/tensor_{i}", i % 3, i % 50);
        db.intern(i % 16, &name).unwrap();
        db.intern((i + 1) % 16, &name).unwrap();
    }
    let before = live();
    let snapshot = db.snapshot();
    let held = live() - before;
    assert_eq!(snapshot.len(), 20_000);
    assert!(snapshot.conflicts().is_empty());
    let bound = snapshot.string_bytes() + 16 * snapshot.len();
    assert!(
        held as usize <= bound,
        "{}: a snapshot holds {held} bytes, more than {bound}",
        S::NAME
    );
}

#[test]
fn snapshot_memory_is_bounded() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    COUNTED.with(|c| c.set(true));
    snapshot_is_strings_and_16_bytes_an_entry::<OptimisticStrategy>();
    snapshot_is_strings_and_16_bytes_an_entry::<RwLockStrategy>();
}
