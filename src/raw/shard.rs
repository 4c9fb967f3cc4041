//! A lock-free, grow-only store of entries (id, bytes) over a `bumpalo`
//! arena, with two lock-free indexes: by id, and by the bytes.
//!
//! # Layout
//!
//! Each entry is one arena allocation: a [`Header`] (`id`, `len`) followed
//! directly by the bytes. Two open-addressing tables (linear probing, load
//! factor at most 3/4) of one atomic pointer per slot index the entries:
//!
//! * **by id**, placed by the id: every entry; used to resolve ids, to find
//!   conflicts, and to walk the shard;
//! * **by bytes**, placed by a fast hash of the bytes (`foldhash`, seeded per
//!   shard, like the reference's per-shard `RandomState`): only entries whose
//!   id is the db's id of their bytes. This is the hit path: a hit returns the
//!   stored id without computing SipHash at all. Entries registered with a
//!   caller-supplied id are indexed by id only, so the by-bytes index can
//!   never return an id that is not the hash of the bytes.
//!
//! A slot is 8 bytes, 8 to a cache line. Where the address fits in 48 bits
//! (every x86-64 and AArch64 user-space heap in practice) the slot also
//! carries a 16-bit tag of the key's hash in its top bits, and bit 0 (free:
//! entries are 8-byte aligned) says so; a probe compares tags without
//! touching the entry. An address that does not fit is stored untagged and
//! every probe through it checks the entry instead: slower, never wrong.
//! Entries are immutable once published and are never removed.
//!
//! # Protocol
//!
//! * Writers hold the shard's writer lock. An insert writes the entry into the
//!   arena, then stores the (tagged) pointer into an empty slot of each index
//!   with **release**.
//! * Readers load a table pointer with **acquire**, probe, and load a slot
//!   with **acquire**; a non-null slot is a published entry. The acquire
//!   synchronises with the release that published it, so every byte of the
//!   entry is visible. Readers never store.
//! * Growth (under the writer lock) fills a new table with twice the slots,
//!   then publishes it with a **release** store of the table pointer. The old
//!   table is retired, not freed: a reader still probing it sees a table that
//!   no longer changes, so it may miss an entry inserted after the growth (a
//!   false miss, which the miss path re-checks under the lock) but never sees
//!   a wrong one.
//! * Retired tables and the arena are freed only through `&mut self`
//!   (`clear`, `drop`), when no reader can exist. This is what makes a plain
//!   `&'a RawShard` enough to hand out `&'a [u8]` entries.
//!
//! Pointer tags use the strict-provenance API (`map_addr`), so Miri checks
//! them like any other pointer.

use core::alloc::Layout;
use core::hash::BuildHasher;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr::{self, NonNull};

use bumpalo::Bump;
use crossbeam_utils::CachePadded;

use crate::sync::{self, AtomicBool, AtomicPtr, AtomicUsize, Mutex, MutexGuard, Ordering};

/// An entry's fixed part; the bytes follow it in the same allocation.
#[repr(C)]
struct Header {
    id: u64,
    len: usize,
}

const HEADER_SIZE: usize = size_of::<Header>();

/// The smallest table: 8 slots, so probing never needs a shift of 64.
const MIN_SLOTS: usize = 8;

/// Bits of a slot above the address: the tag lives there.
const TAG_SHIFT: u32 = 48;

/// Slot bit 0: the top bits hold a tag.
const TAGGED: usize = 1;

/// Whether this target has room for tags (64-bit pointers).
const CAN_TAG: bool = usize::BITS == 64;

/// The 16-bit tag of a key hash. For the id index the "hash" is the id
/// itself; folding all four quarters also separates sequential
/// caller-supplied ids.
#[inline]
fn tag_of(hash: u64) -> usize {
    (hash ^ (hash >> 16) ^ (hash >> 32) ^ (hash >> 48)) as u16 as usize
}

/// The slot word for `header`: tagged when the address leaves room.
#[inline]
fn pack(header: NonNull<Header>, hash: u64) -> *mut Header {
    let ptr = header.as_ptr();
    if CAN_TAG && (ptr.addr() as u64) >> TAG_SHIFT == 0 {
        ptr.map_addr(|addr| addr | (((tag_of(hash) as u64) << TAG_SHIFT) as usize) | TAGGED)
    } else {
        ptr
    }
}

/// Whether a non-null slot word may hold a key of hash `hash`: false only
/// when a tag rules it out.
#[inline]
fn may_hold(word: *mut Header, hash: u64) -> bool {
    let addr = word.addr();
    addr & TAGGED == 0 || ((addr as u64) >> TAG_SHIFT) as usize == tag_of(hash)
}

/// The entry pointer of a non-null slot word.
#[inline]
fn unpack(word: *mut Header) -> NonNull<Header> {
    let ptr = if word.addr() & TAGGED != 0 {
        word.map_addr(|addr| ((addr as u64) & ((1 << TAG_SHIFT) - 1)) as usize & !TAGGED)
    } else {
        word
    };
    // A slot word is never null once published, and untagging a non-null
    // pointer leaves its (non-zero, aligned) address.
    NonNull::new(ptr).expect("a published slot is not null")
}

/// The high 32 bits of a key hash's Fibonacci mix: a table of at most 2^32
/// slots places a key by these bits alone.
#[inline]
fn home_bits(hash: u64) -> u32 {
    (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32
}

struct Table {
    slots: Box<[AtomicPtr<Header>]>,
    /// `32 - log2(slots.len())`: the start slot is the top bits of
    /// [`home_bits`].
    shift: u32,
}

/// Beside each slot of an index's current table, its key's [`home_bits`], so
/// that growth re-places every slot without touching an entry or re-hashing
/// its bytes. Only the writer needs it, and only for the current table: it
/// lives under the writer lock, and a retired table carries none.
type Homes = Vec<u32>;

/// [`Homes`] for a table of `slots` slots, or `None` if the allocation fails.
fn new_homes(slots: usize) -> Option<Homes> {
    let mut homes = Vec::new();
    homes.try_reserve_exact(slots).ok()?;
    homes.resize(slots, 0);
    Some(homes)
}

impl Table {
    /// A table of `slots` empty slots (a power of two from [`MIN_SLOTS`] to
    /// 2^32), or `None` if the allocation fails.
    fn new(slots: usize) -> Option<Box<Table>> {
        debug_assert!(slots.is_power_of_two() && slots >= MIN_SLOTS);
        if slots.trailing_zeros() > 32 {
            return None;
        }
        let mut v = Vec::new();
        v.try_reserve_exact(slots).ok()?;
        v.extend((0..slots).map(|_| AtomicPtr::new(ptr::null_mut())));
        Some(Box::new(Table {
            slots: v.into_boxed_slice(),
            shift: 32 - slots.trailing_zeros(),
        }))
    }

    #[inline]
    fn start(&self, home: u32) -> usize {
        // `checked_shr`: a 2^32-slot table shifts by 0; never by 32.
        home.checked_shr(self.shift).unwrap_or(0) as usize
    }

    /// Whether `entries` keep the load factor at most 3/4.
    fn has_room_for(&self, entries: usize) -> bool {
        entries * 4 <= self.slots.len() * 3
    }

    /// The entry of key hash `hash` for which `is_key` holds, probing with
    /// acquire loads only.
    #[inline]
    fn find<'t>(&'t self, hash: u64, is_key: impl Fn(Entry<'t>) -> bool) -> Option<Entry<'t>> {
        let mask = self.slots.len() - 1;
        let mut at = self.start(home_bits(hash));
        // Terminates: the load factor is at most 3/4, so an empty slot exists.
        loop {
            let word = self.slots[at].load(Ordering::Acquire);
            if word.is_null() {
                return None;
            }
            if may_hold(word, hash) {
                let entry = Entry::published(word);
                if is_key(entry) {
                    return Some(entry);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Stores an entry into the first empty slot on `hash`'s probe path,
    /// noting its home bits in `homes` (this table's). Only the writer
    /// (holding the lock) calls this, only for a key the table does not
    /// hold, and only while the load factor allows.
    fn place(&self, hash: u64, header: NonNull<Header>, homes: &mut Homes) {
        self.place_word(home_bits(hash), pack(header, hash), homes);
    }

    /// [`place`](Self::place) for a slot word and its home bits.
    fn place_word(&self, home: u32, word: *mut Header, homes: &mut Homes) {
        let mask = self.slots.len() - 1;
        let mut at = self.start(home);
        while !self.slots[at].load(Ordering::Relaxed).is_null() {
            at = (at + 1) & mask;
        }
        homes[at] = home;
        // Publishes the entry behind the pointer (see `find`).
        self.slots[at].store(word, Ordering::Release);
    }

    /// Every published entry.
    fn entries(&self) -> impl Iterator<Item = Entry<'_>> + '_ {
        self.slots.iter().filter_map(|slot| {
            let word = slot.load(Ordering::Acquire);
            (!word.is_null()).then(|| Entry::published(word))
        })
    }
}

/// A reference to a published entry, valid as long as the shard is borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'a> {
    header: NonNull<Header>,
    _shard: PhantomData<&'a RawShard>,
}

impl<'a> Entry<'a> {
    /// The entry behind a non-null slot word of a table borrowed for `'a`.
    ///
    /// The only constructor, called only on words loaded from a slot with
    /// acquire (or by the writer, which published them): a non-null slot was
    /// published with release after its entry was fully written, so the
    /// entry is complete, and it is immutable and lives as long as the shard,
    /// which outlives any borrow of its tables. `id` and `bytes` rely on this.
    #[inline]
    fn published(word: *mut Header) -> Self {
        Entry {
            header: unpack(word),
            _shard: PhantomData,
        }
    }

    /// The id the entry is stored under.
    #[inline]
    pub(crate) fn id(self) -> u64 {
        // SAFETY: a complete, immutable, live entry (`published`). A raw
        // field read creates no reference to the whole header.
        unsafe { (*self.header.as_ptr()).id }
    }

    /// The entry's bytes.
    #[inline]
    pub(crate) fn bytes(self) -> &'a [u8] {
        let base = self.header.as_ptr();
        // SAFETY: the entry is one allocation of `HEADER_SIZE + len` bytes,
        // all written before it was published and never written again, and it
        // lives as long as the shard (`published`). The pointer to the bytes
        // is derived from the raw allocation pointer, not from a reference to
        // the header, so it keeps the provenance of the whole allocation.
        unsafe {
            let len = (*base).len;
            core::slice::from_raw_parts(base.cast::<u8>().add(HEADER_SIZE), len)
        }
    }
}

/// One index: a table pointer, swapped on growth.
struct Index {
    table: AtomicPtr<Table>,
}

impl Index {
    fn new(slots: usize) -> Index {
        let table = Table::new(slots).expect("allocating a shard's first table");
        Index {
            table: AtomicPtr::new(Box::into_raw(table)),
        }
    }

    #[inline]
    fn table(&self) -> &Table {
        // SAFETY: the pointer is never null (set in `new`, replaced only by a
        // live table in `grow` and `reset`), and a table is freed only
        // through `&mut RawShard` (`clear`, `drop`), so it outlives `&self`.
        unsafe { &*self.table.load(Ordering::Acquire) }
    }

    /// Replaces the table by an empty one of `slots` slots and frees the old
    /// one. Only through `&mut RawShard`, when no reader holds it.
    fn reset(&mut self, slots: usize) {
        let fresh = Table::new(slots).expect("allocating a shard's first table");
        let old = self.table.swap(Box::into_raw(fresh), Ordering::Relaxed);
        // SAFETY: `old` came from `Box::into_raw` and is no longer reachable;
        // `&mut` access means no reader holds it.
        drop(unsafe { Box::from_raw(old) });
    }

    /// Makes room for `entries`, growing (without blocking readers) into a
    /// table twice the size, whose home bits replace `homes`. Only the
    /// writer calls this.
    fn reserve(
        &self,
        entries: usize,
        homes: &mut Homes,
        retired: &mut Vec<RetiredTable>,
    ) -> Result<(), AllocFailed> {
        let old_ptr = self.table.load(Ordering::Relaxed);
        // SAFETY: as in `table`; the writer lock makes this the table every
        // insert so far went into.
        let old = unsafe { &*old_ptr };
        if old.has_room_for(entries) {
            return Ok(());
        }
        let slots = old.slots.len().checked_mul(2).ok_or(AllocFailed)?;
        retired.try_reserve(1).map_err(|_| AllocFailed)?;
        let new = Table::new(slots).ok_or(AllocFailed)?;
        let mut new_homes = new_homes(slots).ok_or(AllocFailed)?;
        // Slot words move as they are (the tag depends on the key only), to
        // the place their home bits give: no entry is read.
        for (slot, &home) in old.slots.iter().zip(homes.iter()) {
            let word = slot.load(Ordering::Relaxed);
            if !word.is_null() {
                new.place_word(home, word, &mut new_homes);
            }
        }
        *homes = new_homes;
        // Publishes the filled table: a reader that acquires the pointer sees
        // every slot stored above.
        self.table.store(Box::into_raw(new), Ordering::Release);
        // Readers may still hold the old table: retire it, do not free it.
        if let Some(old) = NonNull::new(old_ptr) {
            retired.push(RetiredTable(old));
        }
        Ok(())
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        let table = self.table.load(Ordering::Relaxed);
        // SAFETY: the current table came from `Box::into_raw` and is owned by
        // this index alone; dropping means no reader holds it.
        drop(unsafe { Box::from_raw(table) });
    }
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

/// The hasher placing entries in the by-bytes index: seeded per shard, like
/// the reference's per-shard `RandomState` (placement need not be the same
/// across processes; ids are). Loom models must be deterministic, so there
/// the seed is fixed.
#[cfg(not(interner_loom))]
type BytesHasher = foldhash::fast::RandomState;
#[cfg(interner_loom)]
type BytesHasher = foldhash::fast::FixedState;

/// What every hit reads: on its own cache line, which misses never write
/// except to grow or to open/close.
struct Hot {
    by_bytes: Index,
    by_id: Index,
    open: AtomicBool,
    hasher: BytesHasher,
}

impl Hot {
    #[inline]
    fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        self.hasher.hash_one(bytes)
    }
}

/// What misses write: the writer lock and the counters, on a cache line of
/// their own so that taking the lock does not invalidate [`Hot`]. Only the
/// lock holder stores to the counters, so under the lock a relaxed load is
/// exact; outside it, `len` and `bytes` read them without locking.
struct Cold {
    writer: Mutex<Writer>,
    entries: AtomicUsize,
    bytes: AtomicUsize,
}

struct Writer {
    arena: Bump,
    /// The home bits of the two indexes' current tables.
    by_bytes_homes: Homes,
    by_id_homes: Homes,
    /// Tables replaced by growth: kept until `clear`/`drop`, because readers
    /// may still be probing them.
    retired: Vec<RetiredTable>,
    /// Entries in the by-bytes index (the by-id index holds them all).
    bytes_indexed: usize,
    /// STOPGAP (see [`InsertionOrder`]).
    order: InsertionOrder,
}

/// STOPGAP until the rewrite of `src/raw/` provides a lock-free
/// [`RawShard::for_each_since`]: every entry, in insertion order, read and
/// written only under the writer lock.
struct InsertionOrder(Vec<NonNull<Header>>);

// SAFETY: the pointers are to published, immutable entries in the shard's
// arena, which outlives the list (both belong to the `Writer`); the list is
// only touched under the writer lock.
unsafe impl Send for InsertionOrder {}

impl Writer {
    /// A writer for two empty tables of `slots` slots.
    ///
    /// # Panics
    ///
    /// If the allocation fails (as any collection's would).
    fn new(slots: usize) -> Writer {
        Writer {
            arena: Bump::new(),
            by_bytes_homes: new_homes(slots).expect("allocating a shard's first table"),
            by_id_homes: new_homes(slots).expect("allocating a shard's first table"),
            retired: Vec::new(),
            bytes_indexed: 0,
            order: InsertionOrder(Vec::new()),
        }
    }
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
    /// If the first tables cannot be allocated (as any collection would).
    pub(crate) fn new(capacity: usize) -> Self {
        let initial_slots = capacity
            .saturating_mul(4)
            .div_ceil(3)
            .checked_next_power_of_two()
            .unwrap_or(1 << (usize::BITS - 1))
            .max(MIN_SLOTS);
        RawShard {
            hot: CachePadded::new(Hot {
                by_bytes: Index::new(initial_slots),
                by_id: Index::new(initial_slots),
                open: AtomicBool::new(true),
                hasher: BytesHasher::default(),
            }),
            cold: CachePadded::new(Cold {
                writer: Mutex::new(Writer::new(initial_slots)),
                entries: AtomicUsize::new(0),
                bytes: AtomicUsize::new(0),
            }),
            initial_slots,
        }
    }

    /// The entry stored under `id`. Lock-free: acquire loads only, no store.
    /// May miss an entry being inserted concurrently; never returns a wrong
    /// one.
    #[inline]
    pub(crate) fn find_by_id(&self, id: u64) -> Option<Entry<'_>> {
        self.hot.by_id.table().find(id, |entry| entry.id() == id)
    }

    /// The entry holding exactly `bytes` under the db's id of `bytes`, if it
    /// was interned so. Lock-free like [`find_by_id`](Self::find_by_id); the
    /// bytes are compared in full.
    #[inline]
    pub(crate) fn find_by_bytes(&self, bytes: &[u8]) -> Option<Entry<'_>> {
        let hash = self.hot.hash_bytes(bytes);
        self.hot
            .by_bytes
            .table()
            .find(hash, |entry| bytes_eq(entry.bytes(), bytes))
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
    #[allow(dead_code)] // STOPGAP: the db walks with `for_each_since` now
    pub(crate) fn for_each(&self, mut f: impl FnMut(Entry<'_>)) {
        self.hot.by_id.table().entries().for_each(&mut f);
    }

    /// STOPGAP (see [`InsertionOrder`]): calls `f` on every entry at or after
    /// position `from` in insertion order (from 0), under the writer lock,
    /// and returns the position after the last entry.
    pub(crate) fn for_each_since(&self, from: usize, mut f: impl FnMut(Entry<'_>)) -> usize {
        let writer = sync::lock(&self.cold.writer);
        let order = &writer.order.0;
        for &header in order.get(from..).unwrap_or_default() {
            // Pushed by an earlier holder of this lock after the entry was
            // written: `published`'s condition holds.
            f(Entry::published(header.as_ptr()));
        }
        order.len()
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
        self.hot.by_bytes.reset(self.initial_slots);
        self.hot.by_id.reset(self.initial_slots);
        self.hot.open.store(true, Ordering::Relaxed);
        // A new writer, not `Vec::clear`/`Bump::reset`, which keep their
        // capacity: clearing frees every byte.
        *sync::lock(&self.cold.writer) = Writer::new(self.initial_slots);
        self.cold.entries.store(0, Ordering::Relaxed);
        self.cold.bytes.store(0, Ordering::Relaxed);
    }
}

/// Byte equality, inlined: names are short (20 to 60 bytes), where a call to
/// `memcmp` costs more than the compare. Compares 8-byte words, the last one
/// overlapping the one before.
#[inline]
pub(crate) fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap());
    let mut at = 0;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    word(a, n - 8) == word(b, n - 8)
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
    pub(crate) fn find_by_id(&self, id: u64) -> Option<Entry<'a>> {
        self.shard.find_by_id(id)
    }

    /// Bytes of string data stored.
    pub(crate) fn bytes(&self) -> usize {
        self.shard.bytes()
    }

    /// Opens or closes the shard.
    pub(crate) fn set_open(&mut self, open: bool) {
        self.shard.hot.open.store(open, Ordering::Release);
    }

    /// Adds `entry`, whose id was checked to be the db's id of its bytes, to
    /// the by-bytes index, unless it is there already.
    pub(crate) fn index_by_bytes(&mut self, entry: Entry<'a>) -> Result<(), AllocFailed> {
        if self.shard.find_by_bytes(entry.bytes()).is_some() {
            return Ok(());
        }
        self.reserve_by_bytes()?;
        let hot = &self.shard.hot;
        let writer = &mut *self.writer;
        hot.by_bytes.table().place(
            hot.hash_bytes(entry.bytes()),
            entry.header,
            &mut writer.by_bytes_homes,
        );
        writer.bytes_indexed += 1;
        Ok(())
    }

    /// Makes room for one more entry in the by-bytes index.
    fn reserve_by_bytes(&mut self) -> Result<(), AllocFailed> {
        let writer = &mut *self.writer;
        self.shard.hot.by_bytes.reserve(
            writer.bytes_indexed + 1,
            &mut writer.by_bytes_homes,
            &mut writer.retired,
        )
    }

    /// Inserts `id → bytes`, which the shard must not hold under `id`
    /// (check with [`find_by_id`](Self::find_by_id) under this guard), and
    /// indexes it by its bytes if `id` is the db's id of `bytes`. On an
    /// allocation failure the shard is unchanged.
    pub(crate) fn insert(
        &mut self,
        id: u64,
        bytes: &[u8],
        id_is_hash: bool,
    ) -> Result<(), AllocFailed> {
        debug_assert!(self.find_by_id(id).is_none());
        let hot = &self.shard.hot;
        // Room in both indexes first, so that nothing below can fail after
        // the entry is published by id.
        let writer = &mut *self.writer;
        hot.by_id.reserve(
            self.shard.len() + 1,
            &mut writer.by_id_homes,
            &mut writer.retired,
        )?;
        if id_is_hash {
            self.reserve_by_bytes()?;
        }
        self.writer
            .order
            .0
            .try_reserve(1)
            .map_err(|_| AllocFailed)?;
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
        // itself (see `bytes_of_entry`).
        unsafe {
            header.as_ptr().write(Header {
                id,
                len: bytes.len(),
            });
            ptr::copy_nonoverlapping(bytes.as_ptr(), block.as_ptr().add(HEADER_SIZE), bytes.len());
        }
        let writer = &mut *self.writer;
        hot.by_id.table().place(id, header, &mut writer.by_id_homes);
        if id_is_hash {
            hot.by_bytes
                .table()
                .place(hot.hash_bytes(bytes), header, &mut writer.by_bytes_homes);
            writer.bytes_indexed += 1;
        }
        writer.order.0.push(header);
        // Under the lock: plain stores, no read-modify-write needed.
        let cold = &self.shard.cold;
        cold.entries.store(self.shard.len() + 1, Ordering::Relaxed);
        cold.bytes
            .store(self.shard.bytes() + bytes.len(), Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    /// Small under Miri, which is slow.
    const N: u64 = if cfg!(miri) { 100 } else { 2000 };

    /// Distinct for every `i`, of lengths 1 to 20.
    fn key(i: u64) -> Vec<u8> {
        format!("{i}{}", "x".repeat((i % 8) as usize)).into_bytes()
    }

    #[test]
    fn insert_find_grow() {
        let shard = RawShard::new(0);
        for i in 0..N {
            assert!(shard.find_by_id(i).is_none());
            shard.write().insert(i, &key(i), true).unwrap();
            let entry = shard.find_by_id(i).unwrap();
            assert_eq!(entry.id(), i);
            assert_eq!(entry.bytes(), &key(i)[..]);
            assert_eq!(shard.find_by_bytes(&key(i)).unwrap().id(), i);
        }
        for i in 0..N {
            assert_eq!(shard.find_by_id(i).unwrap().bytes(), &key(i)[..]);
            assert_eq!(shard.find_by_bytes(&key(i)).unwrap().id(), i);
        }
        assert_eq!(shard.len() as u64, N);
        let mut seen = 0;
        shard.for_each(|_| seen += 1);
        assert_eq!(seen, N);
    }

    #[test]
    fn for_each_since_walks_in_insertion_order() {
        let mut shard = RawShard::new(0);
        for i in (0..N).rev() {
            shard.write().insert(i, &key(i), i % 2 == 0).unwrap();
        }
        let mut seen = Vec::new();
        assert_eq!(shard.for_each_since(0, |e| seen.push(e.id())), N as usize);
        assert_eq!(seen, (0..N).rev().collect::<Vec<_>>());
        seen.clear();
        let from = N as usize - 3;
        assert_eq!(
            shard.for_each_since(from, |e| seen.push(e.id())),
            N as usize
        );
        assert_eq!(seen, [2, 1, 0]);
        assert_eq!(
            shard.for_each_since(N as usize + 5, |_| panic!()),
            N as usize
        );
        shard.clear();
        assert_eq!(shard.for_each_since(0, |_| panic!()), 0);
    }

    #[test]
    fn caller_ids_are_not_indexed_by_bytes_until_promoted() {
        let shard = RawShard::new(0);
        shard.write().insert(42, b"caller", false).unwrap();
        assert!(shard.find_by_bytes(b"caller").is_none());
        assert_eq!(shard.find_by_id(42).unwrap().bytes(), b"caller");
        let mut writer = shard.write();
        let entry = writer.find_by_id(42).unwrap();
        writer.index_by_bytes(entry).unwrap();
        writer.index_by_bytes(entry).unwrap(); // idempotent
        drop(writer);
        assert_eq!(shard.find_by_bytes(b"caller").unwrap().id(), 42);
        let mut count = 0;
        shard.for_each(|_| count += 1);
        assert_eq!(count, 1);
    }

    #[test]
    fn tags_round_trip_and_filter() {
        let shard = RawShard::new(0);
        shard.write().insert(0x1234, b"x", true).unwrap();
        let table = shard.hot.by_id.table();
        let word = table
            .slots
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .find(|w| !w.is_null())
            .unwrap();
        let header = unpack(word);
        assert_eq!(shard.find_by_id(0x1234).unwrap().header, header);
        if CAN_TAG && word.addr() & TAGGED != 0 {
            assert!(may_hold(word, 0x1234));
            assert!(!may_hold(word, 0x1235), "a different tag is filtered out");
        }
        // An untagged word is always checked through its entry.
        assert!(may_hold(header.as_ptr(), 0x9999));
    }

    #[test]
    fn ids_with_equal_tags_are_told_apart() {
        let shard = RawShard::new(0);
        // tag_of folds 16-bit quarters: these two share a tag.
        let (a, b) = (0x0001_0000u64, 0x0000_0001u64);
        assert_eq!(tag_of(a), tag_of(b));
        shard.write().insert(a, b"a", true).unwrap();
        assert!(shard.find_by_id(b).is_none());
        shard.write().insert(b, b"b", true).unwrap();
        assert_eq!(shard.find_by_id(a).unwrap().bytes(), b"a");
        assert_eq!(shard.find_by_id(b).unwrap().bytes(), b"b");
    }

    #[test]
    fn ids_zero_and_max() {
        let shard = RawShard::new(4);
        shard.write().insert(0, b"zero", false).unwrap();
        assert!(shard.find_by_id(u64::MAX).is_none());
        shard.write().insert(u64::MAX, b"max", false).unwrap();
        assert_eq!(shard.find_by_id(0).unwrap().bytes(), b"zero");
        assert_eq!(shard.find_by_id(u64::MAX).unwrap().bytes(), b"max");
    }

    #[test]
    fn entries_outlive_growth_and_clear_resets() {
        let mut shard = RawShard::new(0);
        shard.write().insert(7, b"seven", true).unwrap();
        let early = shard.find_by_id(7).unwrap().bytes();
        for i in 100..200 {
            shard.write().insert(i, &key(i), true).unwrap();
        }
        assert_eq!(early, b"seven", "growth retires tables and keeps entries");
        shard.clear();
        assert!(shard.find_by_id(7).is_none());
        assert!(shard.find_by_bytes(b"seven").is_none());
        assert_eq!((shard.len(), shard.bytes()), (0, 0));
        shard.write().insert(7, b"again", true).unwrap();
        assert_eq!(shard.find_by_id(7).unwrap().bytes(), b"again");
    }

    #[test]
    fn empty_and_large_entries() {
        let shard = RawShard::new(1);
        shard.write().insert(1, b"", true).unwrap();
        let big = vec![0xAB; 100_000];
        shard.write().insert(2, &big, true).unwrap();
        assert_eq!(shard.find_by_id(1).unwrap().bytes(), b"");
        assert_eq!(shard.find_by_bytes(b"").unwrap().id(), 1);
        assert_eq!(shard.find_by_bytes(&big).unwrap().id(), 2);
        assert_eq!(shard.bytes(), 100_000);
    }

    #[test]
    fn bytes_eq_agrees_with_slice_eq() {
        let base: Vec<u8> = (0..80u8).collect();
        for len in 0..=base.len() {
            let a = &base[..len];
            assert!(bytes_eq(a, a));
            for flip in 0..len {
                let mut b = a.to_vec();
                b[flip] ^= 0x40;
                assert!(!bytes_eq(a, &b), "len {len}, byte {flip}");
            }
            if len > 0 {
                assert!(!bytes_eq(a, &base[..len - 1]));
            }
        }
    }

    #[test]
    fn concurrent_readers_and_a_writer() {
        let shard = RawShard::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..N {
                    shard.write().insert(i, &i.to_le_bytes(), true).unwrap();
                }
            });
            for _ in 0..2 {
                s.spawn(|| {
                    for round in 0..3 {
                        for i in 0..N {
                            if let Some(e) = shard.find_by_id(i) {
                                assert_eq!(e.bytes(), &i.to_le_bytes(), "round {round}");
                            }
                            if let Some(e) = shard.find_by_bytes(&i.to_le_bytes()) {
                                assert_eq!(e.id(), i, "round {round}");
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(shard.len() as u64, N);
    }
}
