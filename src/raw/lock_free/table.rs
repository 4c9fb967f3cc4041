//! The lock-free id → entry table: open addressing with linear probing over
//! slots that are atomic entry pointers, grown by chaining a table twice the
//! size and migrating into it (the Cliff Click / `papaya` scheme).
//!
//! A slot is null (free), an entry pointer (set once by compare-and-swap),
//! or *frozen* (tag [`FROZEN`]): a frozen null says "look in the next
//! table", a frozen entry is being or has been copied there and still
//! answers lookups. An insert that finds the table crowded publishes the
//! next table; from then on inserters freeze the free slot that ends their
//! probe sequence instead of filling it and go on to the next table, and
//! each insert that meets a table with a next one first migrates a chunk of
//! it (cooperative growth). Once every slot of the root table is migrated,
//! the root moves to the next table.
//!
//! Nothing here is freed while the table is shared: a table that is no
//! longer the root stays in the chain until `clear` or drop (exclusive
//! access), so readers never hold a pointer to freed memory. Why not an
//! epoch scheme: `docs/history.md`.

use core::hash::BuildHasher;
use core::ptr::{self, NonNull};

use super::entry::{EntryRef, Header};
use super::order::{atomic_nulls, GetMutOrLoad};
use crate::raw::alloc::{try_box, AllocError};
use crate::raw::sizes::{Seeds, CHUNK, MIN_SLOTS};
use crate::sync::{spin_loop, AtomicPtr, AtomicUsize, Ordering};

/// The tag of a frozen slot.
const FROZEN: usize = 0b1;

/// A frozen free slot.
#[inline]
fn frozen_null() -> *mut Header {
    ptr::without_provenance_mut(FROZEN)
}

/// A slot's value. Acquire: pairs with the release that placed or froze it:
/// an entry is complete, a frozen slot's next table published.
#[inline]
fn load(slot: &AtomicPtr<Header>) -> *mut Header {
    slot.load(Ordering::Acquire)
}

/// Swings the free `slot` to `new` (an entry, or frozen); false if it is no
/// longer free.
#[inline]
fn fill(slot: &AtomicPtr<Header>, new: *mut Header) -> bool {
    slot.compare_exchange(
        ptr::null_mut(),
        new,
        // Release: publishes the entry, or (frozen) the next table to probes
        // that stop here.
        Ordering::Release,
        Ordering::Relaxed,
    )
    .is_ok()
}

/// One table of the chain.
struct Table {
    slots: Box<[AtomicPtr<Header>]>,
    /// The table twice the size this one migrates into, or null.
    next: AtomicPtr<Table>,
    /// Slots filled with an entry: the load factor's count (may overshoot
    /// by the number of racing inserts).
    used: AtomicUsize,
    /// Slots handed out to migrating threads, a chunk at a time.
    claimed: AtomicUsize,
    /// Slots frozen and copied.
    copied: AtomicUsize,
}

/// What probing one table for an id found.
enum Probe<'a> {
    Found(EntryRef<'a>),
    Absent,
    /// The probe sequence ended in a frozen slot: look in the next table.
    Moved,
}

/// What an insert did.
pub(crate) enum Placed<'a> {
    /// The entry was placed.
    Inserted,
    /// The table already holds this entry under the id.
    Found(EntryRef<'a>),
}

impl Table {
    fn try_new(slots: usize) -> Option<NonNull<Table>> {
        let table = try_box(Table {
            slots: atomic_nulls(slots)?,
            next: AtomicPtr::new(ptr::null_mut()),
            used: AtomicUsize::new(0),
            claimed: AtomicUsize::new(0),
            copied: AtomicUsize::new(0),
        })?;
        Some(NonNull::from(Box::leak(table)))
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The next table, if this one is growing.
    fn next(&self) -> Option<&Table> {
        // Acquire: pairs with the release in `grow`: the next table's empty
        // slots were written before.
        let next = self.next.load(Ordering::Acquire);
        // SAFETY: a published next table lives as long as this one (tables
        // are freed only with exclusive access to the chain).
        unsafe { next.as_ref() }
    }

    /// The next table, which a frozen slot promises.
    fn next_of_frozen(&self) -> &Table {
        self.next()
            .expect("a frozen slot was frozen after its next table was published")
    }

    /// The entry in `value`, a non-null, non-frozen-null slot value.
    #[inline]
    fn entry<'a>(&'a self, value: *mut Header) -> EntryRef<'a> {
        // SAFETY: slots hold pointers to entries made by `entry::alloc`,
        // placed by a release compare-and-swap after they were written
        // (directly, or by a copier that acquired them) and loaded here with
        // acquire; entries outlive the tables (`LockFreeShard`).
        unsafe { EntryRef::from_tagged(value) }
    }

    /// Probes this table for `id` (placed by `hash`), with acquire loads
    /// only.
    fn find(&self, id: u64, hash: u64) -> Probe<'_> {
        let mask = self.mask();
        let home = hash as usize & mask;
        for step in 0..=mask {
            let value = load(&self.slots[(home + step) & mask]);
            if value.is_null() {
                return Probe::Absent;
            }
            if value == frozen_null() {
                return Probe::Moved;
            }
            let entry = self.entry(value);
            if entry.id() == id {
                return Probe::Found(entry);
            }
        }
        // Full: an id stored since can only be in the next table.
        match self.next() {
            Some(_) => Probe::Moved,
            None => Probe::Absent,
        }
    }

    /// Whether one more entry would take this table past 3/4 full.
    fn crowded(&self) -> bool {
        (self.used.load(Ordering::Relaxed) + 1) * 4 > self.slots.len() * 3
    }

    /// Publishes the next table (twice the size) unless another thread did;
    /// `None` if it cannot be allocated.
    fn grow(&self) -> Option<&Table> {
        if let Some(next) = self.next() {
            return Some(next);
        }
        let fresh = Table::try_new(self.slots.len().checked_mul(2)?)?;
        let published = self.next.compare_exchange(
            ptr::null_mut(),
            fresh.as_ptr(),
            // Release: the fresh table's slots were written before.
            Ordering::Release,
            Ordering::Relaxed,
        );
        if published.is_err() {
            crate::contention::record_cas_retry();
            // SAFETY: `fresh` was never published: this thread owns it.
            drop(unsafe { Box::from_raw(fresh.as_ptr()) });
        }
        self.next()
    }
}

/// The chain of tables: the oldest (kept by `clear`), and the root, where
/// operations start (every table before it is wholly migrated).
pub(crate) struct Tables {
    first: NonNull<Table>,
    root: AtomicPtr<Table>,
    seeds: Seeds,
}

// SAFETY: the tables are shared through atomics only, under the protocol
// above, and freed only with exclusive access (`clear`, drop).
unsafe impl Send for Tables {}
// SAFETY: as above.
unsafe impl Sync for Tables {}

impl Tables {
    /// A chain of one table with room for `capacity` entries (at 3/4 load);
    /// `None` if it cannot be allocated.
    pub(crate) fn try_new(capacity: usize) -> Option<Tables> {
        let slots = capacity
            .checked_mul(4)?
            .div_ceil(3)
            .checked_next_power_of_two()?
            .max(MIN_SLOTS);
        let first = Table::try_new(slots)?;
        Some(Tables {
            first,
            root: AtomicPtr::new(first.as_ptr()),
            seeds: Seeds::default(),
        })
    }

    fn root(&self) -> (*mut Table, &Table) {
        // Acquire: pairs with the release in `advance_root`: everything
        // copied into the new root was placed before.
        let root = self.root.load(Ordering::Acquire);
        // SAFETY: the root is a table of the chain, freed only with
        // exclusive access.
        (root, unsafe { &*root })
    }

    /// The entry stored under `id`, with acquire loads only.
    pub(crate) fn find(&self, id: u64) -> Option<EntryRef<'_>> {
        let hash = self.seeds.hash_one(id);
        let mut table = self.root().1;
        loop {
            match table.find(id, hash) {
                Probe::Found(entry) => return Some(entry),
                Probe::Absent => return None,
                Probe::Moved => table = table.next_of_frozen(),
            }
        }
    }

    /// Places `entry` (which lives as long as the chain) under its id, or
    /// finds the entry stored under it.
    pub(crate) fn insert(&self, entry: EntryRef<'_>) -> Result<Placed<'_>, AllocError> {
        self.insert_from(self.root().1, entry)
    }

    fn insert_from<'a>(
        &'a self,
        mut table: &'a Table,
        entry: EntryRef<'_>,
    ) -> Result<Placed<'a>, AllocError> {
        let id = entry.id();
        let hash = self.seeds.hash_one(id);
        'tables: loop {
            if let Some(next) = table.next() {
                self.migrate_chunk(table, next);
            }
            let mask = table.mask();
            let home = hash as usize & mask;
            let mut step = 0;
            while step <= mask {
                let slot = &table.slots[(home + step) & mask];
                let value = load(slot);
                if value.is_null() {
                    // The end of the probe sequence: fill it, or, if the
                    // table is growing, freeze it (no insert of this id can
                    // then complete here) and go on to the next table.
                    let next = match table.next() {
                        None if table.crowded() => table.grow(),
                        next => next,
                    };
                    let new = match next {
                        Some(_) => frozen_null(),
                        None => entry.as_ptr(),
                    };
                    let placed = fill(slot, new);
                    match (placed, next) {
                        (true, Some(next)) => {
                            table = self.leave(table, next);
                            continue 'tables;
                        }
                        (true, None) => {
                            table.used.fetch_add(1, Ordering::Relaxed);
                            return Ok(Placed::Inserted);
                        }
                        (false, _) => {
                            // Re-read the slot: another entry, or frozen.
                            crate::contention::record_cas_retry();
                            spin_loop();
                            continue;
                        }
                    }
                }
                if value == frozen_null() {
                    table = self.leave(table, table.next_of_frozen());
                    continue 'tables;
                }
                let stored = table.entry(value);
                if stored.id() == id {
                    return Ok(Placed::Found(stored));
                }
                step += 1;
            }
            // Every slot holds another id.
            table = self.leave(table, table.grow().ok_or(AllocError)?);
        }
    }

    /// Goes on from a growing `table` to `next`, migrating a chunk of
    /// `table` first (every insert that meets a growing table helps).
    fn leave<'a>(&self, table: &'a Table, next: &'a Table) -> &'a Table {
        self.migrate_chunk(table, next);
        next
    }

    /// Migrates one chunk of `table` into `next`, and moves the root on if
    /// that finished the root's migration.
    fn migrate_chunk(&self, table: &Table, next: &Table) {
        let len = table.slots.len();
        // Relaxed: only hands out slot ranges; each slot's freezing is its
        // own compare-and-swap.
        if table.claimed.load(Ordering::Relaxed) >= len {
            return;
        }
        let start = table.claimed.fetch_add(CHUNK, Ordering::Relaxed);
        if start >= len {
            return;
        }
        let mut done = 0;
        for slot in &table.slots[start..len.min(start + CHUNK)] {
            done += usize::from(self.freeze_and_copy(slot, next));
        }
        // Release: the copies were placed before (`advance_root` acquires).
        // A copy that failed for lack of memory is not counted: the table
        // then stays in the chain, still answering for that entry.
        if table.copied.fetch_add(done, Ordering::Release) + done == len {
            self.advance_root();
        }
    }

    /// Freezes one slot of a growing table, copying its entry (if any) into
    /// `next`; false if the copy could not be allocated room.
    fn freeze_and_copy(&self, slot: &AtomicPtr<Header>, next: &Table) -> bool {
        let mut value = load(slot);
        loop {
            if value.addr() & FROZEN != 0 {
                // Only free slots are frozen by others (inserters).
                return true;
            }
            if value.is_null() {
                if fill(slot, frozen_null()) {
                    return true;
                }
            } else if slot
                .compare_exchange(
                    value,
                    value.map_addr(|a| a | FROZEN),
                    // Relaxed: a read-modify-write, so it continues the
                    // release sequence of the entry's placement, which a
                    // probe that acquires the frozen value synchronises
                    // with; it publishes nothing else (a probe reaches the
                    // next table through `next`, acquired).
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                break;
            }
            // Only a free slot changes under us (filled, or frozen by an
            // inserter): reload it with acquire, since a new entry must be
            // complete.
            crate::contention::record_cas_retry();
            spin_loop();
            value = load(slot);
        }
        // The entry now answers lookups here (frozen) and, once copied, in
        // `next`; nobody else copies it (only this thread froze it).
        let entry = next.entry(value);
        match self.insert_from(next, entry) {
            Ok(Placed::Inserted) => true,
            Ok(Placed::Found(stored)) => {
                debug_assert_eq!(stored.as_ptr(), entry.as_ptr(), "an id in two entries");
                true
            }
            Err(AllocError) => false,
        }
    }

    /// Moves the root past every wholly migrated table.
    fn advance_root(&self) {
        loop {
            let (root, table) = self.root();
            let Some(next) = table.next() else { return };
            // Acquire: pairs with the release of each chunk's count: every
            // copy into `next` happened before.
            if table.copied.load(Ordering::Acquire) != table.slots.len() {
                return;
            }
            let moved = self.root.compare_exchange(
                root,
                (next as *const Table).cast_mut(),
                // Release: publishes the copies (acquired above) to
                // operations that start at the new root.
                Ordering::Release,
                Ordering::Relaxed,
            );
            if moved.is_err() {
                crate::contention::record_cas_retry();
                spin_loop();
            }
        }
    }

    /// Empties the chain back to its first table, freeing the others (not
    /// the entries: the order array owns those).
    pub(crate) fn clear(&mut self) {
        // SAFETY: exclusive access; the first table lives until drop.
        let first = unsafe { self.first.as_mut() };
        let mut next = first.next.get_mut_or_load();
        while let Some(table) = NonNull::new(next) {
            // SAFETY: every table after the first was published once, by
            // `grow`, from a leaked box; exclusive access, freed once.
            let mut table = unsafe { Box::from_raw(table.as_ptr()) };
            next = table.next.get_mut_or_load();
        }
        for slot in first.slots.iter() {
            slot.store(ptr::null_mut(), Ordering::Relaxed);
        }
        first.next.store(ptr::null_mut(), Ordering::Relaxed);
        for counter in [&first.used, &first.claimed, &first.copied] {
            counter.store(0, Ordering::Relaxed);
        }
        self.root.store(self.first.as_ptr(), Ordering::Relaxed);
    }
}

impl Drop for Tables {
    fn drop(&mut self) {
        self.clear();
        // SAFETY: the first table came from a leaked box (`Table::try_new`)
        // and is freed once, here.
        drop(unsafe { Box::from_raw(self.first.as_ptr()) });
    }
}
