//! The reference's protocol over a choice of reader-writer lock: one lock
//! per NC around a `hashbrown` map of id → owned bytes, taken for write on
//! every intern (hit or miss) and for read to look up and to merge, under
//! the db's global `RwLock` taken for read across the whole-array merge.
//!
//! The protocol is written once ([`LockedShard`] over any [`NcLock`]); each
//! strategy names only its lock, so the benchmark compares lock
//! implementations and nothing else:
//!
//! * [`RwLockStrategy`]: `std::sync::RwLock`, the futex RwLock the
//!   reference describes (the compatibility mode);
//! * [`ShardedLockStrategy`]: crossbeam's `ShardedLock`, whose readers lock
//!   only their own shard of the lock;
//! * [`ParkingLotStrategy`]: `parking_lot::RwLock` (inline fast path,
//!   eventual fairness).

use core::ops::{Deref, DerefMut};

use super::admission::{check_cap, try_copy};
use super::id_keyed::{intern_by_id, Found, IdKeyedMap};
use super::shard::{
    ConflictSink, FastPath, Interned, Key, Refusal, Sealed, Shard, ShardConfig, ShardStats,
};
use super::Strategy;
use crate::sync;

/// A reader-writer lock that can guard one NC's [`LockedTable`]. Acquiring
/// tries first and counts a failed try in the thread's
/// [`contention`](crate::contention) counters; poisoning is recovered.
pub trait NcLock: Send + Sync + Sized + 'static {
    /// A read guard.
    type Read<'a>: Deref<Target = LockedTable>
    where
        Self: 'a;
    /// A write guard.
    type Write<'a>: DerefMut<Target = LockedTable>
    where
        Self: 'a;
    /// The lock around `table`.
    fn new(table: LockedTable) -> Self;
    /// Takes the lock for read.
    fn read(&self) -> Self::Read<'_>;
    /// Takes the lock for write.
    fn write(&self) -> Self::Write<'_>;
}

/// One NC's state under a lock.
#[derive(Debug)]
pub struct LockedTable {
    /// The reference's state byte (`2` = closed), read under the NC lock.
    open: bool,
    map: hashbrown::HashMap<u64, Box<[u8]>>,
    /// The ids in insertion order, for `walk`.
    order: Vec<u64>,
    bytes: usize,
    byte_cap: usize,
}

/// The compatibility strategy: the reference's per-NC futex RwLock protocol,
/// faithfully, including its write lock on every intern.
///
/// It is the reference protocol: `tests/it/differential.rs` compares every
/// other strategy against it, answer by answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct RwLockStrategy;

impl Strategy for RwLockStrategy {
    const NAME: &'static str = "rwlock";
    type Shard = LockedShard<sync::RwLock<LockedTable>>;
}

impl Sealed for RwLockStrategy {}

impl NcLock for sync::RwLock<LockedTable> {
    type Read<'a> = sync::RwLockReadGuard<'a, LockedTable>;
    type Write<'a> = sync::RwLockWriteGuard<'a, LockedTable>;
    fn new(table: LockedTable) -> Self {
        sync::RwLock::new(table)
    }
    fn read(&self) -> Self::Read<'_> {
        sync::read(self)
    }
    fn write(&self) -> Self::Write<'_> {
        sync::write(self)
    }
}

/// The reference protocol over crossbeam's `ShardedLock`: the textbook
/// reader-scalable RwLock. A reader locks only the shard of the lock its
/// thread maps to, so readers of one NC on different cores touch different
/// cache lines; a writer locks every shard. Every intern writes (the
/// reference protocol), so the readers this helps are lookups and merges.
#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
#[derive(Debug, Clone, Copy, Default)]
pub struct ShardedLockStrategy;

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl Strategy for ShardedLockStrategy {
    const NAME: &'static str = "sharded-lock";
    type Shard = LockedShard<sync::ShardedLock<LockedTable>>;
}

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl Sealed for ShardedLockStrategy {}

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl NcLock for sync::ShardedLock<LockedTable> {
    type Read<'a> = sync::ShardedLockReadGuard<'a, LockedTable>;
    type Write<'a> = sync::ShardedLockWriteGuard<'a, LockedTable>;
    fn new(table: LockedTable) -> Self {
        sync::ShardedLock::new(table)
    }
    fn read(&self) -> Self::Read<'_> {
        sync::acquire(
            || sync::ShardedLock::try_read(self),
            || sync::ShardedLock::read(self),
        )
    }
    fn write(&self) -> Self::Write<'_> {
        sync::acquire(
            || sync::ShardedLock::try_write(self),
            || sync::ShardedLock::write(self),
        )
    }
}

/// The reference protocol over `parking_lot::RwLock`: the same protocol as
/// [`RwLockStrategy`] on a different lock implementation (an inline fast
/// path, parking in a global table, eventual fairness).
#[cfg(all(feature = "parking-lot", not(interner_loom)))]
#[derive(Debug, Clone, Copy, Default)]
pub struct ParkingLotStrategy;

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl Strategy for ParkingLotStrategy {
    const NAME: &'static str = "parking-lot";
    type Shard = LockedShard<sync::ParkingLotRwLock<LockedTable>>;
}

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl Sealed for ParkingLotStrategy {}

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl NcLock for sync::ParkingLotRwLock<LockedTable> {
    type Read<'a> = sync::ParkingLotReadGuard<'a, LockedTable>;
    type Write<'a> = sync::ParkingLotWriteGuard<'a, LockedTable>;
    fn new(table: LockedTable) -> Self {
        sync::ParkingLotRwLock::new(table)
    }
    fn read(&self) -> Self::Read<'_> {
        sync::acquire_unpoisoned(
            || sync::ParkingLotRwLock::try_read(self),
            || sync::ParkingLotRwLock::read(self),
        )
    }
    fn write(&self) -> Self::Write<'_> {
        sync::acquire_unpoisoned(
            || sync::ParkingLotRwLock::try_write(self),
            || sync::ParkingLotRwLock::write(self),
        )
    }
}

impl IdKeyedMap for LockedTable {
    fn check_open(&self) -> Result<(), Refusal> {
        if self.open {
            Ok(())
        } else {
            Err(Refusal::Closed)
        }
    }

    fn get<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.map.get(&id).map(|stored| f(stored))
    }

    /// Never races: the caller holds the write lock.
    fn insert<R>(&mut self, id: u64, bytes: &[u8], _found: impl FnOnce(&[u8]) -> R) -> Found<R> {
        check_cap(self.bytes, self.byte_cap, bytes.len())?;
        // Allocate before touching the map, and fallibly, so that running out
        // of memory is an error that leaves the table as it was.
        let owned = try_copy(bytes)?;
        self.map.try_reserve(1).map_err(|_| Refusal::OutOfMemory)?;
        self.order
            .try_reserve(1)
            .map_err(|_| Refusal::OutOfMemory)?;
        self.map.insert(id, owned);
        self.order.push(id);
        self.bytes += bytes.len();
        Ok(None)
    }
}

/// One NC's shard under a locked strategy.
#[derive(Debug)]
pub struct LockedShard<L> {
    inner: L,
}

impl<L: NcLock> FastPath for LockedShard<L> {}

impl<L: NcLock> Shard for LockedShard<L> {
    const GLOBAL_MERGE_LOCK: bool = true;
    type ContextAlign = ();

    fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        let mut map = hashbrown::HashMap::new();
        map.try_reserve(config.initial_capacity)
            .map_err(|_| Refusal::OutOfMemory)?;
        Ok(LockedShard {
            inner: L::new(LockedTable {
                open: true,
                map,
                order: Vec::new(),
                bytes: 0,
                byte_cap: config.byte_cap,
            }),
        })
    }

    fn intern(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned {
        // The id first, outside the lock; then the write lock, hit or miss.
        let id = key.id()?;
        intern_by_id(
            &mut *self.inner.write(),
            Key::with_id(key.bytes, id, key.source()),
            conflicts,
        )
    }

    fn resolve<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.inner.read().map.get(&id).map(|b| f(b))
    }

    fn walk(&self, from: usize, mut f: impl FnMut(u64, &[u8])) -> Option<usize> {
        let table = self.inner.read();
        if !table.open {
            return None;
        }
        for id in table.order.get(from..).unwrap_or_default() {
            f(*id, &table.map[id]);
        }
        Some(table.order.len())
    }

    fn set_open(&self, open: bool) {
        self.inner.write().open = open;
    }

    fn is_open(&self) -> bool {
        self.inner.read().open
    }

    fn stats(&self) -> ShardStats {
        let table = self.inner.read();
        ShardStats {
            entries: table.map.len(),
            bytes: table.bytes,
        }
    }
}
