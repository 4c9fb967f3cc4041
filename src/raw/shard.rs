//! A lock-free, grow-only index of id → bytes over a `bumpalo` arena.
//!
//! # Layout
//!
//! Each entry is one arena allocation: a [`Header`] (`id`, `len`) followed
//! directly by the bytes, so a hit reads one cache line for the header and
//! the first bytes. The index is an open-addressing table (linear probing,
//! load factor at most 1/2) of [`Slot`]s, each a `tag` (the id plus one, so
//! that 0 means empty) and a pointer to the entry. Entries are immutable once
//! published and are never removed.
//!
//! # Protocol
//!
//! * Writers hold the shard's writer lock. An insert writes the entry into the
//!   arena, stores its pointer into an empty slot (relaxed), then stores the
//!   slot's tag with **release**.
//! * Readers load the table pointer with **acquire**, probe, load a tag with
//!   **acquire**, and only then follow the entry pointer. The acquire on the
//!   tag synchronises with the release that published it, so the pointer and
//!   every byte of the entry are visible. Readers never store.
//! * Growth (under the writer lock) fills a new table with twice the slots,
//!   then publishes it with a **release** store of the table pointer. The old
//!   table is retired, not freed: a reader still probing it sees a table that
//!   no longer changes, so it may miss an entry inserted after the growth (a
//!   false miss, which the miss path re-checks under the lock) but never sees
//!   a wrong one.
//! * Retired tables and the arena are freed only through `&mut self`
//!   (`clear`, `drop`), when no reader can exist. This is what makes a plain
//!   `&'a RawShard` enough to hand out `&'a [u8]` entries.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr::{self, NonNull};

use bumpalo::Bump;
use crossbeam_utils::CachePadded;

use crate::sync::{
    self, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering,
};

/// An entry's fixed part; the bytes follow it in the same allocation.
#[repr(C)]
struct Header {
    id: u64,
    len: usize,
}

const HEADER_SIZE: usize = size_of::<Header>();

/// The tag of an empty slot.
const EMPTY: u64 = 0;

/// The smallest table: 8 slots, so probing never needs a shift of 64.
const MIN_SLOTS: usize = 8;

/// A slot's tag: the id plus one, never [`EMPTY`]. Only `u64::MAX` and `0`
/// share a tag; the header's id, compared after a tag match, tells them apart.
#[inline]
fn tag_of(id: u64) -> u64 {
    match id.wrapping_add(1) {
        EMPTY => 1,
        tag => tag,
    }
}

struct Slot {
    tag: AtomicU64,
    entry: AtomicPtr<Header>,
}

struct Table {
    slots: Box<[Slot]>,
    /// `64 - log2(slots.len())`: the start slot is the top bits of a
    /// Fibonacci hash of the id, which spreads even sequential ids.
    shift: u32,
}

impl Table {
    /// A table of `slots` empty slots (a power of two, at least
    /// [`MIN_SLOTS`]), or `None` if the allocation fails.
    fn new(slots: usize) -> Option<Box<Table>> {
        debug_assert!(slots.is_power_of_two() && slots >= MIN_SLOTS);
        let mut v = Vec::new();
        v.try_reserve_exact(slots).ok()?;
        v.extend((0..slots).map(|_| Slot {
            tag: AtomicU64::new(EMPTY),
            entry: AtomicPtr::new(ptr::null_mut()),
        }));
        Some(Box::new(Table {
            slots: v.into_boxed_slice(),
            shift: 64 - slots.trailing_zeros(),
        }))
    }

    #[inline]
    fn start(&self, id: u64) -> usize {
        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The entry stored under `id`, probing with acquire loads only.
    #[inline]
    fn find(&self, id: u64) -> Option<NonNull<Header>> {
        let want = tag_of(id);
        let mask = self.mask();
        let mut at = self.start(id);
        // Terminates: the load factor is at most 1/2, so an empty slot exists.
        loop {
            let slot = &self.slots[at];
            let tag = slot.tag.load(Ordering::Acquire);
            if tag == EMPTY {
                return None;
            }
            if tag == want {
                let header = slot.entry.load(Ordering::Acquire);
                // SAFETY: the tag is published (release) after the entry
                // pointer and the entry's contents, and we acquired it, so
                // `header` is the non-null pointer to a fully written entry
                // that lives as long as the shard (see the module docs).
                if unsafe { (*header).id } == id {
                    return NonNull::new(header);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Stores a published entry into the first empty slot on `id`'s probe
    /// path. Only the writer (holding the lock) calls this, and only for an
    /// id the table does not hold and when an empty slot remains.
    fn place(&self, id: u64, header: NonNull<Header>) {
        let mask = self.mask();
        let mut at = self.start(id);
        while self.slots[at].tag.load(Ordering::Relaxed) != EMPTY {
            at = (at + 1) & mask;
        }
        let slot = &self.slots[at];
        slot.entry.store(header.as_ptr(), Ordering::Relaxed);
        // Publishes the pointer and the entry behind it (see `find`).
        slot.tag.store(tag_of(id), Ordering::Release);
    }
}

/// A reference to a published entry, valid as long as the shard is borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'a> {
    header: NonNull<Header>,
    _shard: PhantomData<&'a RawShard>,
}

impl<'a> Entry<'a> {
    /// The id the entry is stored under.
    #[inline]
    pub(crate) fn id(self) -> u64 {
        // SAFETY: `header` points to a published, immutable header that
        // lives as long as the shard borrow `'a` (module docs).
        unsafe { (*self.header.as_ptr()).id }
    }

    /// The entry's bytes.
    #[inline]
    pub(crate) fn bytes(self) -> &'a [u8] {
        let base = self.header.as_ptr();
        // SAFETY: the entry is one allocation of `HEADER_SIZE + len` bytes,
        // all written before it was published and never written again, and
        // it outlives `'a`. The pointer to the bytes is derived from the raw
        // allocation pointer, not from a reference to the header, so it
        // keeps the provenance of the whole allocation.
        unsafe {
            let len = (*base).len;
            core::slice::from_raw_parts(base.cast::<u8>().add(HEADER_SIZE), len)
        }
    }
}

/// What every hit reads: on its own cache line, which misses never write
/// except to grow or to open/close.
struct Hot {
    table: AtomicPtr<Table>,
    open: AtomicBool,
}

/// What misses write: the writer lock and the counters, on a cache line of
/// their own so that taking the lock does not invalidate [`Hot`].
struct Cold {
    writer: Mutex<Writer>,
    entries: AtomicUsize,
    bytes: AtomicUsize,
}

/// A table replaced by growth. Readers may still be probing it, so it is
/// kept as a raw pointer (a `Box` would assert unique access, which readers
/// contradict) and freed only when the shard is cleared or dropped.
struct RetiredTable(NonNull<Table>);

// SAFETY: a retired table is only a block of atomics that no one writes any
// more; freeing it happens through `&mut RawShard`, from whichever thread
// owns the shard then.
unsafe impl Send for RetiredTable {}

impl Drop for RetiredTable {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Box::into_raw`, and a retired table
        // is dropped only through `&mut RawShard` (`clear`, `drop`), when no
        // reader can hold it.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

struct Writer {
    arena: Bump,
    /// Tables replaced by growth: kept until `clear`/`drop`, because readers
    /// may still be probing them.
    retired: Vec<RetiredTable>,
    entries: usize,
    bytes: usize,
}

/// One NC's lock-free shard: acquire-only lookups, inserts under a lock.
pub(crate) struct RawShard {
    hot: CachePadded<Hot>,
    cold: CachePadded<Cold>,
    initial_slots: usize,
}

impl RawShard {
    /// An empty, open shard sized to hold `capacity` entries before it grows.
    ///
    /// # Panics
    ///
    /// If the first table cannot be allocated (as any collection would).
    pub(crate) fn new(capacity: usize) -> Self {
        let initial_slots = capacity
            .saturating_mul(2)
            .checked_next_power_of_two()
            .unwrap_or(1 << (usize::BITS - 1))
            .max(MIN_SLOTS);
        let table = Table::new(initial_slots).expect("allocating a shard's first table");
        RawShard {
            hot: CachePadded::new(Hot {
                table: AtomicPtr::new(Box::into_raw(table)),
                open: AtomicBool::new(true),
            }),
            cold: CachePadded::new(Cold {
                writer: Mutex::new(Writer {
                    arena: Bump::new(),
                    retired: Vec::new(),
                    entries: 0,
                    bytes: 0,
                }),
                entries: AtomicUsize::new(0),
                bytes: AtomicUsize::new(0),
            }),
            initial_slots,
        }
    }

    #[inline]
    fn table(&self) -> &Table {
        // SAFETY: the pointer is never null (set in `new`, replaced only by a
        // live table in `grow` and `clear`), and a table is freed only
        // through `&mut self` (`clear`, `drop`), so it outlives `&self`.
        unsafe { &*self.hot.table.load(Ordering::Acquire) }
    }

    /// The entry stored under `id`. Lock-free: acquire loads only, no store.
    /// May miss an entry being inserted concurrently; never returns a wrong
    /// one.
    #[inline]
    pub(crate) fn find(&self, id: u64) -> Option<Entry<'_>> {
        self.table().find(id).map(|header| Entry {
            header,
            _shard: PhantomData,
        })
    }

    /// Whether the shard is open. Acquire: a reader that sees `false` after
    /// a [`WriteGuard::set_open`] sees everything before it.
    #[inline]
    pub(crate) fn is_open(&self) -> bool {
        self.hot.open.load(Ordering::Acquire)
    }

    /// Entries stored (exact when no insert is running).
    pub(crate) fn len(&self) -> usize {
        self.cold.entries.load(Ordering::Relaxed)
    }

    /// Bytes of string data stored (exact when no insert is running).
    pub(crate) fn bytes(&self) -> usize {
        self.cold.bytes.load(Ordering::Relaxed)
    }

    /// Calls `f` on every entry published when the walk reaches its slot.
    pub(crate) fn for_each(&self, mut f: impl FnMut(Entry<'_>)) {
        let table = self.table();
        for slot in table.slots.iter() {
            if slot.tag.load(Ordering::Acquire) != EMPTY {
                let header = slot.entry.load(Ordering::Acquire);
                // The acquire on the tag makes the pointer non-null (`find`).
                if let Some(header) = NonNull::new(header) {
                    f(Entry {
                        header,
                        _shard: PhantomData,
                    });
                }
            }
        }
    }

    /// Takes the writer lock (recovering it from poisoning: nothing under it
    /// can panic with the shard half-changed).
    pub(crate) fn write(&self) -> WriteGuard<'_> {
        WriteGuard {
            shard: self,
            writer: sync::lock(&self.cold.writer),
        }
    }

    /// Frees every entry and retired table; the shard is left empty and open.
    pub(crate) fn clear(&mut self) {
        let fresh = Table::new(self.initial_slots).expect("allocating a shard's first table");
        let old = self.hot.table.swap(Box::into_raw(fresh), Ordering::Relaxed);
        // SAFETY: `old` came from `Box::into_raw` and is no longer reachable;
        // `&mut self` means no reader holds it.
        drop(unsafe { Box::from_raw(old) });
        self.hot.open.store(true, Ordering::Relaxed);
        let mut writer = sync::lock(&self.cold.writer);
        // New containers rather than `clear`/`Bump::reset`, which keep their
        // capacity: clearing frees every byte.
        writer.retired = Vec::new();
        writer.arena = Bump::new();
        writer.entries = 0;
        writer.bytes = 0;
        self.cold.entries.store(0, Ordering::Relaxed);
        self.cold.bytes.store(0, Ordering::Relaxed);
    }
}

impl Drop for RawShard {
    fn drop(&mut self) {
        let table = self.hot.table.load(Ordering::Relaxed);
        // SAFETY: the current table came from `Box::into_raw` and is owned by
        // the shard alone; `&mut self` means no reader holds it. The arena
        // and retired tables are freed by their own drops.
        drop(unsafe { Box::from_raw(table) });
    }
}

/// Refused by [`WriteGuard::insert`]: the allocation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllocFailed;

/// The shard's writer lock, held: the only way to insert, grow, open or
/// close.
pub(crate) struct WriteGuard<'a> {
    shard: &'a RawShard,
    writer: MutexGuard<'a, Writer>,
}

impl<'a> WriteGuard<'a> {
    /// The entry stored under `id`, seen from the current table (no false
    /// miss: every insert happened under this lock).
    pub(crate) fn find(&self, id: u64) -> Option<Entry<'a>> {
        self.shard.find(id)
    }

    /// Bytes of string data stored.
    pub(crate) fn bytes(&self) -> usize {
        self.writer.bytes
    }

    /// Opens or closes the shard.
    pub(crate) fn set_open(&mut self, open: bool) {
        self.shard.hot.open.store(open, Ordering::Release);
    }

    /// Inserts `id → bytes`, which the shard must not hold (check with
    /// [`find`](Self::find) under this guard). On an allocation failure the
    /// shard is unchanged.
    pub(crate) fn insert(&mut self, id: u64, bytes: &[u8]) -> Result<(), AllocFailed> {
        debug_assert!(self.find(id).is_none());
        let table = self.shard.table();
        if (self.writer.entries + 1) * 2 > table.slots.len() {
            self.grow()?;
        }
        let layout = HEADER_SIZE
            .checked_add(bytes.len())
            .and_then(|size| Layout::from_size_align(size, align_of::<Header>()).ok())
            .ok_or(AllocFailed)?;
        let block = self
            .writer
            .arena
            .try_alloc_layout(layout)
            .map_err(|_| AllocFailed)?;
        let header = block.cast::<Header>();
        // SAFETY: `block` is a fresh allocation of `layout`: aligned for
        // `Header` and `HEADER_SIZE + len` bytes long, and nothing else refers
        // to it yet. The bytes are written through the allocation pointer
        // itself (see `Entry::bytes`).
        unsafe {
            header.as_ptr().write(Header {
                id,
                len: bytes.len(),
            });
            ptr::copy_nonoverlapping(bytes.as_ptr(), block.as_ptr().add(HEADER_SIZE), bytes.len());
        }
        self.shard.table().place(id, header);
        self.writer.entries += 1;
        self.writer.bytes += bytes.len();
        self.shard
            .cold
            .entries
            .store(self.writer.entries, Ordering::Relaxed);
        self.shard
            .cold
            .bytes
            .store(self.writer.bytes, Ordering::Relaxed);
        Ok(())
    }

    /// Replaces the table by one twice its size, without blocking readers.
    fn grow(&mut self) -> Result<(), AllocFailed> {
        let old_ptr = self.shard.hot.table.load(Ordering::Relaxed);
        // SAFETY: as in `RawShard::table`; we hold the writer lock, so this is
        // also the table every insert so far went into.
        let old = unsafe { &*old_ptr };
        let slots = old.slots.len().checked_mul(2).ok_or(AllocFailed)?;
        self.writer
            .retired
            .try_reserve(1)
            .map_err(|_| AllocFailed)?;
        let new = Table::new(slots).ok_or(AllocFailed)?;
        for slot in old.slots.iter() {
            let header = slot.entry.load(Ordering::Relaxed);
            if let Some(header) = NonNull::new(header) {
                // SAFETY: published by this writer earlier (we hold the lock).
                let id = unsafe { header.as_ref().id };
                new.place(id, header);
            }
        }
        // Publishes the filled table: a reader that acquires the pointer sees
        // every slot stored above.
        self.shard
            .hot
            .table
            .store(Box::into_raw(new), Ordering::Release);
        // Readers may still hold the old table: retire it, do not free it.
        if let Some(old) = NonNull::new(old_ptr) {
            self.writer.retired.push(RetiredTable(old));
        }
        Ok(())
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    #[test]
    fn insert_find_grow() {
        let shard = RawShard::new(0);
        for i in 0..1000u64 {
            let bytes = i.to_le_bytes();
            assert!(shard.find(i).is_none());
            shard
                .write()
                .insert(i, &bytes[..(i % 8 + 1) as usize])
                .unwrap();
            let entry = shard.find(i).unwrap();
            assert_eq!(entry.id(), i);
            assert_eq!(entry.bytes(), &bytes[..(i % 8 + 1) as usize]);
        }
        for i in 0..1000u64 {
            assert_eq!(shard.find(i).unwrap().bytes()[0], i as u8);
        }
        assert_eq!(shard.len(), 1000);
        let mut seen = 0;
        shard.for_each(|_| seen += 1);
        assert_eq!(seen, 1000);
    }

    #[test]
    fn ids_zero_and_max_share_a_tag_but_not_an_entry() {
        let shard = RawShard::new(4);
        shard.write().insert(0, b"zero").unwrap();
        assert!(shard.find(u64::MAX).is_none());
        shard.write().insert(u64::MAX, b"max").unwrap();
        assert_eq!(shard.find(0).unwrap().bytes(), b"zero");
        assert_eq!(shard.find(u64::MAX).unwrap().bytes(), b"max");
    }

    #[test]
    fn entries_outlive_growth_and_clear_resets() {
        let mut shard = RawShard::new(0);
        shard.write().insert(7, b"seven").unwrap();
        let early = shard.find(7).unwrap().bytes();
        for i in 100..200 {
            shard.write().insert(i, b"x").unwrap();
        }
        assert_eq!(early, b"seven", "growth retires tables and keeps entries");
        shard.clear();
        assert!(shard.find(7).is_none());
        assert_eq!((shard.len(), shard.bytes()), (0, 0));
        shard.write().insert(7, b"again").unwrap();
        assert_eq!(shard.find(7).unwrap().bytes(), b"again");
    }

    #[test]
    fn empty_and_large_entries() {
        let shard = RawShard::new(1);
        shard.write().insert(1, b"").unwrap();
        let big = vec![0xAB; 100_000];
        shard.write().insert(2, &big).unwrap();
        assert_eq!(shard.find(1).unwrap().bytes(), b"");
        assert_eq!(shard.find(2).unwrap().bytes(), &big[..]);
        assert_eq!(shard.bytes(), 100_000);
    }

    /// Small under Miri, which is slow.
    const N: u64 = if cfg!(miri) { 100 } else { 2000 };

    #[test]
    fn concurrent_readers_and_a_writer() {
        let shard = RawShard::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..N {
                    shard.write().insert(i, &i.to_le_bytes()).unwrap();
                }
            });
            for _ in 0..2 {
                s.spawn(|| {
                    for round in 0..3 {
                        for i in 0..N {
                            if let Some(e) = shard.find(i) {
                                assert_eq!(e.bytes(), &i.to_le_bytes(), "round {round}");
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(shard.len() as u64, N);
    }
}
